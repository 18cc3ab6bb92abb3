"""The one lookup rule for trace names and ``bbopt data fetch`` (bbopt.workloads.archive)."""

from __future__ import annotations

import contextlib
import gzip
import http.server
import io
import socket
import threading
from pathlib import Path

import pytest

from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.loading import find_workload
from bbopt.workloads.archive import (
    TRACES,
    TraceUnavailable,
    data_dirs,
    fetch_trace,
    find_trace,
    user_data_dir,
)
from bbopt.workloads.batsim import read_batsim
from bbopt.workloads.swf import read_swf

SWF = "; MaxProcs: 4\n1 0 5 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n"
BATSIM = ('{"nb_res": 4, "jobs": [{"id": "a", "subtime": 0, "walltime": 100, "res": 2, '
          '"profile": "p"}], "profiles": {"p": {"type": "delay", "delay": 50}}}')


@pytest.fixture
def places(tmp_path, monkeypatch):
    """A current directory, a $BBOPT_DATA directory and a per-user data directory, all empty."""
    cwd, env, home = tmp_path / "cwd", tmp_path / "env", tmp_path / "xdg"
    for d in (cwd, env, home / "bbopt"):
        d.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("BBOPT_DATA", str(env))
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return cwd, env, home / "bbopt"


def test_user_data_dir_follows_xdg_and_falls_back_to_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert user_data_dir() == tmp_path / "bbopt"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert user_data_dir() == tmp_path / "h" / ".local" / "share" / "bbopt"


def test_data_dirs_split_bbopt_data_and_end_with_the_user_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("BBOPT_DATA", f"/a{__import__('os').pathsep}/b")
    assert data_dirs() == [Path("/a"), Path("/b"), tmp_path / "bbopt"]
    monkeypatch.delenv("BBOPT_DATA")
    assert data_dirs() == [tmp_path / "bbopt"]


def test_lookup_order_cwd_then_bbopt_data_then_user_dir(places):
    cwd, env, user = places
    (user / "t.swf").write_text(SWF)
    assert find_trace("t.swf") == user / "t.swf"
    (env / "t.swf").write_text(SWF)
    assert find_trace("t.swf") == env / "t.swf"
    (cwd / "t.swf").write_text(SWF)
    assert find_trace("t.swf") == Path("t.swf")
    assert find_workload("t.swf") == Path("t.swf")  # the loaders use the same rule


def test_a_relative_path_with_folders_is_looked_up_under_each_dir(places):
    _, _, user = places
    (user / "pwa").mkdir()
    (user / "pwa" / "t.swf").write_text(SWF)
    assert find_trace("pwa/t.swf") == user / "pwa" / "t.swf"


def test_a_missing_name_says_where_it_looked_and_how_to_fetch_it(places):
    _, env, user = places
    with pytest.raises(InputError) as err:
        find_trace(TRACES["KTH-SP2"].file)
    msg = str(err.value)
    assert "current directory" in msg and str(env) in msg and str(user) in msg
    assert "bbopt data fetch KTH-SP2" in msg
    with pytest.raises(InputError) as err:
        find_trace("mine.swf")
    assert "fetch" not in str(err.value)


def test_an_absolute_missing_path_is_not_searched_for(places, tmp_path):
    _, env, _ = places
    (env / "t.swf").write_text(SWF)
    missing = tmp_path / "nowhere" / "t.swf"
    with pytest.raises(InputError) as err:
        find_trace(missing)
    assert str(err.value) == f"{missing}: no such file"


def test_readers_find_bare_names(places):
    _, env, user = places
    (env / "t.swf").write_text(SWF)
    (user / "w.json").write_text(BATSIM)
    assert [j.id for j in read_swf("t.swf").jobs] == ["1"]
    assert [j.id for j in read_batsim("w.json").jobs] == ["a"]
    with pytest.raises(InputError, match="no such file"):
        read_swf("other.swf")
    with pytest.raises(InputError, match="no such file"):
        read_batsim("other.json")


def test_commands_find_a_trace_in_the_user_dir(places):
    _, _, user = places
    (user / "t.swf").write_text(SWF)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["simulate", "--workload", "t.swf", "--policy", "fcfs", "--no-progress"]) == 0
    assert "fcfs" in out.getvalue()


