"""The package's layering (DESIGN.md, "Layout"), checked on the source with the standard library.

Every arrow points down: the domain layer (core, resources, units, topology, models, workloads)
imports nothing from the layers that use it (policies, solvers, simulation, analysis); models
import no solver; policies see a ClusterState, never the engine; the engine records and
``analysis`` reads the record, never the other way. Function-local imports count too, and so do
imports under ``TYPE_CHECKING``. Every module also imports on its own in a fresh interpreter, so
no import circle hides behind an import order.

The test tree mirrors the package (docs/testing.md, "Where tests live"): every test file
names the module it checks, except the cross-cutting folders and files listed once below.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bbopt"

LOW = ("bbopt.core", "bbopt.resources", "bbopt.units", "bbopt.errors", "bbopt.topology",
       "bbopt.models", "bbopt.workloads")
HIGH = ("bbopt.policies", "bbopt.solvers", "bbopt.simulation", "bbopt.analysis", "bbopt.cli",
        "bbopt.api", "bbopt.loading", "bbopt.schema")
#: (importer prefix, imported prefix, why the arrow must not exist)
NEVER = (
    ("bbopt.models", "bbopt.solvers", "a model imports no solver"),
    ("bbopt.policies", "bbopt.simulation", "policies see a ClusterState, never the engine"),
    ("bbopt.solvers", "bbopt.policies", "backends serve models, not policies"),
    ("bbopt.simulation", "bbopt.analysis", "the engine records; analysis reads the record"),
    ("bbopt.workloads", "bbopt.simulation", "readers know no engine"),
    ("bbopt.topology", "bbopt.loading", "the I/O tree reads no platform names, and no files"),
    ("bbopt.topology", "bbopt.units", "the I/O tree reads no files"),
    ("bbopt.gym", "bbopt.models",
     "the environments place BB through the planner and the policies, never the models"),
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


def test_the_domain_layer_imports_no_layer_above_it():
    bad = [(m, i) for m, imps in IMPORTS.items() for i in imps
           if any(_under(m, low) for low in LOW) and any(_under(i, high) for high in HIGH)]
    assert bad == []


@pytest.mark.parametrize("importer, imported, why", NEVER)
def test_forbidden_arrows(importer, imported, why):
    bad = [(m, i) for m, imps in IMPORTS.items() for i in imps
           if _under(m, importer) and _under(i, imported)]
    assert bad == [], why


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
#: Compiled kernels that share inlined helpers stay one file whatever their length: numba checks
#: a cached function against its own file only (its documented cache limitation), so a helper
#: moved to another file would leave its callers' cached machine code stale.
ONE_FILE = frozenset({"bbopt.planner.jit.named"})


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module):
    path = MODULES[module]
    lines = len(path.read_text().splitlines())
    assert lines <= HARD_LINES or module in ONE_FILE, (
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
