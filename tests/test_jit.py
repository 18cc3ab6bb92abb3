"""The compiled kernels by name (bbopt.jit.KERNELS): declared by their users, imported once on
first use, ``None`` when switched off or when the module does not import."""

from __future__ import annotations

import sys

import pytest

import bbopt.models.plan  # noqa: F401  (declares plan-pool)
import bbopt.planner.named  # noqa: F401  (declares named-bb)
import bbopt.policies.conservative  # noqa: F401  (declares compression)
from bbopt import jit
from bbopt.cli import main
from bbopt.jit import KERNELS, kernels, kernels_note
from bbopt.registry import Registry


def test_the_kernels_are_one_registry_declared_by_their_users():
    assert isinstance(KERNELS, Registry)
    assert {"compression", "named-bb", "plan-pool"} <= set(KERNELS.known())


def test_switched_off_gives_none(monkeypatch):
    monkeypatch.setenv("BBOPT_NO_JIT", "1")
    assert kernels("plan-pool") is None
    assert "off (BBOPT_NO_JIT)" in kernels_note()
    monkeypatch.setenv("BBOPT_NO_JIT", "0")
    assert "off" not in kernels_note()


def test_a_module_that_does_not_import_gives_none_once(monkeypatch):
    monkeypatch.setenv("BBOPT_NO_JIT", "0")
    monkeypatch.setattr(jit, "_UNAVAILABLE", set())
    KERNELS.declare({"missing": "bbopt.planner:no_such_kernels"})
    try:
        assert kernels("missing") is None
        assert "missing" in jit._UNAVAILABLE  # not imported again
        assert kernels("missing") is None
    finally:
        KERNELS._declared.pop("missing")


def test_a_kernel_module_is_the_declared_submodule(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("BBOPT_NO_JIT", "0")
    assert kernels("plan-pool") is sys.modules["bbopt.planner.jit.pool"]
    assert kernels("named-bb") is sys.modules["bbopt.planner.jit.named"]
    assert KERNELS.get("named-bb").about.startswith("Named burst-buffer nodes compiled")


def test_policies_verbose_lists_the_kernels(capsys, monkeypatch):
    monkeypatch.setenv("BBOPT_NO_JIT", "0")
    assert main(["policies", "-v"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("compiled kernels: compression, named-bb, plan-pool;")
