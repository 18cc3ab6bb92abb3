"""Under fuzz, the command line ends in a result or one ``bbopt: error:`` line with status 2:
no other exception escapes ``bbopt.cli.main``, on every input surface (traces, platform files,
states, a results store and its jobs.csv files, generator parameters, sweep specifications,
entitlement shares, the Slurm site config). Inputs are drawn near
valid ones (magnitudes, signs, types, missing and unknown fields, a byte-order mark,
truncations), where the mistakes are."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bbopt.cli import main

FUZZ = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

numbers = st.one_of(st.integers(-3, 3), st.integers(10**6, 10**30), st.just(10**400),
                    st.floats(allow_nan=True, allow_infinity=True), st.just("4"),
                    st.just(None), st.just(True), st.just([1]), st.just({"a": 1}))
texts = st.one_of(st.text(max_size=12), st.sampled_from(["../x", "/tmp/x", "a b", "é",
                                                         "1TB", "0", "-1", "1e400"]))


def _run(argv: list[str], capsys) -> None:
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own usage error: status 2, one message
        rc = exc.code
    err = capsys.readouterr().err
    assert rc in (0, 1, 2), (argv, rc, err)
    assert "Traceback" not in err
    if rc == 2:
        assert "error" in err


def _cut(data: bytes, cut: int | None, bom: bool) -> bytes:
    data = data if cut is None else data[:cut]
    return (b"\xef\xbb\xbf" + data) if bom else data


@FUZZ
@given(st.lists(st.lists(st.one_of(st.integers(-2, 200), st.just(10**20), st.just("x"),
                                   st.just("1e400")), min_size=17, max_size=19),
                min_size=1, max_size=6),
       st.one_of(st.none(), st.integers(0, 200)), st.booleans(),
       st.sampled_from(["96", "0", "-5", "100000000000000000000", "x"]))
def test_swf_traces(tmp_path, capsys, rows, cut, bom, max_nodes):
    text = f"; MaxNodes: {max_nodes}\n" + "".join(" ".join(map(str, r)) + "\n" for r in rows)
    path = tmp_path / "t.swf"
    path.write_bytes(_cut(text.encode(), cut, bom))
    _run(["simulate", "-w", str(path), "--no-progress", "--policy", "fcfs-bb"], capsys)


@FUZZ
@given(st.dictionaries(st.sampled_from(["nodes", "bb", "name", "node_ssd", "node_sdd",
                                        "tree"]), numbers | texts, max_size=4),
       st.sampled_from([".yaml", ".json"]), st.one_of(st.none(), st.integers(0, 40)),
       st.booleans())
def test_platform_files(tmp_path, capsys, doc, suffix, cut, bom):
    path = tmp_path / f"p{suffix}"
    try:
        text = json.dumps(doc)
    except ValueError:
        return
    path.write_bytes(_cut(text.encode(), cut, bom))
    _run(["simulate", "--jobs", "20", "-p", str(path), "--no-progress"], capsys)


@FUZZ
@given(st.dictionaries(st.sampled_from(["time", "platform", "running", "queue", "memory",
                                        "version", "extra"]),
                       numbers | texts, max_size=3),
       st.dictionaries(st.sampled_from(["id", "walltime", "nodes", "bb", "submit", "user",
                                        "runtime", "nodez"]), numbers | texts, max_size=5),
       st.one_of(st.none(), st.integers(0, 120)), st.booleans(), st.booleans())
def test_decide_states(tmp_path, capsys, top, job, cut, bom, twice):
    doc = {"time": 10, "platform": {"nodes": 8, "bb": 1e12}, "running": [],
           "queue": [{"id": "a", "walltime": 100, "nodes": 2, **job}], **top}
    try:
        text = json.dumps(doc)
    except ValueError:
        return
    if twice:
        text = text.replace('"time":', '"time": 1, "time":', 1)
    path = tmp_path / "s.json"
    path.write_bytes(_cut(text.encode(), cut, bom))
    _run(["decide", str(path)], capsys)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["runs/abc", "runs/.tmp-x", "specs", "failed",
                                           "notes"]),
                          st.sampled_from(["summary.json", "jobs.csv.gz", "x.json"]),
                          st.binary(max_size=80)), max_size=4))
def test_sweep_collect_on_any_folder(tmp_path, capsys, files):
    root = tmp_path / "store"
    root.mkdir(exist_ok=True)
    for folder, name, data in files:
        d = root / folder
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
    _run(["sweep", "collect", str(root)], capsys)
    _run(["report", str(root), "--out", str(tmp_path / "rep")], capsys)


@FUZZ
@given(st.sampled_from(["kth-like", "herbein", "jeannot", "capability", "first", "scale-nodes",
                        "max-nodes", "omfs-preemption", "nope"]),
       st.dictionaries(st.sampled_from(["n_jobs", "n", "nodes", "factor", "load", "n_apps",
                                        "preemptable", "duration", "nodez"]),
                       st.one_of(st.integers(-2, 3), st.just(10**12), st.just(1e400),
                                 st.just(-1.5), st.just("x"), st.just("null")), max_size=2))
def test_generate_parameters(tmp_path, capsys, name, params):
    src = tmp_path / "in.swf"
    src.write_text("".join(f"{k + 1} {k * 10} 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n"
                           for k in range(5)))
    argv = ["generate", name, *(f"{k}={v}" for k, v in params.items()), "--out",
            str(tmp_path / "out.swf"), "-w", str(src)]
    if name in ("kth-like", "herbein", "jeannot", "capability"):
        argv = argv[:-2]
        if not params:
            argv.insert(2, "n_jobs=20" if name != "jeannot" else "n_apps=10")
    _run(argv, capsys)


@FUZZ
@given(texts, texts, st.lists(texts, max_size=2), st.booleans(), st.booleans())
def test_slurm_site_config(tmp_path, capsys, bb, unit, partitions, lua, exists):
    path = tmp_path / "job_submit.lua"
    if exists:
        path.write_text("-- site\n")
    argv = ["slurm", "site-config", "--bb", bb, "--bb-unit", unit,
            *(x for p in partitions for x in ("--partition", p))]
    if lua:
        argv += ["--lua", str(path)]
    _run(argv, capsys)
    if exists:
        assert path.read_text() == "-- site\n"  # never replaced without --force


@FUZZ
@given(st.dictionaries(st.sampled_from(["nb_res", "jobs", "profiles", "extra"]),
                       numbers | texts, max_size=2),
       st.dictionaries(st.sampled_from(["id", "subtime", "walltime", "res", "profile"]),
                       numbers | texts, max_size=3),
       st.one_of(st.none(), st.integers(0, 150)), st.booleans())
def test_batsim_workloads(tmp_path, capsys, top, job, cut, bom):
    doc = {"nb_res": 8, "jobs": [{"id": "1", "subtime": 0, "walltime": 100, "res": 2,
                                  "profile": "p", **job}],
           "profiles": {"p": {"type": "delay", "delay": 50}}, **top}
    try:
        text = json.dumps(doc)
    except ValueError:
        return
    path = tmp_path / "w.json"
    path.write_bytes(_cut(text.encode(), cut, bom))
    _run(["simulate", "-w", str(path), "--no-progress", "--policy", "fcfs-bb"], capsys)


SPEC = {"name": "fz", "workloads": {"w": {"generator": {"name": "kth-like", "n_jobs": 20}}},
        "platforms": [{"name": "small", "nodes": 16, "bb": "100GB"}],
        "policies": ["fcfs-bb", {"name": "plan-2", "options": {"budget": 1}}], "seeds": [0]}
SPEC_PATHS = [("name",), ("workloads",), ("platforms",), ("policies",), ("seeds",),
              ("budgets",), ("executions",), ("tick",), ("warmup",), ("cooldown",),
              ("reference",), ("metrics",), ("exclude",), ("zip",), ("quick",), ("report",),
              ("budget_mode",), ("description",), ("extra",),
              ("workloads", "w"), ("workloads", "w", "first"), ("workloads", "w", "split"),
              ("workloads", "w", "transforms"), ("workloads", "w", "seed"),
              ("workloads", "w", "generator", "n_jobs"), ("workloads", "w", "generator", "name"),
              ("platforms", 0), ("platforms", 0, "nodes"), ("platforms", 0, "bb"),
              ("platforms", 0, "node_sdd"), ("policies", 1), ("policies", 1, "options"),
              ("policies", 1, "options", "budget"), ("policies", 1, "sweep"), ("seeds", 0)]
values = numbers | texts | st.lists(numbers | texts, max_size=2) | \
    st.dictionaries(texts, numbers, max_size=2)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(SPEC_PATHS), values), max_size=3),
       st.one_of(st.none(), st.integers(0, 200)), st.booleans())
# (a policy entry made a list, then given a field by name: the test's own walk compared the name
# with the list's length)
@example([(("policies", 1), []), (("policies", 1, "options"), 10**300)], None, False)
@example([(("policies", 1, "options", "budget"), 10**400)], None, False)  # (an OverflowError)
def test_sweep_specs(tmp_path, capsys, changes, cut, bom):
    """A spec's every field, nested ones too, of the wrong kind, shape or range: the sweep is
    planned (--dry-run: every field and policy option checked, nothing run) or refused."""
    import copy

    import yaml

    doc = copy.deepcopy(SPEC)
    for path, value in changes:
        node = doc
        for key in path[:-1]:
            node = node[key] if isinstance(node, dict) and key in node or \
                isinstance(node, list) and isinstance(key, int) and key < len(node) else None
            if node is None:
                break
        if isinstance(node, dict) or isinstance(node, list) and isinstance(path[-1], int) \
                and path[-1] < len(node):
            node[path[-1]] = value
    try:
        text = yaml.safe_dump(doc)
    except (yaml.YAMLError, ValueError, OverflowError):
        return
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(_cut(text.encode(), cut, bom))
    _run(["sweep", str(spec), "--dry-run", "--out", str(tmp_path / "store")], capsys)


@FUZZ
@given(st.one_of(st.dictionaries(st.one_of(texts, st.sampled_from(["a", "b", "0"])),
                                 numbers | texts, max_size=4),
                 numbers, texts, st.lists(numbers, max_size=3)),
       st.sampled_from([".yaml", ".json"]), st.one_of(st.none(), st.integers(0, 40)),
       st.booleans())
@example({"": 10**400}, ".yaml", None, False)  # (a share beyond any float: an OverflowError)
def test_shares_files(tmp_path, capsys, doc, suffix, cut, bom):
    """Entitlement shares of any kind, sum and entity for a fair-share policy."""
    try:
        text = json.dumps(doc)
    except ValueError:
        return
    path = tmp_path / f"shares{suffix}"
    path.write_bytes(_cut(text.encode(), cut, bom))
    _run(["simulate", "--jobs", "20", "--policy", "omfs", "--shares", str(path),
          "--no-progress"], capsys)


JOBS_COLUMNS = ["job_id", "submission_time", "requested_number_of_resources",
                "requested_time", "final_state", "starting_time", "finish_time", "bb",
                "trace_runtime", "user", "allocated_resources"]
cells = st.one_of(st.integers(-3, 10**6), st.just(10**30), st.floats(allow_nan=True),
                  st.sampled_from(["", "x", "nan", "inf", "-1", "1.5", "COMPLETED_SUCCESSFULLY",
                                   "REJECTED", "0-3", '"']))


@pytest.fixture(scope="module")
def sweep_store(tmp_path_factory):
    """A small finished store (two runs of one scenario) to damage."""
    import yaml

    root = tmp_path_factory.mktemp("store")
    spec = root / "spec.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "policies": ["fcfs-bb", "sjf-bb"],
                                    "reference": "fcfs-bb"}))
    assert main(["sweep", str(spec), "--serial", "--no-progress", "--out",
                 str(root / "store")]) == 0
    return root / "store"


@pytest.mark.slow  # (each example writes and reports a store: about 10 s in all)
@FUZZ
@given(st.lists(st.sampled_from(JOBS_COLUMNS), unique=True, max_size=len(JOBS_COLUMNS)),
       st.lists(st.lists(cells, min_size=len(JOBS_COLUMNS), max_size=len(JOBS_COLUMNS)),
                max_size=4),
       st.booleans())
def test_jobs_csv_in_a_store(tmp_path, capsys, sweep_store, columns, rows, whole):
    """A run's jobs.csv whose summary records its size (so the store takes it as whole) but
    whose columns or cells are wrong: ``report`` ends in a report or a one-line error."""
    import csv
    import gzip
    import io
    import shutil

    store = tmp_path / "store"
    if not store.exists():
        shutil.copytree(sweep_store, store)
    run = sorted((store / "runs").iterdir())[0]
    columns = JOBS_COLUMNS if whole else columns
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(columns)
    for r in rows:
        writer.writerow(r[:len(columns)])
    data = gzip.compress(buf.getvalue().encode())
    (run / "jobs.csv.gz").write_bytes(data)
    summary = json.loads((run / "summary.json").read_text())
    summary["jobs_bytes"] = len(data)
    (run / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "rep"
    shutil.rmtree(out, ignore_errors=True)
    _run(["report", str(store), "--out", str(out)], capsys)
