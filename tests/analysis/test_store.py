"""The results store does not trust its own files: a run whose summary or jobs file is
truncated, empty or corrupt is reported and left out of ``collect``; a folder that is not a
store is an error; two writers of one store tolerate each other; a sweep's name cannot reach
outside the store; what names a run, how runs, failures and specifications are written, and
the temporaries a dead writer leaves. (Sweeps run again on a store: ``test_store_sweeps.py``.)"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bbopt.analysis.store import JOBS, SUMMARY, Store, check_name, collect, gzip_csv
from bbopt.analysis.sweep import run_sweep
from bbopt.cli import main
from bbopt.errors import InputError
from tests._store_data import damage, run_dirs, sweep_spec


def test_a_damaged_jobs_file_read_directly_is_one_input_error(store):
    bad = run_dirs(store)[0]
    damage(bad / JOBS, "half")
    with pytest.raises(InputError) as info:
        store.jobs_frame(bad.name)
    assert info.value.source == str(bad / JOBS)
    assert str(info.value) == (f"{bad / JOBS}: truncated or corrupt (EOFError); run the sweep "
                               "again to re-run it")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_any_summary_bytes_never_crash_collect(finished, tmp_path, data):
    root = tmp_path / "fuzz"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(finished, root)
    s = Store(root)
    run = run_dirs(s)[0]
    (run / SUMMARY).write_bytes(data)
    frame = collect(root)
    assert len(frame) == 1 and not s.done(run.name)  # no 300 bytes make a whole summary


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_jobs_file_is_done_only_whole(finished, tmp_path, data):
    root = tmp_path / "cut"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(finished, root)
    s = Store(root)
    run = run_dirs(s)[0]
    whole = (run / JOBS).read_bytes()
    keep = data.draw(st.integers(0, len(whole)))
    (run / JOBS).write_bytes(whole[:keep])
    assert s.done(run.name) == (keep == len(whole))


def test_a_run_written_before_sizes_were_recorded_is_checked_by_reading(store):
    run = run_dirs(store)[0]
    summary = json.loads((run / SUMMARY).read_text())
    del summary["jobs_bytes"]
    (run / SUMMARY).write_text(json.dumps(summary))
    assert store.done(run.name)
    damage(run / JOBS, "one-short")
    assert not store.done(run.name)
    assert store.unreadable_runs() == {run.name: "jobs file truncated or corrupt"}


def test_collect_refuses_a_folder_that_is_not_a_store(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InputError, match="not a results store"):
        collect(tmp_path)
    assert main(["sweep", "collect", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not a results store" in err and len(err.strip().splitlines()) == 1
    assert main(["sweep", "collect", str(tmp_path / "missing")]) == 2
    with pytest.raises(InputError) as info:
        collect(tmp_path)
    assert info.value.source == str(tmp_path) and str(info.value) == (
        f"{tmp_path}: not a results store (no runs/, specs/, failed/ folder: bbopt sweep SPEC "
        "--out DIR writes one)")
    with pytest.raises(InputError) as info:
        collect(tmp_path / "missing")
    assert str(info.value) == f"{tmp_path / 'missing'}: no such results directory"
    assert info.value.source == str(tmp_path / "missing")


def test_the_summaries_are_the_whole_runs_the_others_logged_once_each(tmp_path, caplog):
    store = Store(tmp_path / "s")
    for h in ("b1", "c1"):
        store.write_run(h, _summary(h), None)
    (store.runs / ".a-temporary").mkdir()  # sorts first: a temporary, not a run
    (store.runs / "a-file").write_text("x")  # not a directory
    (store.runs / "b0").mkdir()  # a run directory without its summary
    with caplog.at_level(logging.WARNING, logger="bbopt.store"):
        assert [s["hash"] for s in store.summaries()] == ["b1", "c1"]
    assert [r.getMessage() for r in caplog.records] == [
        f"{store.runs / 'b0'}: no summary; left out (the next sweep runs it again)"]
    assert store.unreadable_runs() == {"b0": "no summary"}


def test_an_empty_store_collects_to_nothing(tmp_path):
    (tmp_path / "runs").mkdir()
    assert collect(tmp_path).empty


@pytest.mark.parametrize("name", ["../x", "a/../../b", "/tmp/evil", "..", ".hidden", "-x",
                                  "a b", "", "x" * 129, "a\nb"])
def test_names_outside_the_store_are_refused(tmp_path, name):
    with pytest.raises(InputError, match="not a plain name"):
        check_name(name)
    with pytest.raises(InputError, match="not a plain name"):
        run_sweep(sweep_spec(name=name), tmp_path / "res", executor="serial", progress=False,
                  spec_text="x")
    assert not (tmp_path / "res").exists() and list(tmp_path.iterdir()) == []
    with pytest.raises(InputError):
        Store(tmp_path / "res").save_spec(name, "x")


@pytest.mark.parametrize("name", ["kth", "paper-1.2", "a_b+c=d", "x" * 128])
def test_plain_names_are_kept(tmp_path, name):
    path = Store(tmp_path).save_spec(name, "spec text")
    assert path.parent == tmp_path / "specs" and path.read_text() == "spec text"


def _summary(h: str, **over) -> dict:
    """A whole run's summary (``over`` replaces its top-level keys)."""
    return {"hash": h, "params": {"policy": "p"}, "metrics": {"mean_wait": 1.0},
            "provenance": {"hash_inputs": {"platform": {"nodes": 4, "bb": 0.0}}}} | over


