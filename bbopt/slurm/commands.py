"""Slurm's client commands (``squeue``, ``sinfo``, ``scontrol``, ``sbatch``, ``scancel``) with
machine-readable output formats, parsed into plain records.

Every call goes through :class:`SlurmCommands`, which carries the environment (``SLURM_CONF``)
of the cluster it talks to. Times are Unix seconds (Slurm prints local time with one-second
resolution); time limits are seconds; a job's ``licenses`` map a license name to its count.
Nothing here knows bbopt's scheduling types: :mod:`bbopt.slurm.pool` maps these records to
:class:`~bbopt.Job` and :class:`~bbopt.Platform`.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bbopt.slurm.cluster import SlurmError

#: squeue fields, in the order of :data:`SQUEUE_FORMAT`.
_SQUEUE_FIELDS = ("id", "name", "state", "user", "nodes", "time_limit", "start", "submit",
                  "node_list", "reason", "comment", "licenses", "req_nodes", "partition")
#: ``%k`` (comment) goes last but one would allow ``|`` in it; we control comments, so a rare
#: separator is enough.
SEP = "\x1f"
SQUEUE_FORMAT = SEP.join(("%i", "%j", "%T", "%u", "%D", "%l", "%S", "%V", "%N", "%r", "%k", "%W",
                          "%n", "%P"))
#: Reasons of a job held by its user (``sbatch --hold``): the bridge's queue.
HELD_REASONS = ("JobHeldUser",)
#: Node states (sinfo ``%T``, lower case, suffix flags removed) a job may be started on.
USABLE_NODE_STATES = ("idle",)


@dataclass(frozen=True, slots=True)
class SlurmJob:
    """One line of ``squeue``: a pending, running or recently finished job."""

    id: str
    name: str
    state: str
    user: str
    nodes: int
    time_limit: float | None
    start: float | None
    submit: float | None
    node_list: tuple[str, ...]
    reason: str
    comment: str
    licenses: Mapping[str, int] = field(default_factory=dict)
    req_nodes: tuple[str, ...] = ()
    partition: str = ""

    @property
    def held(self) -> bool:
        return self.state == "PENDING" and self.reason in HELD_REASONS

    @property
    def tags(self) -> dict[str, str]:
        """``key=value`` pairs of a comment ``bbopt:key=value,key=value``."""
        if not self.comment.startswith("bbopt:"):
            return {}
        out = {}
        for item in self.comment[len("bbopt:"):].split(","):
            key, sep, value = item.partition("=")
            if sep:
                out[key.strip()] = value.strip()
        return out


@dataclass(frozen=True, slots=True)
class SlurmNode:
    name: str
    state: str  # lower case, without flags such as '*' (not responding) or '~'
    responding: bool = True

    @property
    def usable(self) -> bool:
        return self.responding and self.state in USABLE_NODE_STATES


@dataclass(frozen=True, slots=True)
class License:
    name: str
    total: int
    used: int

    @property
    def free(self) -> int:
        return self.total - self.used


# -- parsing -----------------------------------------------------------------------------------

def parse_time(text: str) -> float | None:
    """Slurm's ``YYYY-MM-DDTHH:MM:SS`` (local time) as Unix seconds; ``None`` for N/A, Unknown."""
    text = text.strip()
    if not text or text in ("N/A", "Unknown", "None", "(null)"):
        return None
    try:
        return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
    except ValueError as exc:
        raise SlurmError(f"cannot read Slurm time {text!r}") from exc


def parse_duration(text: str) -> float | None:
    """Slurm's ``[D-][[H:]M:]S`` time limit in seconds; ``None`` for UNLIMITED, INVALID, N/A."""
    given = text = text.strip()
    if not text or text.upper() in ("UNLIMITED", "INFINITE", "INVALID", "N/A", "NOT_SET"):
        return None
    days = 0
    try:
        if "-" in text:
            d, text = text.split("-", 1)
            days = int(d)
        parts = [int(p) for p in text.split(":")]
    except ValueError:
        raise SlurmError(f"cannot read Slurm duration {given!r}") from None
    if len(parts) == 1:  # minutes alone (the sbatch --time convention)
        seconds = parts[0] * 60
    elif len(parts) == 2:
        seconds = parts[0] * 60 + parts[1]
    elif len(parts) == 3:
        seconds = parts[0] * 3600 + parts[1] * 60 + parts[2]
    else:
        raise SlurmError(f"cannot read Slurm duration {given!r}")
    return float(days * 86400 + seconds)


