"""SIGTERM handled as SIGINT is, and the exit codes of the command line.

Slurm, most batch systems and ``kill`` stop a process with SIGTERM, not with the SIGINT of a
terminal's Ctrl-C. :func:`terminate_as_interrupt` makes SIGTERM (and SIGHUP, a closed terminal)
raise :class:`Terminated`, a :class:`KeyboardInterrupt`, so that every clean-up written for
Ctrl-C also runs then: temporary files removed, results of finished runs kept, worker processes
stopped and their input folders deleted.

Exit codes (:data:`EXIT_CODES`, documented in docs/threat-model.md):

====  ==============================================================
0     done
1     done, but some runs of a sweep failed (their tracebacks are in the store)
2     bad input, a file that cannot be read or written, a Slurm that cannot be reached
130   interrupted by SIGINT (Ctrl-C); 128 + 2, the shells' convention
129   stopped by SIGHUP (128 + 1)
143   stopped by SIGTERM (128 + 15)
====  ==============================================================
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

#: What each exit status of ``bbopt`` means.
EXIT_CODES = {0: "done", 1: "done, some sweep runs failed", 2: "bad input or unreachable service",
              128 + signal.SIGHUP: "stopped by SIGHUP", 128 + signal.SIGINT: "interrupted (SIGINT)",
              128 + signal.SIGTERM: "stopped by SIGTERM"}


class Terminated(KeyboardInterrupt):
    """The process was asked to stop by a signal other than SIGINT (``signum``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise(signum: int, frame) -> None:
    raise Terminated(signum)


def terminate_as_interrupt() -> None:
    """Make SIGTERM and SIGHUP raise :class:`Terminated` in the main thread (nothing elsewhere:
    only the main thread receives signals). A signal ignored by the parent stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _raise)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP while worker processes start, and act on the first one
    held when the block ends. A start cut short leaves a spawned interpreter reading its
    instructions from a pipe its parent has closed (it prints a traceback) and a worker its pool
    does not know of, so cannot stop. Handlers, unlike a blocked signal mask, are not inherited
    by the spawned interpreters, which can still be stopped at once."""
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    old = {s: signal.getsignal(s) for s in sigs}
    mine = [s for s in sigs if old[s] not in (signal.SIG_IGN, None)]
    for s in mine:
        signal.signal(s, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        for s in mine:
            signal.signal(s, old[s])
    if held:
        handler = old[held[0]]
        if callable(handler):  # Ctrl-C's KeyboardInterrupt, or Terminated
            handler(held[0], None)
        else:  # the default action: stop as the signal would have
            signal.raise_signal(held[0])


def exit_status(exc: BaseException) -> int:
    """The exit status for an interruption: 128 + the signal's number (130 for Ctrl-C)."""
    return 128 + (exc.signum if isinstance(exc, Terminated) else signal.SIGINT)


def interrupted(exc: BaseException, detail: str = "") -> int:
    """Say on stderr that the command was stopped (and ``detail``: what was kept); returns the
    exit status (:func:`exit_status`)."""
    what = f"stopped by {exc}" if isinstance(exc, Terminated) else "interrupted"
    print(f"bbopt: {what}{': ' + detail if detail else ''}", file=sys.stderr)
    return exit_status(exc)