def test_concurrent_writers_of_one_run_all_succeed(tmp_path):
    s = Store(tmp_path)
    h = "ab" * 12
    jobs = gzip_csv([["1", "2"]], ["job_id", "x"])
    barrier = threading.Barrier(8)
    errors = []

    def write():
        try:
            barrier.wait()
            Store(tmp_path).write_run(h, _summary(h), jobs)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert s.done(h) and [d.name for d in s.runs.iterdir()] == [h]


def test_a_broken_run_directory_is_replaced_a_whole_one_kept(tmp_path):
    s = Store(tmp_path)
    h = "cd" * 12
    (s.runs / h).mkdir(parents=True)
    (s.runs / h / SUMMARY).write_text('{"hash": "')
    s.write_run(h, _summary(h), None)
    assert s.done(h)
    s.write_run(h, {**_summary(h), "metrics": {"mean_wait": 2.0}}, None)  # the first one wins
    assert json.loads((s.runs / h / SUMMARY).read_text())["metrics"] == {"mean_wait": 1.0}


def test_cleaning_keeps_the_temporaries_of_live_writers(tmp_path):
    s = Store(tmp_path)
    s.runs.mkdir(parents=True)
    host = socket.gethostname()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = s.runs / f".tmp-{'a' * 24}-{sleeper.pid}-00000000-{host}"
        other_host = s.runs / f".tmp-{'b' * 24}-1-00000000-elsewhere-node-7"
        old_other = s.runs / f".tmp-{'c' * 24}-1-00000000-elsewhere"
        for d in (live, other_host, old_other):
            d.mkdir()
        two_days = time.time() - 2 * 86400
        os.utime(old_other, (two_days, two_days))
        assert s.clean_temporaries() == 1
        assert live.exists() and other_host.exists() and not old_other.exists()
    finally:
        sleeper.kill()
        sleeper.wait(30)
    assert s.clean_temporaries() == 1 and not live.exists()


summary_like = st.fixed_dictionaries({}, optional={
    "hash": st.just("RUN"), "params": st.one_of(st.dictionaries(
        st.sampled_from(["policy", "workload", "seed"]),
        st.one_of(st.text(max_size=3), st.integers(), st.none()), max_size=3), st.integers()),
    "metrics": st.one_of(st.dictionaries(st.text(max_size=3), st.one_of(
        st.floats(), st.none(), st.text(max_size=2), st.lists(st.integers(), max_size=1)),
        max_size=3), st.none()),
    "options": st.one_of(st.dictionaries(st.text(max_size=2), st.one_of(
        st.integers(), st.none(), st.lists(st.integers(), max_size=1)), max_size=2),
        st.integers(), st.text(max_size=2)),
    "provenance": st.one_of(
        st.builds(lambda workload: {"hash_inputs": {"platform": {"nodes": 4, "bb": 1.0}},
                                    **workload},
                  st.fixed_dictionaries({}, optional={"workload": st.one_of(
                      st.text(max_size=2), st.none(), st.just({"part_jobs": 3}))})),
        st.dictionaries(st.sampled_from(["hash_inputs", "host"]),
                        st.one_of(st.none(), st.integers(), st.just({})), max_size=2))})


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(summary_like)
# options and the workload's provenance that are not objects: read as absent (collect took
# them for objects and raised AttributeError)
@example({"hash": "RUN", "params": {"policy": "p"}, "metrics": {}, "options": 3,
          "provenance": {"hash_inputs": {"platform": {"nodes": 4, "bb": 1.0}},
                         "workload": "w.swf"}})
