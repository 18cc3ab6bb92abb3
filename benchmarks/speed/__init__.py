"""The speed suite: whole-process timings of the simulator, the policies, the solvers and the
interfaces, each script beside the reference it measures against in the same run."""
