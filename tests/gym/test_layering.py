"""The environments are a face of bbopt: they place burst buffer through the planner's public
API (``bbopt.planner.Planner``) and the EASY rule of the policies, never reaching the formal
models (``bbopt.models``) themselves."""

from __future__ import annotations

import ast
from pathlib import Path

import bbopt

GYM = Path(bbopt.__file__).parent / "gym"


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_environments_import_no_model():
    files = sorted(GYM.glob("*.py"))
    assert len(files) >= 5
    reaching = {f.name: sorted(m for m in _imports(f) if m.startswith("bbopt.models"))
                for f in files}
    assert {k: v for k, v in reaching.items() if v} == {}
    assert "bbopt.planner" in _imports(GYM / "episode.py")
