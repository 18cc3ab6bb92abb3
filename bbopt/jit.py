"""The optional compiled kernels: modules written for numba (the extra ``fast``), imported on
first use so that runs which never need them do not pay numba's import.

:func:`kernels` returns such a module, or ``None`` when numba is not installed, when its code
cannot be cached, or when the environment variable ``BBOPT_NO_JIT`` is set to anything but
``0``; the callers then run their pure-Python loops, which give the same answers bit for bit
(each kernel module says which loop it translates, and its tests compare the two).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType

_LOADED: dict[Callable[[], ModuleType], ModuleType | None] = {}


def kernels(load: Callable[[], ModuleType]) -> ModuleType | None:
    """The module ``load()`` imports and returns (called once; a literal import inside it, so
    that readers and tools see what depends on what), or ``None`` (see the module's
    docstring)."""
    if os.environ.get("BBOPT_NO_JIT", "0") != "0":
        return None
    try:
        return _LOADED[load]
    except KeyError:
        pass
    try:
        loaded: ModuleType | None = load()
    except (ImportError, RuntimeError):  # no numba, or no place to cache its code
        loaded = None
    _LOADED[load] = loaded
    return loaded
