"""Solver-quality benchmarks: an instance library of the decision problems policies face, runs
of every backend on it, and reports in the measures of the optimisation literature.

- :mod:`bbopt.bench.instances`: the versioned JSON schema of one instance (model, form,
  provenance, known optimum or front) and the tiers;
- :mod:`bbopt.bench.capture`: records instances from simulations of real traces;
- :mod:`bbopt.bench.export`: MPS / LP files of the integer forms, and solution files scored back;
- :mod:`bbopt.bench.run`: every applicable backend x budget x seed on a tier, resumable;
- :mod:`bbopt.bench.measures` and :mod:`bbopt.bench.report`: performance profiles (Dolan &
  More), shifted geometric means, primal integrals (Berthold), hypervolume ECDFs (COCO).

Documentation: ``docs/bench.md``.
"""
