"""Jeannot, Pallez & Vidal's periodic applications for tests: ``n`` iterations of ``w`` seconds
of compute then ``io_seconds`` of I/O at 1 GB/s (``B``), the walltime their whole length."""

from __future__ import annotations

from bbopt.core import Job

B = 1e9  #: the I/O bandwidth of every application, bytes per second


def periodic(id_: str, n: int, w: float, io_seconds: float, nodes: int = 1,
             submit: float = 0.0) -> Job:
    """An application of ``n`` iterations of ``w`` s of compute and ``io_seconds`` of I/O."""
    t = n * (w + io_seconds)
    return Job(id_, submit, walltime=t, runtime=t, nodes=nodes,
               extra={"io": {"iterations": n, "compute_seconds": w,
                             "io_bytes": io_seconds * B, "io_bandwidth": B}})