def test_any_parsable_summary_is_a_run_or_left_out_never_a_crash(finished, tmp_path, doc):
    root = tmp_path / "shape"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(finished, root)
    s = Store(root)
    run = run_dirs(s)[0]
    doc = {k: (run.name if v == "RUN" else v) for k, v in doc.items()}
    (run / SUMMARY).write_text(json.dumps(doc))
    frame = collect(root)
    assert len(frame) in (1, 2)
    if len(frame) == 2:  # accepted: it has what collect and report read
        assert isinstance(doc["params"]["policy"], str)
        import pandas as pd

        row = frame[frame["run"] == run.name].iloc[0]
        workload = doc["provenance"].get("workload")
        want = workload.get("part_jobs") if isinstance(workload, dict) else None
        assert row["part_jobs"] == want or (want is None and pd.isna(row["part_jobs"]))
        if isinstance(doc.get("options"), dict):
            assert {f"opt.{k}" for k in doc["options"]} <= set(frame.columns)


# ---------------------------------------------------------------- what names a run
def test_canonical_json_is_sorted_compact_and_plain():
    import dataclasses

    import numpy as np

    from bbopt.analysis.store import canonical

    @dataclasses.dataclass
    class Opt:
        depth: int = 2

    doc = {"b": np.arange(2), "a": np.float64(1.5), "c": {3, 1}, "d": Path("x/y"),
           "e": Opt(), "f": float("nan"), "g": frozenset({"z", "y"})}
    assert canonical(doc) == (
        '{"a":1.5,"b":[0,1],"c":[1,3],"d":"x/y","e":{"depth":2},"f":NaN,"g":["y","z"]}')
    assert canonical({"o": object}) == '{"o":"<class \'object\'>"}'


def test_a_run_is_named_by_24_hex_of_the_sha256_of_its_canonical_inputs():
    import hashlib

    from bbopt.analysis.store import run_hash, sha256

    want = hashlib.sha256(b'{"a":1,"b":[2,3]}').hexdigest()
    assert run_hash({"b": (2, 3), "a": 1}) == want[:24]
    assert sha256("x") == sha256(b"x") == hashlib.sha256(b"x").hexdigest()


def test_a_files_hash_reads_it_whole(tmp_path):
    import hashlib

    from bbopt.analysis.store import file_sha256

    data = bytes(range(256)) * 8193  # over two blocks of 1 MiB
    (tmp_path / "f").write_bytes(data)
    assert file_sha256(tmp_path / "f") == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("name,ok", [("a" * 128, True), ("a" * 129, False), ("_x", True),
                                     ("9.x+y=z-w", True), (".x", False), ("-x", False),
                                     ("a/b", False), ("", False), (3, False)])
def test_a_sweep_name_is_one_plain_component_of_at_most_128_characters(name, ok):
    if ok:
        assert check_name(name) == name
    else:
        with pytest.raises(InputError) as info:
            check_name(name, field="sweep")
        assert info.value.field == "sweep" and "is not a plain name" in str(info.value)


# ---------------------------------------------------------------- writing
def test_a_run_is_written_whole_with_the_size_of_its_jobs_file(tmp_path):
    store = Store(tmp_path / "s")
    assert not store.is_store() and store.summaries() == [] and store.unreadable_runs() == {}
    failed = store.write_failure("h1", {"error": "boom"})
    assert json.loads(failed.read_text()) == {"error": "boom"}
    assert store.is_store()
    jobs = gzip_csv([["1", "2"]], ["job_id", "x"])
    d = store.write_run("h1", _summary("h1"), jobs)
    assert d == store.runs / "h1" and not failed.exists()  # a failure retried and done
    assert json.loads((d / SUMMARY).read_text())["jobs_bytes"] == len(jobs)
    assert (d / JOBS).read_bytes() == jobs
    assert store.done("h1") and not store.done("h2")
    assert [p.name for p in store.runs.iterdir()] == ["h1"]  # no temporary left
    store.write_run("h2", _summary("h2"), None)
    assert "jobs_bytes" not in json.loads((store.runs / "h2" / SUMMARY).read_text())
    assert [s["hash"] for s in store.summaries()] == ["h1", "h2"]
    assert list(store.jobs_frame("h1")["job_id"]) == ["1"]
    with pytest.raises(InputError) as info:
        store.jobs_frame("h2")
    assert str(info.value) == f"{store.runs / 'h2'}: has no per-job outcomes"
    assert info.value.source == str(store.runs / "h2")


