"""pybatsim's fillerSched with its set of open jobs replaced by the arrival-ordered queue and
one scheduling pass per Batsim message (after all of its events), as bbopt's filler decides
(benchmarks/speed/batsim_agreement.py)."""

from itertools import islice

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class FillerSchedInOrder(BatsimScheduler):
    def onAfterBatsimInit(self):
        self.waiting = []
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))
        self.dirty = False

    def onJobSubmission(self, job):
        self.waiting.append(job)
        self.dirty = True

    def onJobCompletion(self, job):
        self.free |= job.allocation
        self.dirty = True

    def onNoMoreEvents(self):
        if not getattr(self, "dirty", False):
            return
        self.dirty = False
        started = []
        for job in list(self.waiting):
            if job.requested_resources <= len(self.free):
                job.allocation = ProcSet(*islice(self.free, job.requested_resources))
                self.free -= job.allocation
                self.waiting.remove(job)
                started.append(job)
        if started:
            self.bs.execute_jobs(started)
