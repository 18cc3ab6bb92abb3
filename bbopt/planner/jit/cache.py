"""How the planner's compiled kernels are declared and cached: :func:`kernel`, numba's
``njit`` with its code cached on disk, whose cache is fresh only while *every* source file of
this backend is unchanged.

numba checks a cached function against its own file only: a kernel calling a primitive of
another file would keep its stale machine code when the primitive changes (numba's documented
cache limitation). Here each kernel's cache carries one stamp, the hash of all the backend's
files, so the primitives can live once in :mod:`bbopt.planner.jit.primitives` and be called
from every kernel module (Kopanski & Rzadca, Euro-Par 2021, Sections 3.2-3.3: the earliest-fit
and reservation rule they share). The cache lies where numba would put it (``NUMBA_CACHE_DIR``,
the package's ``__pycache__``, or the user's cache directory); with no writable place the
decorator raises ``RuntimeError`` and :func:`bbopt.jit.kernels` runs the Python loops.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from numba import njit
from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    InTreeCacheLocator,
    UserProvidedCacheLocator,
    UserWideCacheLocator,
)

__all__ = ["backend_stamp", "kernel"]

_BACKEND = Path(__file__).resolve().parent


@functools.cache
def backend_stamp() -> str:
    """The hash of every source file of the backend (names and contents, by name)."""
    digest = hashlib.sha256()
    for path in sorted(_BACKEND.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class _BackendStamp:
    """A locator whose source stamp is the whole backend's (see the module's docstring)."""

    def get_source_stamp(self) -> str:
        return backend_stamp()


class _UserProvided(_BackendStamp, UserProvidedCacheLocator):
    pass


class _InTree(_BackendStamp, InTreeCacheLocator):
    pass


class _UserWide(_BackendStamp, UserWideCacheLocator):
    pass


class _BackendCacheImpl(CompileResultCacheImpl):
    _locator_classes = [_UserProvided, _InTree, _UserWide]


class _BackendCache(FunctionCache):
    _impl_class = _BackendCacheImpl


def kernel(inline: bool = False) -> Callable[[Callable[..., Any]], Any]:
    """``njit`` (no fastmath), cached on disk against the whole backend; ``inline``: inlined
    into its callers (numba's ``inline="always"``)."""

    def wrap(func: Callable[..., Any]) -> Any:
        dispatcher = njit(inline="always" if inline else "never")(func)
        if hasattr(dispatcher, "py_func"):  # (not with NUMBA_DISABLE_JIT: the function itself)
            # What ``njit(cache=True)`` does (``Dispatcher.enable_caching``), with this cache.
            dispatcher._cache = _BackendCache(dispatcher.py_func)
        return dispatcher

    return wrap