def test_job_and_user_ids_are_read_back_as_written(tmp_path):
    """Ids such as ``007`` stay text: read as numbers they would lose their leading zeros."""
    store = Store(tmp_path / "s")
    jobs = gzip_csv([["007", "010", "3"], ["8", "9", "4"]], ["job_id", "user", "nodes"])
    store.write_run("h1", _summary("h1"), jobs)
    frame = store.jobs_frame("h1")
    assert list(frame["job_id"]) == ["007", "8"] and list(frame["user"]) == ["010", "9"]
    assert list(frame["nodes"]) == [3, 4]


def test_a_temporary_is_named_after_its_run_writer_and_host():
    import re

    from bbopt.analysis.store import _temporary_name

    name = _temporary_name("h1")
    pattern = rf"\.tmp-h1-{os.getpid()}-[0-9a-f]{{8}}-{re.escape(socket.gethostname())}"
    assert re.fullmatch(pattern, name)
    assert _temporary_name("h1") != name  # two temporaries of one writer differ


def test_a_summary_is_indented_json_in_its_own_key_order_with_plain_values(tmp_path):
    store = Store(tmp_path / "s")
    summary = _summary("h1", metrics={"mean_wait": float("nan")})
    summary["spec"] = Path("w/grid.yaml")
    d = store.write_run("h1", summary, None)
    assert (d / SUMMARY).read_text() == (
        '{\n "hash": "h1",\n "params": {\n  "policy": "p"\n },\n "metrics": {\n'
        '  "mean_wait": NaN\n },\n "provenance": {\n  "hash_inputs": {\n   "platform": {\n'
        '    "nodes": 4,\n    "bb": 0.0\n   }\n  }\n },\n "spec": "w/grid.yaml"\n}')
    assert store.done("h1") and collect(store.root)["mean_wait"].isna().all()


def test_a_run_whose_writing_fails_leaves_nothing_behind(tmp_path):
    store = Store(tmp_path / "s")
    with pytest.raises(TypeError):
        store.write_run("h1", _summary("h1"), "not bytes")  # type: ignore[arg-type]
    assert list(store.runs.iterdir()) == [] and not store.done("h1")


@pytest.mark.parametrize("whole_at", [None, 3])
def test_a_run_replaced_by_another_writer_is_tried_three_times(tmp_path, monkeypatch, whole_at):
    """Another writer's run lands at ``runs/<h>`` just before each rename: broken every time,
    the writer gives up after its third try; whole at the third, that run is kept."""
    import bbopt.analysis.store as store_module

    store = Store(tmp_path / "s")
    h = "ef" * 12
    final = store.runs / h
    real = os.rename
    tries = []

    def rename(src, dst):
        if Path(dst) != final:
            return real(src, dst)
        tries.append(src)
        final.mkdir()
        theirs = _summary(h, metrics={"mean_wait": 9.0})
        (final / SUMMARY).write_text(json.dumps(theirs) if len(tries) == whole_at else "{")
        raise FileExistsError(dst)

    monkeypatch.setattr(store_module.os, "rename", rename)
    if whole_at is None:
        with pytest.raises(InputError) as info:
            store.write_run(h, _summary(h), None)
        assert str(info.value) == f"{final}: another writer keeps replacing this run"
        assert info.value.source == str(final) and not store.done(h)
    else:
        assert store.write_run(h, _summary(h), None) == final
        assert json.loads((final / SUMMARY).read_text())["metrics"] == {"mean_wait": 9.0}
    assert len(tries) == 3
    assert [p.name for p in store.runs.iterdir()] == [h]  # no temporary left, nothing aside


def test_gzip_csv_is_byte_identical_across_calls():
    import gzip

    a = gzip_csv([["1", "x,y"]], ["job_id", "v"])
    assert a == gzip_csv([["1", "x,y"]], ["job_id", "v"])
    assert gzip.decompress(a) == b'job_id,v\n1,"x,y"\n'
    assert a[4:8] == b"\0\0\0\0"  # no timestamp in the gzip header


