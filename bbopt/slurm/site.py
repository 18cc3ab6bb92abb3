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
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bbopt.core import GB


def slurm_conf_lines(bb: float, unit: float = GB, *, bf_licenses: bool = False,
                     lua: bool = True, license: str = "bb") -> list[str]:
    """The ``slurm.conf`` lines for a burst buffer of ``bb`` bytes (whole licenses, rounded
    down: Slurm must never promise more than there is)."""
    if not bb > 0 or not unit > 0:
        raise ValueError(f"bb and unit must be > 0, got {bb!r} and {unit!r}")
    lines = [f"Licenses={license}:{int(math.floor(bb / unit + 1e-9))}"]
    if bf_licenses:
        lines.append("SchedulerParameters=bf_licenses  # merge with your other parameters")
    if lua:
        lines.append("JobSubmitPlugins=lua  # job_submit.lua beside slurm.conf")
    return lines


def job_submit_lua(partitions: Sequence[str] = (), *, hold_default: bool = True) -> str:
    """A ``job_submit.lua`` holding new jobs of ``partitions`` (none given: of every
    partition) for the bridge to start."""
    names = ", ".join(f'["{p}"] = true' for p in partitions)
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
