"""The text side of the SWF reader (:mod:`bbopt.workloads.swf`): the data lines of a plain or
gzipped file with their line numbers, the header scan, and the burst-buffer companion files of
BBSimulator (a 4-column ``<trace>.bb`` file, or its whole ``<trace>.swf.bb`` trace).
"""

from __future__ import annotations

import contextlib
import zlib
from pathlib import Path

from bbopt.errors import InputError

BBSIM_FIELDS = ("data_in", "data_run", "data_out")
#: Characters read at a time by the header scan past the first records.
_BLOCK = 1 << 16


def _intstr(x: float) -> str:
    return str(int(x)) if x == int(x) else repr(float(x))


def _read_lines(path: Path) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """Header ``key: value`` pairs and the data lines with their 1-based line numbers."""
    header: dict[str, str] = {}
    lines = list(_data_lines(path, header))
    return header, lines


def _open_text(path: Path):
    if path.suffix == ".gz":
        import gzip  # (only for a gzipped file)

        return gzip.open(path, "rt", encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")


def _cannot_read(path: Path, exc: BaseException) -> InputError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return InputError(f"cannot read: {reason or type(exc).__name__}", source=str(path))


def _data_chunks(path: Path, size: int, header: dict[str, str] | None = None):
    """The data lines, up to ``size`` at a time, as two lists: their 1-based line numbers and
    their stripped texts; header ``key: value`` pairs go to ``header`` when given."""
    try:
        with _open_text(path) as fh:
            numbers: list[int] = []
            texts: list[str] = []
            for lineno, line in enumerate(fh, 1):
                text = line.strip()
                if not text:
                    continue
                if text[0] == ";":
                    if header is not None:
                        _header_line(text, header)
                    continue
                numbers.append(lineno)
                texts.append(text)
                if len(texts) == size:
                    yield numbers, texts
                    numbers, texts = [], []
            if texts:
                yield numbers, texts
    except (OSError, EOFError, zlib.error) as exc:  # a corrupt or truncated .gz, a directory
        raise _cannot_read(path, exc) from None


def _data_lines(path: Path, header: dict[str, str] | None = None):
    """The data lines with their 1-based line numbers, one at a time; header ``key: value``
    pairs go to ``header`` when given."""
    for numbers, texts in _data_chunks(path, 1024, header):
        yield from zip(numbers, texts, strict=True)


def _scan_header(path: Path) -> tuple[dict[str, str], list[int]]:
    """The header's ``key: value`` pairs (wherever they are) and the field counts of the first
    50 records: a first pass that keeps no record (past those 50, the text is read in blocks
    and only the lines of a block holding a ``;``, as every header line does, are looked at)."""
    header: dict[str, str] = {}
    widths: list[int] = []
    try:
        with _open_text(path) as fh:
            for line in fh:
                text = line.strip()
                if not text:
                    continue
                if text[0] == ";":
                    _header_line(text, header)
                else:
                    widths.append(len(text.split()))
                    if len(widths) == 50:
                        break
            carry = ""  # (the end of the last block, a line cut short)
            for block in iter(lambda: fh.read(_BLOCK), ""):
                block = carry + block
                cut = block.rfind("\n") + 1
                if ";" in block:
                    _header_lines(block[:cut].split("\n"), header)
                carry = block[cut:]
            _header_lines([carry], header)
    except (OSError, EOFError, zlib.error) as exc:
        raise _cannot_read(path, exc) from None
    return header, widths


def _header_lines(lines: list[str], header: dict[str, str]) -> None:
    """Keep the ``key: value`` of the header lines among ``lines``."""
    for line in lines:
        if ";" in line:
            text = line.strip()
            if text[0] == ";":
                _header_line(text, header)


def _header_line(text: str, header: dict[str, str]) -> None:
    """Keep the ``key: value`` of the header line ``text`` (the first value of a key wins)."""
    key, sep, value = text[1:].partition(":")
    key = key.strip()
    if sep and key and " " not in key:
        header.setdefault(key, value.strip())


def _companion_kind(path: Path) -> str:
    """``"bbsimulator"`` when a companion file is BBSimulator's whole trace (21 fields or more
    on its first record), else ``"bbsim"`` (4-column ``job data_in data_run data_out``)."""
    if not path.exists():
        raise InputError("no such file", source=str(path))
    for _, text in _data_lines(path):
        return "bbsimulator" if len(text.split()) >= 21 else "bbsim"
    return "bbsim"


def _read_bb_file(path: Path, unit: float, in_scale: float = 1.0
                  ) -> dict[str, tuple[float, float, float]]:
    """A companion file: ``<job number> <data_in> <data_run> <data_out>`` lines, or
    BBSimulator's whole trace (fields 1 and 19-21). Job numbers are normalised (``1.00`` is
    job ``1``); ``data_in`` is multiplied by ``in_scale``."""
    if not path.exists():
        raise InputError("no such file", source=str(path))
    out: dict[str, tuple[float, float, float]] = {}
    _, lines = _read_lines(path)
    for lineno, text in lines:
        parts = text.split()
        if len(parts) >= 21:  # BBSimulator's trace: SWF fields, then the three volumes
            parts = [parts[0], *parts[18:21]]
        with contextlib.suppress(ValueError, OverflowError):
            parts[0] = _intstr(float(parts[0]))
        if len(parts) < 4:
            raise InputError(f"expected 4 fields (job, data_in, data_run, data_out), found "
                             f"{len(parts)}", source=str(path), line=lineno,
                             field=("job_number", *BBSIM_FIELDS)[len(parts)])
        values = []
        for c, name in enumerate(BBSIM_FIELDS, 1):
            try:
                v = float(parts[c])
            except ValueError:
                raise InputError(f"not a number: {parts[c]!r}", source=str(path), line=lineno,
                                 field=name) from None
            if v < 0 and v != -1:
                raise InputError(f"volume must be >= 0, got {parts[c]}", source=str(path),
                                 line=lineno, field=name)
            values.append(max(v, 0.0) * unit * (in_scale if c == 1 else 1.0))
        if parts[0] in out:
            raise InputError(f"duplicate job number {parts[0]}", source=str(path), line=lineno,
                             field="job_number")
        out[parts[0]] = (values[0], values[1], values[2])
    return out
