"""The trained-agent plug-in of examples/rl (``--plugin rl_policy``): ``rl:PATH`` names a saved
MaskablePPO model and runs in ``bbopt compare`` beside bbopt's own policies, as the same
:class:`~bbopt.gym.policy.AgentPolicy` the environment steps. An untrained agent saved in a
temporary folder stands for the trained one (the policy reads whichever file it is named)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("gymnasium", reason="bbopt.gym needs the [rl] extra (gymnasium)")
pytest.importorskip("sb3_contrib", reason="the example's agent needs sb3-contrib (its "
                    "requirements.txt), not a dependency of bbopt")

from sb3_contrib import MaskablePPO  # noqa: E402

from bbopt import simulate  # noqa: E402
from bbopt.cli import main  # noqa: E402
from bbopt.core import Platform  # noqa: E402
from bbopt.gym.envs import PickJobEnv  # noqa: E402
from bbopt.loading import load_workload  # noqa: E402
from bbopt.outputs import run_file  # noqa: E402
from bbopt.policies import make_policy  # noqa: E402
from bbopt.policies.registry import POLICIES  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rl"


@pytest.fixture(scope="module")
def model(kth_swf, tmp_path_factory):
    """An untrained agent of the example's environment, saved as train.py saves one."""
    jobs = load_workload(kth_swf, n_jobs=400, seed=0, platform=Platform.kopanski())[0]
    env = PickJobEnv(jobs, "kopanski", episode_jobs=64, window=16, backfill="fcfs-bb")
    agent = MaskablePPO("MlpPolicy", env, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [8]})
    folder = tmp_path_factory.mktemp("rl")
    agent.save(folder / "model.zip")
    settings = env.observer.settings() | {"reservation": env.reservation, "backfill": "fcfs-bb"}
    (folder / "model.json").write_text(json.dumps(settings))
    return folder / "model.zip"


@pytest.fixture
def plugin(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    yield "rl_policy"
    POLICIES.remove("rl:")
    for module in ("rl_policy", "common"):
        sys.modules.pop(module, None)


def test_compare_runs_the_saved_agent_through_the_plugin(kth_swf, model, plugin, tmp_path):
    out = tmp_path / "out"
    name = f"rl:{model}"
    assert main(["compare", "--plugin", plugin, "--workload", str(kth_swf), "--jobs", "150",
                 "--policies", f"sjf-bb,{name}", "--workers", "1", "--no-progress",
                 "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["metrics"]) == ["sjf-bb", name]
    assert summary["metrics"][name]["jobs"] == 150
    # the plug-in's policy is the agent: the same schedule as simulate() with it, in the file
    # named after the policy with its path flattened
    written = out / run_file(name)
    assert written.name == f"rl:{str(model).replace('/', '_')}_jobs.csv"
    jobs, workload = load_workload(kth_swf, n_jobs=150, seed=0, platform=Platform.kopanski())
    agent = make_policy(name)
    assert agent.name == name and agent.window == 16
    ref = simulate(jobs, Platform.kopanski(), agent, workload_name=workload)
    ref = ref.to_csv(tmp_path / "ref.csv")
    assert written.read_bytes() == ref.read_bytes()


def test_without_the_plugin_the_name_is_unknown(kth_swf, model, capsys):
    assert main(["compare", "--workload", str(kth_swf), "--jobs", "50", "--policies",
                 f"sjf-bb,rl:{model}", "--workers", "1", "--no-progress"]) == 2
    assert "unknown policy" in capsys.readouterr().err


def test_a_missing_model_file_is_named(kth_swf, plugin, tmp_path, capsys):
    assert main(["compare", "--plugin", plugin, "--workload", str(kth_swf), "--jobs", "50",
                 "--policies", f"rl:{tmp_path / 'none.zip'}", "--workers", "1",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "none.zip" in err and "Traceback" not in err