def test_a_spec_is_saved_once_under_its_name_and_content_hash(tmp_path):
    from bbopt.analysis.store import sha256

    store = Store(tmp_path / "s")
    path = store.save_spec("grid", "a: 1\n")
    assert path == tmp_path / "s" / "specs" / f"grid-{sha256('a: 1' + chr(10))[:8]}.yaml"
    assert path.read_text() == "a: 1\n"
    path.write_text("kept")
    assert store.save_spec("grid", "a: 1\n") == path and path.read_text() == "kept"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


@pytest.mark.parametrize("doc,why", [
    ([], "summary does not name its run"),
    ({"hash": "other"}, "summary does not name its run"),
    ({"params": {}}, "summary names no policy"),
    ({"params": {"policy": 3}}, "summary names no policy"),
    ({"metrics": {"m": [1]}}, "summary holds no metrics"),
    ({"metrics": {"m": {"a": 1}}}, "summary holds no metrics"),
    ({"metrics": None}, "summary holds no metrics"),
    ({"provenance": {}}, "summary lacks the provenance of its platform"),
    ({"provenance": {"hash_inputs": []}}, "summary lacks the provenance of its platform"),
    ({"provenance": {"hash_inputs": {"platform": {"nodes": True, "bb": 0}}}},
     "summary lacks the provenance of its platform"),
    ({"provenance": {"hash_inputs": {"platform": {"nodes": 4}}}},
     "summary lacks the provenance of its platform"),
    ({"kind": "solver-run", "metrics": {"x": 1}}, "summary holds no solver metrics"),
    ({"kind": "solver-run", "params": [], "metrics": {"status": "OPTIMAL"}},
     "summary holds no solver metrics"),
    ({"kind": "solver-run", "metrics": {"status": "OPTIMAL"}}, None),
    ({"metrics": {"m": None, "n": "x"}}, None),
])
def test_a_summary_is_trusted_only_with_what_collect_reads(tmp_path, doc, why):
    store = Store(tmp_path / "s")
    d = store.runs / "h"
    d.mkdir(parents=True)
    s = doc if isinstance(doc, list) else _summary("h", **doc)
    (d / SUMMARY).write_text(json.dumps(s))
    assert store.problem(d) == why
    assert store.unreadable_runs() == ({} if why is None else {"h": why})


@pytest.mark.parametrize("write, why", [
    (lambda f: f.mkdir(), "summary unreadable (Is a directory)"),
    (lambda f: f.write_text(" \n\t"), "summary empty"),
    (lambda f: f.write_text('{"hash":  \n\n  '),
     "summary truncated or corrupt (Expecting value: line 3 column 3 (char 14))"),
    # the reason is one line of at most 80 characters of the parser's message
    (lambda f: f.write_text("[" * 100_000), "summary truncated or corrupt (maximum recursion "
                                            "depth exceeded while decoding a JSON array from a "
                                            "unicode stri)"),
])
def test_why_a_summary_cannot_be_read(tmp_path, write, why):
    store = Store(tmp_path / "s")
    (store.runs / "h").mkdir(parents=True)
    write(store.runs / "h" / SUMMARY)
    assert store.unreadable_runs() == {"h": why} and not store.done("h")


def test_a_jobs_file_of_another_size_than_recorded_is_truncated(tmp_path):
    store = Store(tmp_path / "s")
    d = store.write_run("h", _summary("h"), gzip_csv([["1"]], ["job_id"]))
    size = (d / JOBS).stat().st_size
    (d / JOBS).write_bytes((d / JOBS).read_bytes() + b"x")
    assert store.problem(d) == f"jobs file truncated ({size + 1} of {size} bytes)"
    (d / JOBS).unlink()
    assert store.problem(d) == "jobs file missing"
    (d / SUMMARY).write_text("  \n")
    assert store.problem(d) == "summary empty"
    (d / SUMMARY).unlink()
    assert store.problem(d) == "no summary"


