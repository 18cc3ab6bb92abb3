"""Where the benchmarks find the real traces: $BBOPT_DATA, else ../shared/data beside the repo."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def data_path(name: str) -> Path:
    for base in (os.environ.get("BBOPT_DATA"), ROOT.parent / "shared" / "data",
                 Path("/work/shared/data")):
        if base and (Path(base) / name).exists():
            return Path(base) / name
    sys.exit(f"{name} not found: set BBOPT_DATA to the folder that holds it")