def format_minutes(seconds: float) -> str:
    """``--time`` for a walltime of ``seconds``: whole minutes, rounded up, at least 1."""
    return str(max(1, math.ceil(seconds / 60.0 - 1e-9)))


_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def expand_hostlist(text: str) -> tuple[str, ...]:
    """``n[1-3,7],m2`` -> ``('n1', 'n2', 'n3', 'n7', 'm2')`` (zero padding kept)."""
    text = text.strip()
    if not text or text in ("(null)", "N/A"):
        return ()
    names: list[str] = []
    for item in _split_top(text):
        m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", item)
        if not m:
            names.append(item)
            continue
        prefix, ranges, suffix = m.groups()
        for r in ranges.split(","):
            rm = _RANGE.match(r)
            if not rm:
                raise SlurmError(f"cannot read host list {text!r}")
            lo, hi = rm.group(1), rm.group(2) or rm.group(1)
            width = len(lo)
            for k in range(int(lo), int(hi) + 1):
                names.extend(expand_hostlist(f"{prefix}{k:0{width}d}{suffix}"))
    return tuple(names)


def _split_top(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def parse_licenses(text: str) -> dict[str, int]:
    """``bb:4,other:1`` (squeue ``%W``) -> ``{'bb': 4, 'other': 1}``."""
    text = text.strip()
    if not text or text in ("(null)", "N/A"):
        return {}
    out: dict[str, int] = {}
    for item in text.split(","):
        name, sep, count = item.partition(":")
        if "@" in name:  # remote licenses: name@server
            name = name.split("@", 1)[0]
        out[name] = out.get(name, 0) + (int(count) if sep else 1)
    return out


def parse_squeue(text: str) -> list[SlurmJob]:
    jobs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(SEP)
        if len(parts) != len(_SQUEUE_FIELDS):
            raise SlurmError(f"unexpected squeue line {line!r}")
        f = dict(zip(_SQUEUE_FIELDS, parts, strict=True))
        jobs.append(SlurmJob(
            id=f["id"].strip(), name=f["name"], state=f["state"].strip(), user=f["user"].strip(),
            nodes=int(f["nodes"]), time_limit=parse_duration(f["time_limit"]),
            start=parse_time(f["start"]), submit=parse_time(f["submit"]),
            node_list=expand_hostlist(f["node_list"]), reason=f["reason"].strip(),
            comment="" if f["comment"] == "(null)" else f["comment"],
            licenses=parse_licenses(f["licenses"]), req_nodes=expand_hostlist(f["req_nodes"]),
            partition=f["partition"].strip()))
    return jobs


def parse_sinfo(text: str) -> list[SlurmNode]:
    nodes = []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, state = line.split()[:2]
        responding = not state.endswith("*")
        nodes.append(SlurmNode(name, state.rstrip("*~#!%$@^-").lower(), responding))
    return nodes


def parse_licenses_show(text: str) -> dict[str, License]:
    """``scontrol show licenses -o`` -> name -> :class:`License`."""
    out = {}
    for line in text.splitlines():
        kv = dict(item.split("=", 1) for item in line.split() if "=" in item)
        if "LicenseName" in kv:
            out[kv["LicenseName"]] = License(kv["LicenseName"], int(kv.get("Total", 0)),
                                             int(kv.get("Used", 0)))
    return out


def natural_key(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


# -- the commands ------------------------------------------------------------------------------

class SlurmCommands:
    """Runs Slurm's client commands against one cluster (``SLURM_CONF`` from ``conf`` or env)."""

    def __init__(self, conf: str | os.PathLike | None = None,
                 env: Mapping[str, str] | None = None, timeout: float = 30.0) -> None:
        self.env = dict(env if env is not None else os.environ)
        if conf is not None:
            self.env["SLURM_CONF"] = str(conf)
        self.timeout = timeout

    def run(self, argv: Sequence[str], check: bool = True) -> str:
        try:
            r = subprocess.run(list(argv), env=self.env, capture_output=True, text=True,
                               timeout=self.timeout, stdin=subprocess.DEVNULL)
        except FileNotFoundError as exc:
            raise SlurmError(f"{argv[0]} not found (is Slurm installed?)") from exc
        except subprocess.TimeoutExpired as exc:
            raise SlurmError(f"{' '.join(argv)} timed out after {self.timeout:g} s") from exc
        if check and r.returncode != 0:
            raise SlurmError(f"{' '.join(argv)} failed ({r.returncode}): "
                             f"{(r.stderr or r.stdout).strip()}")
        return r.stdout

    def check_reachable(self, timeout: float = 10.0) -> None:
        """Fail fast, within ``timeout`` seconds, with a message saying what to check, when no
        Slurm controller answers (``scontrol ping``): programs missing, a wrong ``SLURM_CONF``
        or slurmctld down. Raises :class:`~bbopt.slurm.cluster.SlurmError` (a bbopt error)."""
        conf = self.env.get("SLURM_CONF", "the default slurm.conf")
        saved, self.timeout = self.timeout, timeout
        try:
            out = self.run(["scontrol", "ping"])
        except SlurmError as exc:
            raise SlurmError(f"cannot reach Slurm ({exc}); check --conf / SLURM_CONF ({conf}) "
                             "and that slurmctld runs") from None
        finally:
            self.timeout = saved
        if "UP" not in out:
            raise SlurmError(f"Slurm's controller is not up ({' '.join(out.split())[:200]}); "
                             f"SLURM_CONF: {conf}")

    # reading
    def jobs(self, partition: str | None = None) -> list[SlurmJob]:
        argv = ["squeue", "-h", "-a", "-t", "all", "-o", SQUEUE_FORMAT]
        if partition:
            argv += ["-p", partition]
        return parse_squeue(self.run(argv))

    def nodes(self, partition: str | None = None) -> list[SlurmNode]:
        argv = ["sinfo", "-h", "-N", "-o", "%N %T"]
        if partition:
            argv += ["-p", partition]
        seen: dict[str, SlurmNode] = {}
        for node in parse_sinfo(self.run(argv)):
            seen.setdefault(node.name, node)
        return sorted(seen.values(), key=lambda n: natural_key(n.name))

    def licenses(self) -> dict[str, License]:
        return parse_licenses_show(self.run(["scontrol", "show", "licenses", "-o"]))

    # acting
    def submit(self, *, name: str, seconds: float, walltime: float, nodes: int = 1,
               licenses: Mapping[str, int] | None = None, hold: bool = False,
               comment: str | None = None, partition: str | None = None,
               output: str = "/dev/null", user_args: Sequence[str] = ()) -> str:
        """``sbatch`` a job that sleeps ``seconds``; returns its Slurm job id.

        ``walltime`` (seconds) becomes ``--time`` in whole minutes, rounded up: Slurm's
        smallest time limit is one minute.
        """
        argv = ["sbatch", "--parsable", "-J", name, "-N", str(nodes), "--time",
                format_minutes(walltime), "-o", output, "-e", output]
        lic = {k: v for k, v in (licenses or {}).items() if v > 0}
        if lic:
            argv += ["-L", ",".join(f"{k}:{v}" for k, v in lic.items())]
        if hold:
            argv.append("--hold")
        if comment:
            argv += ["--comment", comment]
        if partition:
            argv += ["-p", partition]
        argv += list(user_args)
        argv += ["--wrap", f"sleep {max(seconds, 0):.3f}"]
        out = self.run(argv).strip()
        return out.split(";")[0]

    def set_nodes(self, job_id: str, names: Sequence[str]) -> None:
        self.run(["scontrol", "update", f"JobId={job_id}", f"NodeList={','.join(names)}"])

    def release(self, job_id: str) -> None:
        self.run(["scontrol", "release", job_id])

    def cancel(self, job_id: str) -> None:
        self.run(["scancel", job_id], check=False)