# ---------------------------------------------------------------- temporaries
def test_the_temporaries_of_dead_or_stale_writers_are_removed(tmp_path):
    from bbopt.analysis.store import STALE_SECONDS, _temporary_name

    assert STALE_SECONDS == 86400.0
    store = Store(tmp_path / "s")
    store.runs.mkdir(parents=True)
    mine = _temporary_name("h")
    assert mine.startswith(f".tmp-h-{os.getpid()}-") and mine.endswith(socket.gethostname())
    old = time.time() - STALE_SECONDS - 60
    young = time.time() - STALE_SECONDS + 60
    far_old = store.runs / ".tmp-h-1-abcd1234-elsewhere"
    far_young = store.runs / ".tmp-h2-1-abcd1234-elsewhere"
    odd_old = store.runs / ".tmp-odd"
    odd_young = store.runs / ".tmp-odd2"
    for d, t in ((far_old, old), (far_young, young), (odd_old, old), (odd_young, young)):
        d.mkdir()
        os.utime(d, (t, t))
    (store.runs / mine).mkdir()  # this process's own: it writes nothing while it cleans
    assert store.clean_temporaries() == 3
    assert sorted(p.name for p in store.runs.iterdir()) == [".tmp-h2-1-abcd1234-elsewhere",
                                                            ".tmp-odd2"]


# ---------------------------------------------------------------- collecting
def test_collect_sorts_the_runs_flattens_options_and_can_leave_timing_out(tmp_path):
    store = Store(tmp_path / "s")
    for h, workload, policy, seed in (("h0", "b", "fcfs", 1), ("h1", "a", "sjf", 1),
                                      ("h2", "a", "fcfs", 2), ("h3", "a", "fcfs", 1)):
        s = _summary(h, params={"workload": workload, "policy": policy, "seed": seed},
                     options={"b": [1, 2], "a": 3}, sweep="g",
                     metrics={"wait": 1.0, "gap": None})
        s["provenance"] |= {"host": "n1", "wall_time": 2.0, "cpu_time": 1.5,
                            "started_at": "t0", "finished_at": "t1",
                            "bbopt_version": "9", "workload": {"content_sha256": "ab",
                                                               "part_jobs": 7}}
        store.write_run(h, s, None)
    frame = collect(store.root)
    assert list(frame["run"]) == ["h3", "h2", "h1", "h0"]  # workload, then policy, then seed
    assert list(frame.columns[:7]) == ["run", "sweep", "workload", "policy", "seed", "opt.a",
                                       "opt.b"]
    assert frame["opt.b"][0] == "[1, 2]" and frame["opt.a"][0] == 3
    assert frame["gap"].isna().all() and list(frame["part_jobs"]) == [7, 7, 7, 7]
    assert list(frame["wait"]) == [1.0] * 4
    assert frame["gap"].dtype == float and frame["wait"].dtype == float  # None read as NaN
    assert (frame["host"][0], frame["cpu_time"][0], frame["workload_sha256"][0]) == (
        "n1", 1.5, "ab")
    assert (frame["bbopt_version"][0], frame["wall_time"][0], frame["started_at"][0],
            frame["finished_at"][0], frame["sweep"][0]) == ("9", 2.0, "t0", "t1", "g")
    assert {"host", "wall_time", "cpu_time", "started_at", "finished_at"} <= set(frame)
    untimed = collect(store.root, include_timing=False)
    assert not {"host", "wall_time", "cpu_time", "started_at", "finished_at"} & set(untimed)
    assert "wait" in untimed


KEYS = ("workload", "part", "platform", "policy", "seed", "budget", "execution")


def test_collect_sorts_by_each_grid_coordinate_in_turn_missing_ones_first(tmp_path):
    """For each coordinate, two runs equal in the coordinates before it: the one lower in it
    first, although every coordinate after it says the opposite (and the store's order too)."""
    low = ("a", 0, "a", "a", 0, 1.0, "a")
    high = ("b", 1, "b", "b", 1, 2.0, "b")
    runs = []
    for i in range(len(KEYS)):
        runs.append(low[:i] + low[i:i + 1] + high[i + 1:])
        runs.append(low[:i] + high[i:i + 1] + low[i + 1:])
    runs.append(low[:5] + (None, "a"))  # no budget: before the budget of 1 s
    store = Store(tmp_path / "s")
    for k, coords in enumerate(runs):
        h = f"h{len(runs) - k:02d}"  # the store lists them in the opposite order
        params = {key: v for key, v in zip(KEYS, coords, strict=True) if v is not None}
        store.write_run(h, _summary(h, params={**params, "policy": coords[3]}), None)
    frame = collect(store.root)
    got = [tuple(None if pd.isna(v) else v for v in row) for row in frame[list(KEYS)].values]
    want = sorted(runs, key=lambda c: tuple((v is not None, v or 0) for v in c))
    assert got == want and frame["sweep"].eq("").all()  # (no sweep named: "")


