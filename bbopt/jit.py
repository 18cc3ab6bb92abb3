"""The optional compiled kernels: modules written for numba (the extra ``fast``), registered in
:data:`KERNELS` by name and imported on first use so that runs which never need them do not
pay numba's import.

The module that uses a kernel module declares it (``KERNELS.declare({"plan-pool":
"bbopt.planner.jit:pool"})``); :func:`kernels` returns that module, or ``None`` when numba is not
installed, when its code cannot be cached, or when the environment variable ``BBOPT_NO_JIT`` is
set to anything but ``0``; the callers then run their pure-Python loops, which give the same
answers bit for bit (each kernel module says which loop it translates, and its tests compare
the two). ``bbopt policies -v`` lists the kernels (:func:`kernels_note`).
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from types import ModuleType

from bbopt.registry import Registry

__all__ = ["KERNELS", "kernels", "kernels_note"]

#: The compiled kernel modules by name (declared by their users; the entry is the module).
KERNELS = Registry("compiled kernel")
_UNAVAILABLE: set[str] = set()  # names whose module did not import (no numba, no cache)


def kernels(name: str) -> ModuleType | None:
    """The kernel module registered as ``name`` (imported once), or ``None`` (see the module's
    docstring)."""
    if os.environ.get("BBOPT_NO_JIT", "0") != "0" or name in _UNAVAILABLE:
        return None
    try:
        return KERNELS[name]
    except (ImportError, RuntimeError):  # no numba, or no place to cache its code
        _UNAVAILABLE.add(name)
        return None


def kernels_note() -> str:
    """One line: the declared kernel modules and whether they would run (numba found, not
    switched off), without importing numba."""
    names = ", ".join(KERNELS.known()) or "none declared"
    if os.environ.get("BBOPT_NO_JIT", "0") != "0":
        state = "off (BBOPT_NO_JIT): the Python loops run"
    elif find_spec("numba") is None:
        state = "numba not installed (the extra fast): the Python loops run"
    else:
        state = "compiled on first use (numba)"
    return f"compiled kernels: {names}; {state}"
