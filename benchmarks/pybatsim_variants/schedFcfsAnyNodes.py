"""pybatsim's schedFcfs without its consecutive-resources filter: FCFS on any free nodes
(benchmarks/speed/batsim_agreement.py: the one difference between schedFcfs and bbopt's fcfs)."""

from batsim.sched.algorithms.filling import filler_sched


def SchedFcfsAnyNodes(scheduler):
    return filler_sched(scheduler, abort_on_first_nonfitting=True)