def test_runs_equal_in_every_coordinate_keep_the_stores_order(tmp_path):
    store = Store(tmp_path / "s")
    for k in range(40):
        h = f"h{k:02d}"
        store.write_run(h, _summary(h, params={"policy": "pq"[k % 2]}), None)
    frame = collect(store.root)
    assert list(frame["run"]) == [f"h{k:02d}" for k in range(0, 40, 2)] + [
        f"h{k:02d}" for k in range(1, 40, 2)]


def test_a_table_is_written_as_csv(tmp_path):
    import pandas as pd

    from bbopt.analysis.store import write_table

    path = write_table(pd.DataFrame({"a": [1, 2]}), tmp_path / "t.csv")
    assert path.read_text() == "a\n1\n2\n"


def test_on_this_host_a_temporary_is_kept_while_its_writer_lives(tmp_path):
    store = Store(tmp_path / "s")
    host = socket.gethostname()
    live, dead = os.getppid(), 99_999_999  # (beyond any pid_max: no such process)
    made = {store.runs / f".tmp-h-{live}-abcd1234-{host}": True,
            store.runs / f".tmp-h-{dead}-abcd1234-{host}": False,
            store.root / "failed" / f"..tmp-h-{live}-abcd1234-{host}.json": True,
            store.root / "failed" / f"..tmp-h-{dead}-abcd1234-{host}.json": False,
            store.root / "specs" / f"..tmp-spec-{live}-abcd1234-{host}.yaml": True,
            store.root / "specs" / f"..tmp-spec-{dead}-abcd1234-{host}.yaml": False}
    for path, _ in made.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix:
            path.write_text("{}")
        else:
            path.mkdir()
    assert store.clean_temporaries() == 3
    assert {p: p.exists() for p in made} == made


def test_a_hostname_with_dashes_still_names_the_writer(tmp_path, monkeypatch):
    from bbopt.analysis import store as store_module

    monkeypatch.setattr(store_module.socket, "gethostname", lambda: "node-7")
    store = Store(tmp_path / "s")
    store.runs.mkdir(parents=True)
    live, dead = os.getppid(), 99_999_999
    kept = store.runs / f".tmp-h-{live}-abcd1234-node-7"
    gone = store.runs / f".tmp-h-{dead}-abcd1234-node-7"
    old = time.time() - 2 * 86400.0
    far = store.runs / ".tmp-h-1-abcd1234-other-host"  # another host, two days old
    for d in (kept, gone, far):
        d.mkdir()
    os.utime(far, (old, old))
    assert store.clean_temporaries() == 2
    assert [p.name for p in store.runs.iterdir()] == [kept.name]


