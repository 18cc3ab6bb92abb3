"""What training and evaluation share: the KTH-SP2 trace with BB, the split between the jobs
the agent trains on and those it is evaluated on, and the environment's settings."""

from __future__ import annotations

import json
from pathlib import Path

from bbopt.core import Platform
from bbopt.loading import load_workload

TRACE = "KTH-SP2-1996-2.1-cln.swf"  # found through $BBOPT_DATA
#: The evaluation uses the first EVAL_JOBS jobs (bbopt compare --jobs); training never sees them.
EVAL_JOBS = 3000
ENV = {"platform": "kopanski", "episode_jobs": 1024, "window": 16, "backfill": "fcfs-bb",
       "reward": "bsld", "reward_mode": "step"}
HERE = Path(__file__).resolve().parent


def _kth():
    """KTH-SP2 with Kopanski's log-normal BB requests (seed 0, as ``bbopt compare`` draws them),
    by submission."""
    jobs = load_workload(TRACE, seed=0, platform=Platform.kopanski())[0]
    return sorted(jobs, key=lambda j: j.submit)


def training_jobs():
    """The trace less the jobs of the evaluation."""
    return _kth()[EVAL_JOBS:]


def evaluation_jobs():
    """The first EVAL_JOBS jobs as ``bbopt compare --jobs EVAL_JOBS`` reads them."""
    return load_workload(TRACE, n_jobs=EVAL_JOBS, seed=0, platform=Platform.kopanski())[0]


def save_settings(path: Path, settings: dict) -> None:
    path.write_text(json.dumps(settings, indent=1))


def load_settings(path: Path) -> dict:
    return json.loads(path.read_text())
