"""The planner's one compiled twin: its earliest-fit, reserve and placement loops written for
numba (the optional extra ``fast``), each with the same floating-point operations in the same
order as the pure-Python loop it translates, which stays the reference (the same starts,
pieces and scores, bit for bit; ``tests/planner/jit/`` compares each pair, and
``BBOPT_NO_JIT=1`` runs the Python loops).

Kopanski & Rzadca, Euro-Par 2021, Sections 3.2, 3.3 and 4.1 (a job starts where its nodes and
its burst buffer are free for its whole walltime; plan-2's greedy plan of a permutation;
placement on named BB nodes). The modules and the loops they translate:

- :mod:`bbopt.planner.jit.pool`: the plan walk on the BB pool, ``PlanModel._run`` and
  ``SwapWalk._walk`` (:mod:`bbopt.models.plan`, :mod:`bbopt.models.plan_walk`);
- :mod:`bbopt.planner.jit.named`: placement of pieces on named BB nodes and proximity
  (:mod:`bbopt.models.plan_named`, ``PlanModel._run_named``, ``SwapWalk._walk_named``) and
  conservative-bb's decision on named nodes (its ``_replan`` on the planner);
- :mod:`bbopt.planner.jit.compression`: the two-dimensional profile (:class:`bbopt.planner.
  Profile`'s ``advance``, ``fits``, ``reserve``; :mod:`bbopt.planner.scans`' ``earliest_fit2``
  and ``earlier_fit2``) and conservative-bb's compression (:mod:`bbopt.policies.freed_slots`);
- :mod:`bbopt.planner.jit.arrays`: that profile kept in arrays between decisions
  (:class:`~bbopt.planner.jit.arrays.ArrayProfile`), the methods conservative-bb calls.

Nothing else in bbopt holds a compiled earliest-fit or reserve loop. The modules import numba
and are loaded on first use by name (:data:`bbopt.jit.KERNELS`), so runs that never need them
do not pay numba's import.
"""