@pytest.mark.parametrize("write", ["spec", "failure"])
def test_a_writer_killed_before_its_rename_leaves_a_temporary_the_cleaning_finds(
        tmp_path, monkeypatch, write):
    from bbopt.analysis import store as store_module

    store = Store(tmp_path / "s")

    def killed(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(store_module.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        if write == "spec":
            store.save_spec("grid", "a: 1\n")
        else:
            store.write_failure("h", {"error": "boom"})
    monkeypatch.undo()
    folder = store.root / ("specs" if write == "spec" else "failed")
    assert len(list(folder.iterdir())) == 1
    assert store.clean_temporaries() == 1  # (this process's own: no writer left)
    assert list(folder.iterdir()) == []


def test_a_failure_record_is_indented_json_with_plain_values(tmp_path):
    path = Store(tmp_path / "s").write_failure("h", {"error": "boom", "file": Path("a/b")})
    assert path == tmp_path / "s" / "failed" / "h.json"
    assert path.read_text() == '{\n "error": "boom",\n "file": "a/b"\n}'
    # the run failing again on its retry, and another run failing, in the existing folder
    store = Store(tmp_path / "s")
    assert store.write_failure("h", {"error": "again"}) == path
    assert json.loads(path.read_text()) == {"error": "again"}
    store.write_failure("h2", {"error": "other"})
    assert sorted(p.name for p in path.parent.iterdir()) == ["h.json", "h2.json"]


def test_the_content_hash_of_jobs_is_the_sha256_of_one_canonical_line_per_job():
    import hashlib

    from bbopt import Job
    from bbopt.analysis.store import canonical, jobs_sha256

    jobs = [Job("a", 0.0, 10.0, 5.0, nodes=2, bb=1.0, extra={"k": 1}), Job("b", 1.0, 20.0)]
    lines = [canonical(["a", 0.0, 10.0, 5.0, 2, 1.0, 0.0, 0.0, None, 0.0, False, False,
                        {"k": 1}]),
             canonical(["b", 1.0, 20.0, None, 1, 0.0, 0.0, 0.0, None, 0.0, False, False, {}])]
    want = hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()
    assert jobs_sha256(jobs) == want


def test_a_bad_name_is_refused_with_the_rule_under_the_field_name():
    with pytest.raises(InputError) as info:
        check_name("../x")
    assert info.value.field == "name"
    assert str(info.value) == (
        "field 'name': '../x' is not a plain name: use letters, digits and _ . + = - (at most "
        "128, not starting with a dot or a dash), no '/' or '..'")


def test_a_temporary_is_stale_from_exactly_a_day_and_a_writer_without_host_is_local(
        tmp_path, monkeypatch):
    from bbopt.analysis import store as store_module
    from bbopt.analysis.store import STALE_SECONDS

    now = 2_000_000_000.0
    store = Store(tmp_path / "s")
    store.runs.mkdir(parents=True)
    gone = [store.runs / ".tmp-odd", store.runs / ".tmp-h-1-abcd1234-elsewhere",
            store.runs / ".tmp-h-99999999-abcd1234"]  # (no host: a writer of this host)
    kept = [store.runs / ".tmp-odd2", store.runs / ".tmp-h2-1-abcd1234-elsewhere",
            store.runs / f".tmp-h3-{os.getppid()}-abcd1234"]
    for d in gone[:2]:
        d.mkdir()
        os.utime(d, (now - STALE_SECONDS, now - STALE_SECONDS))  # exactly a day: stale
    for d in (*kept[:2], gone[2], kept[2]):
        d.mkdir()
        os.utime(d, (now - STALE_SECONDS + 1, now - STALE_SECONDS + 1))
    monkeypatch.setattr(store_module.time, "time", lambda: now)
    assert store.clean_temporaries() == 3
    monkeypatch.undo()
    assert sorted(p.name for p in store.runs.iterdir()) == sorted(p.name for p in kept)
    assert store.unreadable_runs() == {}  # temporaries are not runs


def test_jobs_files_are_gzip_level_6():
    import gzip

    assert gzip_csv([["1"]], ["job_id"]) == gzip.compress(b"job_id\n1\n", compresslevel=6,
                                                          mtime=0)
    # rows on which every level from 1 to 9 compresses differently
    rows = [[str(i), str(i * 7919 % 1000), str(i * i % 97), f"x{i % 13}"] for i in range(3000)]
    data = ("job_id,a,b,c\n" + "".join(",".join(r) + "\n" for r in rows)).encode()
    assert gzip_csv(rows, ["job_id", "a", "b", "c"]) == gzip.compress(data, compresslevel=6,
                                                                      mtime=0)
    assert gzip.compress(data, compresslevel=7, mtime=0) != gzip.compress(data, compresslevel=6,
                                                                           mtime=0)


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    import sys

    import pandas as pd

    from bbopt.analysis.store import write_table

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as without the parquet extra
    with pytest.raises(InputError) as info:
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "u.parquet")
    assert str(info.value) == (f"{tmp_path / 'u.parquet'}: Parquet needs pyarrow: pip install "
                               "'bbopt[parquet]'")


def test_a_table_is_written_as_parquet_without_its_index(tmp_path):
    import pandas as pd

    pq = pytest.importorskip("pyarrow.parquet", reason="the parquet extra is not installed")
    from bbopt.analysis.store import write_table

    path = write_table(pd.DataFrame({"a": [1, 2]}, index=[5, 6]), tmp_path / "t.parquet")
    assert path == tmp_path / "t.parquet" and pq.read_schema(path).names == ["a"]
    assert list(pd.read_parquet(path)["a"]) == [1, 2]
