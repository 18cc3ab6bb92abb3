"""Test policies shared by several test files."""

from __future__ import annotations

from bbopt.core import ClusterState, Decision, Start


class PoolOnly:
    """Starts every waiting job whose nodes and BB fit what is free, as if the BB were one pool
    (blind to named BB nodes), and records the waiting ids it saw at each decision
    (``queues``: (time, ids))."""

    name = "pool-only"
    io_aware = False

    def __init__(self) -> None:
        self.queues: list[tuple[float, list[str]]] = []

    def decide(self, state: ClusterState) -> Decision:
        self.queues.append((state.time, [j.id for j in state.queue]))
        free_n, free_b = state.free()
        out = []
        for job in state.queue:
            if job.nodes <= free_n and job.bb <= free_b:
                out.append(Start(job.id))
                free_n -= job.nodes
                free_b -= job.bb
        return Decision(start=tuple(out))


def conservative_memory(platform, reservations: dict[str, float],
                        holding: dict[str, float],
                        pieces: dict[str, list[float]] | None = None) -> dict:
    """The memory conservative-bb returns: its reservations by job id and, on named BB nodes,
    the bytes each reservation holds on each BB node (``pieces``; ``None``: jobs without BB)
    and the jobs holding resources after the decision by id with their expected ends (what
    tells the next decision whether something came free)."""
    if platform.bb_nodes is None:
        return {"reservations": reservations}
    if pieces is None:
        pieces = {jid: [0.0] * len(platform.bb_nodes) for jid in reservations}
    return {"reservations": reservations, "pieces": pieces, "holding": holding}
