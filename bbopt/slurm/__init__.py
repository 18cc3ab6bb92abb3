"""bbopt in front of a real Slurm: a local cluster for tests and experiments, the burst buffer as
a license pool, the scheduling bridge (``bbopt slurm run``) and trace replay through Slurm
(``bbopt slurm replay``). Needs Slurm's programs (Debian: ``apt-get install slurm-wlm munge``)
only when a cluster is actually used; importing this package needs nothing.
"""

from bbopt.slurm.bridge import Bridge
from bbopt.slurm.cluster import LocalSlurm, SlurmError, why_unavailable
from bbopt.slurm.commands import SlurmCommands
from bbopt.slurm.replay import replay, scale_workload

__all__ = ["Bridge", "LocalSlurm", "SlurmCommands", "SlurmError", "replay", "scale_workload",
           "why_unavailable"]
