"""The documentation site: it builds in strict mode, and its pages' commands and code run.

Each tutorial under ``docs/tutorials/`` and each page of :data:`RUN` is run as a test, its
fenced blocks in order, in a fresh directory that holds links to the repository's
``examples/`` and ``experiments/``:

- a ``python`` block is executed in one namespace per page;
- a ``sh`` block is run by bash, ``bbopt`` being this tree's ``python -m bbopt``;
- a block right after ``<!-- file: NAME -->`` is written to the file NAME;
- a block right after ``<!-- not run: why -->`` is skipped (installs, downloads, hour-long
  runs: the page says so);
- a page with ``<!-- needs: FILE -->`` is marked ``slow`` and skipped when the trace FILE is
  not found (``$BBOPT_DATA`` or the shared data directory), one with
  ``<!-- needs: module NAME -->`` when the module NAME (an optional extra) is not installed.

Other blocks (``yaml``, ``json``, ``text``, ``mermaid``) are shown, not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._workload_data import data_dir

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: The pages whose blocks are written to run (every tutorial, and these); a page whose blocks
#: are fragments (an agent or a file the reader supplies) is shown, not run.
RUN = ("getting-started.md", "data.md", "policies.md", "cli.md", "figures.md", "about-docs.md",
       "concepts.md")
#: Pages that read a real trace are ``slow`` (as the suite's other full-trace tests).
PAGES = [pytest.param(p.relative_to(DOCS).as_posix(), marks=pytest.mark.slow)
         if "<!-- needs: KTH" in p.read_text() else p.relative_to(DOCS).as_posix()
         for p in sorted(DOCS.rglob("*.md"))
         if p.parent.name == "tutorials" or p.relative_to(DOCS).as_posix() in RUN]
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```",
                   re.S | re.M)
MARK = re.compile(r"<!--\s*(not run|file|needs):\s*(.*?)\s*-->")


def blocks(text: str) -> list[tuple[str, str, str | None, str | None]]:
    """(language, code, file to write or None, reason not to run or None), in page order."""
    out = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip().rsplit("\n", 1)[-1]
        mark = MARK.fullmatch(before.strip())
        body = "\n".join(line[len(m["indent"]):] for line in m["body"].splitlines())
        kind, value = (mark[1], mark[2]) if mark else (None, None)
        out.append((m["lang"], body, value if kind == "file" else None,
                    value if kind == "not run" else None))
    return out


def test_the_runner_reads_marks_and_languages():
    page = ("<!-- not run: network -->\n```sh\npip install x\n```\n"
            "<!-- file: a.yaml -->\n```yaml\nk: 1\n```\n  ```python\n  x = 1\n  ```\n")
    assert blocks(page) == [("sh", "pip install x", None, "network"),
                            ("yaml", "k: 1", "a.yaml", None), ("python", "x = 1", None, None)]


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["XDG_DATA_HOME"] = str(tmp / "xdg")  # nothing fetched by the user leaks in
    env["MPLBACKEND"] = "Agg"
    d = data_dir()
    if d is not None:
        env["BBOPT_DATA"] = str(d)
    return env


@pytest.mark.parametrize("page", PAGES)
def test_page_runs(page, tmp_path, monkeypatch):
    text = (DOCS / page).read_text()
    todo = blocks(text)
    runnable = [b for b in todo if b[3] is None and (b[2] or b[0] in ("python", "sh"))]
    if not runnable:
        pytest.skip("no block to run")
    d = data_dir()
    for needed in re.findall(r"<!--\s*needs:\s*(.*?)\s*-->", text):
        if needed.startswith("module "):
            pytest.importorskip(needed.removeprefix("module "))
        elif d is None or not (d / needed).exists():
            pytest.skip(f"{needed} not found (set BBOPT_DATA)")
    for name in ("examples", "experiments"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = _env(tmp_path)
    monkeypatch.chdir(tmp_path)
    for key in ("PYTHONPATH", "XDG_DATA_HOME", "MPLBACKEND", "BBOPT_DATA"):
        if key in env:
            monkeypatch.setenv(key, env[key])
    # what a page registers (its own policy, its own backend) stays in the page: the registries
    # are restored afterwards, every built-in policy loaded first so that none is lost
    from bbopt.policies import available_policies
    from bbopt.policies.registry import POLICIES
    from bbopt.solvers import base

    available_policies()
    monkeypatch.setattr(POLICIES, "_entries", dict(POLICIES._entries))
    monkeypatch.setattr(base, "_BACKENDS", {})  # rebuilt from the built-in table on demand
    namespace: dict = {"__name__": "__docs__"}
    shell = f'bbopt() {{ "{sys.executable}" -m bbopt "$@"; }}\nset -euo pipefail\n'
    for lang, code, target, skip in todo:
        if skip is not None:
            continue
        if target is not None:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            Path(target).write_text(code + "\n")
        elif lang == "python":
            exec(compile(code, f"{page} (python block)", "exec"), namespace)
        elif lang == "sh":
            done = subprocess.run(["bash", "-c", shell + code], env=env, cwd=tmp_path,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{page}: {code}\n{done.stdout}\n{done.stderr}"


def test_mkdocs_build_strict(tmp_path):
    if shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists():
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    mkdocs = shutil.which("mkdocs") or str(Path(sys.executable).parent / "mkdocs")
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").exists()
