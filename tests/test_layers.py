"""The package's layering (``docs/layers.json``: its parts, the arrows that may exist between them
and those that must never exist), checked on the source with the standard library.

Every module of ``bbopt`` sits on exactly one part; every import from one part into another is
one of the allowed arrows, and none is a "never" (models import no solver; policies see a
ClusterState, never the engine; the planner knows no policy; the engine records and
``analysis`` reads the record, never the other way). Function-local imports count too, and so
do imports under ``TYPE_CHECKING``. Every module also imports on its own in a fresh interpreter,
so no import circle hides behind an import order.

The test tree mirrors the package (docs/testing.md, "Where tests live"): every test file
names the module it checks, except the cross-cutting folders and files listed once below.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bbopt"
LAYERS = json.loads((PACKAGE.parent / "docs" / "layers.json").read_text())
ARROWS = {(a[0], a[1]) for a in LAYERS["arrows"]}
#: Finer than the parts: (importer prefix, imported prefix, why the import must not exist)
NEVER_MODULES = (
    ("bbopt.topology", "bbopt.units", "the I/O tree reads no files"),
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.startswith("bbopt")}


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


MODULES = _modules()
IMPORTS = {name: _imports(path) for name, path in MODULES.items()}


def _owner(module: str) -> str | None:
    """The file that defines ``module`` (an imported name resolves to its module)."""
    while module and module not in MODULES:
        module = module.rpartition(".")[0]
    return module or None


def _part(module: str) -> str | None:
    """The part of ``docs/layers.json`` that ``module`` sits on (the longest matching entry)."""
    rel = str(MODULES[module].relative_to(PACKAGE.parent))
    best, length = None, -1
    for name, part in LAYERS["parts"].items():
        for entry in part["is"]:
            matches = rel == entry or entry.endswith("/") and rel.startswith(entry)
            if matches and len(entry) > length:
                best, length = name, len(entry)
    return best


def _part_arrows() -> dict[tuple[str, str], list[str]]:
    """Each arrow from one part into another that the code draws, with its imports."""
    out: dict[tuple[str, str], list[str]] = {}
    for m, imps in IMPORTS.items():
        for i in imps:
            o = _owner(i)
            if o in (None, "bbopt"):  # (the package itself: bbopt.__version__)
                continue
            a, b = _part(m), _part(o)
            if a != b:
                out.setdefault((a, b), []).append(f"{m} -> {o}")
    return out


PART_ARROWS = _part_arrows()


def test_every_module_sits_on_one_part():
    assert [m for m in MODULES if _part(m) is None] == []


def test_every_import_between_parts_is_an_allowed_arrow():
    drawn = {pair: sorted(set(imps)) for pair, imps in PART_ARROWS.items() if pair not in ARROWS}
    assert drawn == {}, "add the arrow to docs/layers.json, with why, or remove the import"


def test_no_arrow_is_both_allowed_and_never():
    assert ARROWS & {(n[0], n[1]) for n in LAYERS["never"]} == set()
    names = set(LAYERS["parts"])
    assert {p for a in ARROWS for p in a} <= names


@pytest.mark.parametrize("importer, imported, why", [tuple(n) for n in LAYERS["never"]])
def test_forbidden_arrows(importer, imported, why):
    assert PART_ARROWS.get((importer, imported), []) == [], why


@pytest.mark.parametrize("importer, imported, why", NEVER_MODULES)
def test_forbidden_module_imports(importer, imported, why):
    bad = [(m, i) for m, imps in IMPORTS.items() for i in imps
           if _under(m, importer) and _under(i, imported)]
    assert bad == [], why


def test_the_layer_rule_sees_a_forbidden_import():
    """The check itself: a policy importing the engine would be an arrow Policies ->
    Simulation, which is a never."""
    assert _part("bbopt.policies.queue") == "Policies"
    assert _part("bbopt.simulation.engine") == "Simulation"
    assert ("Policies", "Simulation") not in ARROWS
    assert ("Policies", "Simulation") in {(n[0], n[1]) for n in LAYERS["never"]}
    assert _part("bbopt.planner.jit.named") == "Planner"  # (the longest entry wins)
    assert _part("bbopt.jit") == "Kit"


def test_the_environments_place_bb_through_the_planner():
    """The environments are a face of bbopt: they place burst buffer through the planner's
    public API (``bbopt.planner.Planner``) and the EASY rule of the policies."""
    assert len([m for m in MODULES if m.startswith("bbopt.gym.")]) >= 5
    assert "bbopt.planner" in IMPORTS["bbopt.gym.episode"]


def test_no_two_modules_import_each_other():
    edges = {m: {_owner(i) for i in imps} - {m, None, "bbopt"} for m, imps in IMPORTS.items()}
    files = {m for m, p in MODULES.items() if p.name != "__init__.py"}
    pairs = sorted({tuple(sorted((a, b))) for a in files for b in edges[a]
                    if b in files and a in edges.get(b, ())})
    assert pairs == []


@pytest.mark.slow  # (about 7 s of CPU: every module's imports again, 180 times)
def test_every_module_imports_alone():
    """Each module in a fresh state of ``sys.modules``: an import circle shows as an
    ImportError for the module that starts it."""
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        f"for name in {sorted(MODULES)!r}:\n"
        "    for key in [k for k in sys.modules if k == 'bbopt' or k.startswith('bbopt.')]:\n"
        "        del sys.modules[key]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as exc:\n"
        "        failed.append(f'{name}: {exc}')\n"
        "print('\\n'.join(failed))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, check=True)
    assert out.stdout.strip() == ""


#: A module longer than SOFT_LINES says why in one docstring line starting "Length:"; none is
#: longer than HARD_LINES (small modules with one job each).
SOFT_LINES, HARD_LINES = 450, 600


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module):
    path = MODULES[module]
    lines = len(path.read_text().splitlines())
    assert lines <= HARD_LINES, (
        f"{path.name}: {lines} lines, split it (at most {HARD_LINES})")
    if lines > SOFT_LINES:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        assert any(line.startswith("Length:") for line in doc.splitlines()), (
            f"{path.name}: {lines} lines; split it, or say why it must stay whole in a "
            f"module-docstring line starting 'Length:' (over {SOFT_LINES})")


TESTS = PACKAGE.parent / "tests"
#: Test folders that check a promise across the package rather than one module's rule, and the
#: top-level test files that do the same; every other test file mirrors a module (docs/testing.md,
#: "Where tests live").
CROSS_CUTTING = {
    "cli": "the command line as a user types it, every subcommand through bbopt.cli.main",
    "conformance": "every registered policy on every platform kind against the common checks",
    "docs": "the documentation site builds strictly and its pages' code runs",
    "examples": "the examples/ folder runs as its README says",
    "benchmarks": "the benchmarks/ scripts import and run on tiny inputs",
    "test_layers.py": "the package's import layering and the test tree's layout",
    "test_public_surface.py": "every public name and command has an asserting test",
}
#: Words that name how a test came about instead of the rule it checks.
HISTORY_WORDS = ("issue", "bug", "regression", "hardening", "fix", "old", "new")


def _module_of(test: Path) -> str | None:
    """The package module or subpackage ``tests/a/b/test_m[_aspect].py`` checks: ``bbopt/a/b/m.py``
    or ``bbopt/a/b/m/`` for the shortest ``m`` that exists, else None."""
    rel = test.relative_to(TESTS)
    folder = PACKAGE.joinpath(*rel.parts[:-1])
    words = test.stem.removeprefix("test_").split("_")
    for end in range(1, len(words) + 1):
        name = "_".join(words[:end])
        if (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file():
            return str(folder.relative_to(PACKAGE.parent) / name)
    return None


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py")
                  if p.relative_to(TESTS).parts[0] not in CROSS_CUTTING)


def test_every_test_file_mirrors_a_module():
    """``tests/a/b/test_m[_aspect].py`` checks ``bbopt/a/b/m.py`` (or the subpackage
    ``bbopt/a/b/m/``); a promise kept across modules lives with its home module."""
    assert [str(p.relative_to(TESTS)) for p in _test_files() if _module_of(p) is None] == []


def test_no_test_file_is_named_after_its_history():
    named = [str(p.relative_to(TESTS)) for p in _test_files()
             if set(p.stem.split("_")) & set(HISTORY_WORDS)]
    assert named == []


def test_every_test_folder_is_a_package():
    """pytest imports test files by package path: two ``test_cli.py`` in folders without an
    ``__init__.py`` would collide."""
    folders = {p.parent for p in TESTS.rglob("test_*.py")}
    assert sorted(str(f) for f in folders if not (f / "__init__.py").is_file()) == []


def test_the_layout_rule_tells_a_mirrored_file_from_a_stray_one(tmp_path):
    assert _module_of(TESTS / "policies" / "test_queue_named_bb.py") == "bbopt/policies/queue"
    assert _module_of(TESTS / "test_api_decide_budget.py") == "bbopt/api"
    assert _module_of(TESTS / "solvers" / "test_packs_offered.py") == "bbopt/solvers/packs"
    assert _module_of(TESTS / "workloads" / "test_generators.py") == "bbopt/workloads/generators"
    assert _module_of(TESTS / "policies" / "test_named_bb.py") is None
    assert _module_of(TESTS / "models" / "test_bb_nodes.py") is None
    assert _module_of(TESTS / "nowhere" / "test_queue.py") is None