def _gz(path: Path, text: str) -> Path:
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_fetch_from_a_file_url_decompresses_atomically(tmp_path):
    src = _gz(tmp_path / "KTH.swf.gz", SWF)
    dest = fetch_trace("KTH-SP2", tmp_path / "data", url=src.as_uri())
    assert dest == tmp_path / "data" / "KTH-SP2-1996-2.1-cln.swf"
    assert dest.read_text() == SWF
    assert sorted(p.name for p in dest.parent.iterdir()) == [dest.name]  # no temporary left
    _gz(src, SWF + SWF.splitlines()[1].replace("1 0", "2 9", 1) + "\n")
    assert fetch_trace("KTH-SP2", dest.parent, url=src.as_uri()).read_text() == SWF  # kept
    assert len(fetch_trace("kth-sp2", dest.parent, url=src.as_uri(), force=True)
               .read_text().splitlines()) == 3


def test_fetch_over_http_from_a_local_server(tmp_path):
    (tmp_path / "srv").mkdir()
    _gz(tmp_path / "srv" / "SDSC.swf.gz", SWF)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(tmp_path / "srv"), **k)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/SDSC.swf.gz"
        dest = fetch_trace("SDSC-SP2", tmp_path / "d", url=url, timeout=5)
    finally:
        server.shutdown()
    assert dest.name == "SDSC-SP2-1998-4.2-cln.swf" and dest.read_text() == SWF


def test_an_unreachable_archive_times_out_and_says_where_to_put_the_file(tmp_path):
    silent = socket.socket()  # accepts connections, never answers: only the timeout ends it
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/KTH.swf.gz"
        with pytest.raises(TraceUnavailable) as err:
            fetch_trace("KTH-SP2", tmp_path / "d", url=url, timeout=0.3)
    finally:
        silent.close()
    msg = str(err.value)
    assert "download it by hand" in msg and str(tmp_path / "d") in msg
    assert "KTH-SP2-1996-2.1-cln.swf" in msg and "$BBOPT_DATA" in msg
    assert list((tmp_path / "d").iterdir()) == []  # nothing half-written


def test_a_page_that_is_not_a_trace_is_refused(tmp_path):
    (tmp_path / "page.html").write_text("<html>moved</html>")
    with pytest.raises(TraceUnavailable, match="Standard Workload Format"):
        fetch_trace("CTC-SP2", tmp_path / "d", url=(tmp_path / "page.html").as_uri())
    assert list((tmp_path / "d").iterdir()) == []


def test_unknown_trace_names_list_the_known_ones():
    with pytest.raises(InputError, match="KTH-SP2"):
        fetch_trace("NOPE", "/nonexistent")


