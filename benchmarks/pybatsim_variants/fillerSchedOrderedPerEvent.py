"""pybatsim's fillerSched with its set of open jobs replaced by the arrival-ordered queue, still
scheduling after every event (benchmarks/speed/batsim_agreement.py: what per-event passes
change)."""

from itertools import islice

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class FillerSchedOrderedPerEvent(BatsimScheduler):
    def onAfterBatsimInit(self):
        self.waiting = []
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))

    def schedule(self):
        started = []
        for job in list(self.waiting):
            if job.requested_resources <= len(self.free):
                job.allocation = ProcSet(*islice(self.free, job.requested_resources))
                self.free -= job.allocation
                self.waiting.remove(job)
                started.append(job)
        if started:
            self.bs.execute_jobs(started)

    def onJobSubmission(self, job):
        self.waiting.append(job)
        self.schedule()

    def onJobCompletion(self, job):
        self.free |= job.allocation
        self.schedule()
