"""What a site adds to its own Slurm to put bbopt in front of it (``bbopt slurm site-config``).

Two pieces, both plain Slurm 22.05 configuration:

* ``slurm.conf`` lines: the shared burst buffer as the ``bb`` license pool (one license per
  ``unit`` bytes, :mod:`bbopt.slurm.pool`), and optionally ``bf_licenses`` so that Slurm's own
  backfill (for the jobs it still schedules itself) reserves BB as well as nodes;
* a ``job_submit.lua`` (``JobSubmitPlugins=lua``) that submits every new job of the partitions
  bbopt schedules held (priority 0, reason ``JobHeldUser``), so that users keep their usual
  ``sbatch`` and Slurm's scheduler never starts those jobs: the bridge (``bbopt slurm run``)
  does. A partition-less job (``job_desc.partition`` nil) goes to the default partition; it is
  held when ``hold_default`` says the default partition is one of bbopt's.

slurmctld runs ``job_submit.lua``, usually as root: every name written into it is checked
against Slurm's rules for a partition name (:func:`check_partition`) and written as an escaped
Lua string literal (:func:`lua_string`), so no name can end the string and add code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from bbopt.core import GB
from bbopt.errors import InputError

#: A partition name as slurm.conf can declare it: no blank, ``,`` (list separator), ``=``,
#: ``#`` (comment), quote or control character; we allow letters, digits and ``_ . -``.
PARTITION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
#: Slurm counts licenses in 32-bit integers.
MAX_LICENSES = 2**32 - 2


def check_partition(name: str, field: str = "--partition") -> str:
    """``name`` if it is a valid Slurm partition name, else an :class:`InputError`."""
    if not isinstance(name, str) or not PARTITION.fullmatch(name):
        raise InputError(f"{name!r} is not a Slurm partition name (letters, digits, _ . -; at "
                         "most 64; no blank, comma, quote or '=')", field=field)
    return name


def lua_string(text: str) -> str:
    """``text`` as a Lua string literal: quotes, backslashes and every byte outside printable
    ASCII escaped as ``\\ddd``."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        out.append(ch if 32 <= byte < 127 and ch not in '"\\' else f"\\{byte:03d}")
    return '"' + "".join(out) + '"'


def slurm_conf_lines(bb: float, unit: float = GB, *, bf_licenses: bool = False,
                     lua: bool = True, license: str = "bb") -> list[str]:
    """The ``slurm.conf`` lines for a burst buffer of ``bb`` bytes (whole licenses, rounded
    down: Slurm must never promise more than there is)."""
    if not unit >= 1:
        raise InputError(f"must be at least 1 byte per license, got {unit!r}",
                         field="--bb-unit")
    if not 0 < bb < math.inf:
        raise InputError(f"must be > 0 bytes, got {bb!r}", field="--bb")
    count = math.floor(bb / unit + 1e-9)
    if not 1 <= count <= MAX_LICENSES:
        raise InputError(f"{bb:g} B in licenses of {unit:g} B makes {count:g} licenses; Slurm "
                         f"counts 1 to {MAX_LICENSES:,}: choose another --bb-unit",
                         field="--bb-unit")
    lines = [f"Licenses={license}:{int(count)}"]
    if bf_licenses:
        lines.append("SchedulerParameters=bf_licenses  # merge with your other parameters")
    if lua:
        lines.append("JobSubmitPlugins=lua  # job_submit.lua beside slurm.conf")
    return lines


def job_submit_lua(partitions: Sequence[str] = (), *, hold_default: bool = True) -> str:
    """A ``job_submit.lua`` holding new jobs of ``partitions`` (none given: of every
    partition) for the bridge to start."""
    names = ", ".join(f"[{lua_string(check_partition(p))}] = true" for p in partitions)
    return f"""-- bbopt: new jobs of the partitions bbopt schedules are submitted held (priority 0);
-- `bbopt slurm run` starts them (scontrol update NodeList=..., scontrol release).
local BBOPT_PARTITIONS = {{ {names} }}  -- empty: every partition
local HOLD_DEFAULT = {"true" if hold_default else "false"}  -- a job without -p goes to the default

function slurm_job_submit(job_desc, part_list, submit_uid)
   local p = job_desc.partition
   local ours
   if next(BBOPT_PARTITIONS) == nil then
      ours = true
   elseif p == nil then
      ours = HOLD_DEFAULT
   else
      ours = BBOPT_PARTITIONS[p] == true
   end
   if ours then
      job_desc.priority = 0
   end
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end
"""