def test_cli_fetch_and_list(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("BBOPT_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    src = _gz(tmp_path / "k.swf.gz", SWF)
    assert main(["data", "fetch", "KTH-SP2", "--url", src.as_uri()]) == 0
    dest = tmp_path / "xdg" / "bbopt" / "KTH-SP2-1996-2.1-cln.swf"
    assert dest.read_text() == SWF and str(dest) in capsys.readouterr().out
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert f"here: {dest}" in out and "not found (bbopt data fetch SDSC-SP2)" in out
    assert main(["data", "fetch", "KTH-SP2", "--url", "http://127.0.0.1:9/x.gz",
                 "--timeout", "0.5", "--dir", str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bbopt: error: could not download KTH-SP2") and "Traceback" not in err


def test_fetch_says_where_a_trace_already_is_and_downloads_nothing(places, tmp_path, capsys):
    cwd, env, home = places
    (env / "KTH-SP2-1996-2.1-cln.swf.gz").write_bytes(gzip.compress(SWF.encode()))
    unreachable = ["--url", "http://127.0.0.1:9/x.gz", "--timeout", "0.5"]
    assert main(["data", "fetch", "KTH-SP2", *unreachable]) == 0
    out = capsys.readouterr().out
    assert out == (f"KTH-SP2 is already here: {env / 'KTH-SP2-1996-2.1-cln.swf.gz'} "
                   "(--force downloads it again)\n")
    assert not (home / "KTH-SP2-1996-2.1-cln.swf").exists()
    # --force downloads (here: tries, and says why it could not)
    assert main(["data", "fetch", "KTH-SP2", *unreachable, "--force"]) == 2
    assert "could not download KTH-SP2" in capsys.readouterr().err
    # --dir asks for a copy there: a trace found elsewhere does not count
    src = _gz(tmp_path / "k.swf.gz", SWF)
    assert main(["data", "fetch", "KTH-SP2", "--url", src.as_uri(), "--dir", "mine"]) == 0
    assert (cwd / "mine" / "KTH-SP2-1996-2.1-cln.swf").read_text() == SWF
    assert main(["data", "fetch", "KTH-SP2", *unreachable, "--dir", "mine"]) == 0
    assert "already here: mine/KTH-SP2-1996-2.1-cln.swf" in capsys.readouterr().out


def test_the_catalogue_names_the_archives_files():
    from bbopt.workloads.archive import PWA

    assert PWA == "https://www.cs.huji.ac.il/labs/parallel/workload"
    assert [(t.name, t.file, t.url) for t in TRACES.values()] == [
        ("KTH-SP2", "KTH-SP2-1996-2.1-cln.swf", f"{PWA}/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz"),
        ("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf", f"{PWA}/l_sdsc_sp2/SDSC-SP2-1998-4.2-cln.swf.gz"),
        ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf", f"{PWA}/l_ctc_sp2/CTC-SP2-1996-3.1-cln.swf.gz")]
    assert list(TRACES) == ["KTH-SP2", "SDSC-SP2", "CTC-SP2"]
    assert [t.what for t in TRACES.values()] == [
        "KTH IBM SP2, Sep 1996 - Aug 1997, 100 nodes, 28,476 jobs (cleaned); Kopanski & Rzadca "
        "and Fan et al. run it",
        "SDSC IBM SP2, Apr 1998 - Apr 2000, 128 nodes, 59,715 jobs (cleaned)",
        "Cornell Theory Center IBM SP2, Jun 1996 - May 1997, 338 nodes, 77,222 jobs (cleaned)"]


def test_a_missing_name_lists_every_place_in_order(places, monkeypatch):
    _, env, user = places
    with pytest.raises(InputError) as err:
        find_trace("SDSC-SP2-1998-4.2-cln.swf.gz")
    assert err.value.source == "SDSC-SP2-1998-4.2-cln.swf.gz"
    assert err.value.reason == (f"no such file (looked in the current directory, $BBOPT_DATA "
                                f"({env}), {user}); `bbopt data fetch SDSC-SP2` downloads it")
    monkeypatch.delenv("BBOPT_DATA")
    with pytest.raises(InputError) as err:
        find_trace(Path("sub") / "mine.swf")
    assert err.value.reason == (f"no such file (looked in the current directory, $BBOPT_DATA "
                                f"(not set), {user})")
    monkeypatch.setenv("BBOPT_DATA", "")
    with pytest.raises(InputError, match=r"\$BBOPT_DATA \(not set\)"):
        find_trace("mine.swf")


def test_bbopt_data_entries_are_searched_in_order(places, tmp_path, monkeypatch):
    import os

    _, env, _ = places
    second = tmp_path / "second"
    second.mkdir()
    (second / "t.swf").write_text(SWF)
    monkeypatch.setenv("BBOPT_DATA", f"{env}{os.pathsep}{os.pathsep}{second}")
    assert find_trace("t.swf") == second / "t.swf"
    (env / "t.swf").write_text(SWF)
    assert find_trace("t.swf") == env / "t.swf"


def test_found_trace_plain_then_gzipped(places, tmp_path):
    from bbopt.workloads.archive import found_trace

    _, env, user = places
    kth = TRACES["KTH-SP2"]
    assert found_trace(kth) is None
    assert found_trace(kth, tmp_path) is None
    (user / (kth.file + ".gz")).write_bytes(b"")
    assert found_trace(kth) == user / (kth.file + ".gz")
    (env / kth.file).write_text(SWF)
    assert found_trace(kth) == env / kth.file
    assert found_trace(kth, user) == user / (kth.file + ".gz")
    (user / kth.file).mkdir()  # a directory of that name is no trace
    assert found_trace(kth, str(user)) == user / (kth.file + ".gz")
    (tmp_path / kth.file).write_text(SWF)
    assert found_trace(kth, tmp_path) == tmp_path / kth.file


@pytest.mark.parametrize("name", ["KTH-SP2", "kth-sp2", "KTH-SP2-1996-2.1-cln.swf",
                                  "kth-sp2-1996-2.1-CLN.swf.gz"])
def test_lookup_by_short_or_file_name(name):
    from bbopt.workloads.archive import lookup

    assert lookup(name) is TRACES["KTH-SP2"]


def test_an_unknown_trace_is_named_with_the_known_ones():
    from bbopt.workloads.archive import lookup

    with pytest.raises(InputError) as err:
        lookup("KTH")
    assert (err.value.reason, err.value.field) == (
        "unknown trace 'KTH'; known: KTH-SP2, SDSC-SP2, CTC-SP2", "name")


def test_fetch_copies_a_plain_file_into_new_folders(tmp_path):
    src = tmp_path / "k.swf"
    src.write_text(SWF)
    dest = fetch_trace("CTC-SP2", tmp_path / "a" / "b", url=src.as_uri())
    assert dest == tmp_path / "a" / "b" / "CTC-SP2-1996-3.1-cln.swf" and dest.read_text() == SWF
    assert fetch_trace("CTC-SP2", tmp_path / "a" / "b", url=src.as_uri(), force=True) == dest


def test_fetch_waits_20_s_by_default_and_defaults_to_the_user_dir(tmp_path, monkeypatch):
    import urllib.request

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    seen = []
    real = urllib.request.urlopen

    def urlopen(url, timeout):  # (the download goes to a hidden file named after the trace)
        seen.append((url, timeout, [p.name.startswith(".KTH-SP2-1996-2.1-cln.swf.")
                                    for p in (tmp_path / "bbopt").iterdir()]))
        return real(_gz(tmp_path / "k.swf.gz", SWF).as_uri(), timeout=timeout)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    dest = fetch_trace("KTH-SP2")
    assert dest == tmp_path / "bbopt" / "KTH-SP2-1996-2.1-cln.swf" and dest.read_text() == SWF
    assert seen == [(TRACES["KTH-SP2"].url, 20.0, [True])]
    assert fetch_trace("KTH-SP2") == dest and len(seen) == 1  # kept: nothing downloaded


def test_a_failed_download_says_why_and_where(tmp_path):
    missing = (tmp_path / "gone.swf.gz").as_uri()
    with pytest.raises(TraceUnavailable) as err:
        fetch_trace("SDSC-SP2", tmp_path / "d", url=missing)
    assert str(err.value) == (
        f"could not download SDSC-SP2 from {missing} ([Errno 2] No such file or directory: "
        f"'{tmp_path / 'gone.swf.gz'}'); "
        f"download it by hand, decompress it and put SDSC-SP2-1998-4.2-cln.swf in "
        f"{tmp_path / 'd'} (or in a directory named by $BBOPT_DATA)")
    cut = tmp_path / "cut.swf.gz"  # an error without a reason: its own text
    cut.write_bytes(gzip.compress(SWF.encode())[:-12])
    with pytest.raises(TraceUnavailable) as err:
        fetch_trace("SDSC-SP2", tmp_path / "d", url=cut.as_uri())
    assert str(err.value).startswith(
        f"could not download SDSC-SP2 from {cut.as_uri()} (Compressed file ended before the "
        "end-of-stream marker was reached); ")
    assert list((tmp_path / "d").iterdir()) == []
    page = tmp_path / "page.gz"
    page.write_bytes(gzip.compress(b"<html>"))
    with pytest.raises(TraceUnavailable) as err:
        fetch_trace("SDSC-SP2", tmp_path / "d", url=page.as_uri())
    assert str(err.value) == (f"{page.as_uri()} did not give a Standard Workload Format file "
                              f"(SWF files start with ';' header lines)")
    assert list((tmp_path / "d").iterdir()) == []
