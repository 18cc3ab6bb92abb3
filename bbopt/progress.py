"""Progress of long commands: a bar on a terminal, a plain line every N seconds in a log.

One rule for every long command (``simulate``, ``compare`` per policy and within each policy
(:class:`Within`, fed by the workers), ``sweep``, ``bench run``, ``slurm replay`` and ``run``):
:func:`progress` gives a tqdm bar when the stream is a terminal, and a :class:`ProgressLog`
otherwise (a batch job's log, a pipe), which prints one line every ``every`` seconds and one at
the end, with the time elapsed and an estimate of the time left; a bar written into a log is
thousands of carriage returns. Both have tqdm's ``update``, ``set_postfix`` and ``close``.

``$BBOPT_PROGRESS_EVERY`` sets the default seconds between log lines (:data:`EVERY`).
"""

from __future__ import annotations

import os
import sys
from time import monotonic  # (a module attribute: tests replace the clock)
from typing import Any, TextIO

#: Seconds between two progress lines in a log (``$BBOPT_PROGRESS_EVERY`` overrides it).
EVERY = 60.0


def default_every() -> float:
    """:data:`EVERY`, or ``$BBOPT_PROGRESS_EVERY`` seconds when set to a positive number."""
    try:
        value = float(os.environ.get("BBOPT_PROGRESS_EVERY", EVERY))
    except ValueError:
        return EVERY
    return value if value > 0 else EVERY


def progress(total: int, *, unit: str, desc: str, enabled: bool = True,
             every: float | None = None, stream: TextIO | None = None, delay: float = 0.0,
             leave: bool = True, count_failed: bool = False, skipped: int = 0,
             quiet: bool = False) -> Any:
    """A progress display for ``total`` items of ``unit`` (:class:`Silent` when not ``enabled``
    or there is nothing to do): a tqdm bar on a terminal, else a :class:`ProgressLog` with a line
    every ``every`` seconds (default :func:`default_every`). ``delay``: nothing is shown before
    that many seconds; ``quiet``: a bar only after a second and log lines only after
    ``every`` seconds, so that short runs print nothing (a log then prints no final line
    either).
    """
    if not enabled or total <= 0:
        return Silent()
    stream = stream or sys.stderr
    every = every if every is not None else default_every()
    if _is_terminal(stream):
        from tqdm import tqdm

        label = f"{desc} ({skipped} done before)" if skipped else desc
        return tqdm(total=total, unit=unit, desc=label, file=stream,
                    delay=max(delay, 1.0) if quiet else delay,
                    mininterval=0.25, leave=leave, dynamic_ncols=True, smoothing=0.1)
    return ProgressLog(total, skipped, every, stream, unit=unit, desc=desc,
                       count_failed=count_failed, delay=max(delay, every) if quiet else delay)


class Silent:
    """The display of a command asked for no progress: counts, shows nothing."""

    def __init__(self) -> None:
        self.n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, **_: Any) -> None:
        pass

    def close(self) -> None:
        pass


class Within:
    """Progress of several runs at once, each by name (``compare``'s policies, each in its
    own worker): ``report(name, done, total)`` sets run ``name``'s count; each run gets its own
    :func:`progress` display (a bar on a terminal, log lines every ``every`` seconds, nothing
    for a run that ends quickly), closed when ``done`` reaches ``total`` or by :meth:`close`.
    """

    def __init__(self, *, unit: str, enabled: bool = True, every: float | None = None,
                 stream: TextIO | None = None) -> None:
        self.unit, self.enabled, self.every, self.stream = unit, enabled, every, stream
        self.shown: dict[str, Any] = {}
        self.ended: set[str] = set()

    def report(self, name: str, done: int, total: int) -> None:
        if name in self.ended:
            return
        if name not in self.shown:
            self.shown[name] = progress(total, unit=self.unit, desc=name,
                                        enabled=self.enabled, every=self.every,
                                        stream=self.stream, leave=False, quiet=True)
        shown = self.shown[name]
        if done > shown.n:
            shown.update(done - shown.n)
        if done >= total:
            self.end(name)

    def end(self, name: str) -> None:
        """Run ``name`` is over: its display closes (nothing more is shown for it)."""
        self.ended.add(name)
        shown = self.shown.pop(name, None)
        if shown is not None:
            shown.close()

    def close(self) -> None:
        for name in list(self.shown):
            self.end(name)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class ProgressLog:
    """Progress as plain lines on ``stream`` every ``every`` seconds (and at the end): items
    done, failures when counted, time elapsed and an estimate of the time left from the mean
    pace so far. ``every = 0`` prints a line per update. Nothing is printed before ``delay``
    seconds have passed."""

    def __init__(self, total: int, skipped: int, every: float, stream: TextIO | None = None,
                 *, unit: str = "run", desc: str = "sweep", count_failed: bool = True,
                 delay: float = 0.0) -> None:
        self.total, self.skipped, self.every, self.delay = total, skipped, every, delay
        self.stream = stream or sys.stderr
        self.unit, self.desc, self.count_failed = unit, desc, count_failed
        self.n = 0
        self.failed = 0
        self.t0 = self.last = monotonic()

    def update(self, n: int = 1) -> None:
        self.n += n
        now = monotonic()
        if now - self.t0 < self.delay:
            return
        if now - self.last >= self.every or self.n >= self.total:
            self.last = now
            self._line(now)

    def set_postfix(self, failed: int = 0, **_: Any) -> None:
        self.failed = failed

    def close(self) -> None:
        now = monotonic()
        if self.n < self.total and now - self.t0 >= self.delay:
            self._line(now)

    def _line(self, now: float) -> None:
        elapsed = now - self.t0
        left = (elapsed / self.n * (self.total - self.n)) if self.n else float("nan")
        before = f" ({self.skipped} done before)" if self.skipped else ""
        failed = f", {self.failed} failed" if self.count_failed else ""
        units = self.unit[:-1] + "ies" if self.unit.endswith("y") else self.unit + "s"
        print(f"{self.desc}: {self.n}/{self.total} {units}{before}{failed}, "
              f"{hms(elapsed)} elapsed, about {hms(left)} left", file=self.stream, flush=True)


def hms(seconds: float) -> str:
    """``"1h02m03s"``, ``"2m05s"``; ``"?"`` for NaN (no pace yet).

    >>> hms(3723.4), hms(125), hms(float("nan"))
    ('1h02m03s', '2m05s', '?')
    """
    if seconds != seconds:
        return "?"
    s = round(seconds)
    return f"{s // 3600}h{s // 60 % 60:02d}m{s % 60:02d}s" if s >= 3600 else \
        f"{s // 60}m{s % 60:02d}s"
