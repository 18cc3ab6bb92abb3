"""Every benchmark script still imports against the package: a renamed or removed name that a
benchmark imports at module level fails here, not the next time someone runs it. (The first
step of the smoke tests; running each on a tiny input is the next.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for folder in ("benchmarks", "tools") for p in (ROOT / folder).rglob("*.py")
                 if "results" not in p.parts and p.name != "__init__.py")
#: folders whose scripts need a client outside the README's install (``pip install -e
#: ".[dev,plot,interop]"``): pybatsim, installed by CI, is not on PyPI with its dependencies.
NEEDS = {"pybatsim_variants": "batsim"}


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_benchmark_imports(path, monkeypatch):
    for folder, module in NEEDS.items():
        if folder in path.parts:
            pytest.importorskip(module, reason=f"{path.name} drives {module} (pybatsim)")
    monkeypatch.syspath_prepend(str(path.parent))
    name = f"_benchmark_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    assert module.__doc__, f"{path.name} says what it measures in its docstring"
