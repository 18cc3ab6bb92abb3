"""The compiled backend's cache (bbopt.planner.jit.cache): every kernel's cached code is checked
against all the backend's files, so a primitive changed in one file cannot leave a kernel of
another file running its old machine code; and the backend is the one place of compiled code."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

pytest.importorskip("numba")

from bbopt.planner.jit import cache  # noqa: E402

BACKEND = Path(cache.__file__).parent
BBOPT = BACKEND.parent.parent
KERNEL_MODULES = ["compression", "named", "named_conservative", "pool", "primitives"]


def _dispatchers(module_name):
    module = importlib.import_module(f"bbopt.planner.jit.{module_name}")
    return [value for value in vars(module).values()
            if getattr(value, "py_func", None) is not None
            and value.py_func.__module__ == module.__name__]


@pytest.mark.parametrize("module_name", KERNEL_MODULES)
def test_every_kernel_is_cached_against_the_whole_backend(module_name):
    found = _dispatchers(module_name)
    assert found, module_name
    for dispatcher in found:
        locator = dispatcher._cache._impl.locator
        assert locator.get_source_stamp() == cache.backend_stamp(), dispatcher.py_func.__name__


def test_the_stamp_changes_with_any_file_of_the_backend(tmp_path, monkeypatch):
    for path in BACKEND.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(cache, "_BACKEND", tmp_path)
    cache.backend_stamp.cache_clear()
    try:
        before = cache.backend_stamp()
        assert before == cache.backend_stamp.__wrapped__()  # (the same files: the same stamp)
        primitives = tmp_path / "primitives.py"
        primitives.write_text(primitives.read_text().replace("lo = mid + 1", "lo = mid + 2", 1))
        cache.backend_stamp.cache_clear()
        changed = cache.backend_stamp()
        assert changed != before
        (tmp_path / "primitives.py").write_bytes((BACKEND / "primitives.py").read_bytes())
        cache.backend_stamp.cache_clear()
        assert cache.backend_stamp() == before
        (tmp_path / "extra.py").write_text("")  # a new file of the backend counts too
        cache.backend_stamp.cache_clear()
        assert cache.backend_stamp() != before
    finally:
        cache.backend_stamp.cache_clear()


def test_no_module_outside_the_backend_compiles_code():
    """numba is imported, and ``njit`` applied, only in bbopt/planner/jit (the kernels' callers
    load them by name through bbopt.jit); inside it, only through :func:`cache.kernel`."""
    outside, plain = [], []
    for path in sorted(BBOPT.rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = {alias.name for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and
                 node.module.split(".")[0] == "numba" for alias in node.names}
        names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                  for alias in node.names if alias.name.split(".")[0] == "numba"}
        if not names:
            continue
        if path.parent != BACKEND:
            outside.append(path.name)
        elif path.name != "cache.py":
            plain.append(path.name)
    assert outside == []
    assert plain == []


def _add(a, b):
    return a + b


def test_a_kernel_is_compiled_cached_against_the_backend_and_inlined_only_when_asked():
    """``kernel()`` is numba's ``njit`` never inlined, ``kernel(inline=True)`` always inlined;
    either keeps the function itself and caches its code against the whole backend."""
    plain, inlined = cache.kernel()(_add), cache.kernel(inline=True)(_add)
    assert plain.targetoptions["inline"] == "never"
    assert inlined.targetoptions["inline"] == "always"
    for dispatcher in (plain, inlined):
        assert dispatcher.py_func is _add
        assert type(dispatcher._cache) is cache._BackendCache
        assert dispatcher._cache._py_func is _add
        assert dispatcher._cache._impl.locator.get_source_stamp() == cache.backend_stamp()
    assert plain(2, 3) == 5 and plain(2.5, 1.0) == 3.5


def test_without_a_place_to_cache_a_kernel_is_refused():
    """A function with no source file (no cache locator) raises ``RuntimeError``: the caller
    (:func:`bbopt.jit.kernels`) then runs the Python loops."""
    namespace: dict = {}
    exec("def f(x):\n    return x\n", namespace)
    with pytest.raises(RuntimeError, match="cannot cache function 'f'"):
        cache.kernel()(namespace["f"])
