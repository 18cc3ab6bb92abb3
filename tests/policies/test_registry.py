"""The policies' registry (:mod:`bbopt.policies.registry`): a class lacking what the engine
needs is refused naming everything it lacks; ``make_policy`` passes policy objects through,
refuses what is not one, checks options against the constructor and names the option a
constructor refused as the command line gives it (``-o NAME``)."""

from __future__ import annotations

import sys

import pytest

from bbopt import Decision
from bbopt.errors import InputError
from bbopt.policies.registry import (
    POLICIES,
    available_policies,
    declare_builtin,
    make_policy,
    policy_options,
    register,
)


class Picky:
    """A policy with checked options.

    More text."""

    io_aware = False

    def __init__(self, name: str = "picky", depth: int = 1, mode: str = "a",
                 *, order: str = "fcfs") -> None:
        if depth < 0:
            raise InputError(f"depth must be >= 0, got {depth}", field="depth")
        if mode == "value":
            raise ValueError("mode 'value' is unknown")
        if mode == "type":
            raise TypeError("mode 'type' is of the wrong kind")
        if mode == "elsewhere":
            raise InputError("the platform has no BB", field="platform")
        if mode == "sourced":
            raise InputError("bad line", source="modes.yaml", field="mode")
        self.name, self.depth, self.mode, self.order = name, depth, mode, order

    def decide(self, state):
        return Decision()


@pytest.fixture
def picky():
    register("test-picky")(Picky)
    register("test-picky-deep", "Picky, three deep", depth=3)(Picky)
    yield
    POLICIES.remove("test-picky")
    POLICIES.remove("test-picky-deep")


def test_a_registered_name_builds_its_class_with_the_fixed_and_given_options(picky):
    policy = make_policy("test-picky-deep", mode="b")
    assert (policy.name, policy.depth, policy.mode, policy.order) == ("test-picky-deep", 3, "b",
                                                                     "fcfs")
    assert make_policy("test-picky").depth == 1
    assert policy_options("test-picky") == {"depth": 1, "mode": "a", "order": "fcfs"}
    assert policy_options("test-picky-deep") == {"mode": "a", "order": "fcfs"}
    about = available_policies()
    assert about["test-picky"] == "A policy with checked options."
    assert about["test-picky-deep"] == "Picky, three deep"
    assert about["fcfs-bb"] and "conservative-bb" in about


def test_policy_objects_pass_through_and_other_objects_are_refused():
    policy = Picky()
    assert make_policy(policy) is policy
    with pytest.raises(InputError, match="^options are given to make_policy only with a policy "
                                         "name$"):
        make_policy(policy, depth=2)
    with pytest.raises(InputError, match=r"^field 'policy': dict is not a policy: it needs a "
                                         r"name, an io_aware flag and decide\(state\)$"):
        make_policy({"name": "fcfs"})


def test_options_are_checked_against_the_constructor(picky):
    with pytest.raises(InputError, match=r"^field 'dpeth': policy 'test-picky' has no option "
                                         r"'dpeth'; its options: depth, mode, order$"):
        make_policy("test-picky", dpeth=2)
    with pytest.raises(InputError, match="fixed by the name") as err:
        make_policy("test-picky-deep", depth=2)
    assert err.value.field == "depth"
    with pytest.raises(InputError) as err:
        make_policy("test-picky", depth="two")
    assert err.value.field == "-o depth"


@pytest.mark.parametrize("options,message", [
    ({"depth": -1}, "field '-o depth': policy 'test-picky': depth must be >= 0, got -1"),
    ({"mode": "value", "order": "x"}, "field '-o mode': policy 'test-picky': mode 'value' is "
                                      "unknown"),
    ({"order": "x", "mode": "type"}, "field '-o order': policy 'test-picky': mode 'type' is of "
                                     "the wrong kind"),
    ({"mode": "elsewhere"}, "field 'platform': the platform has no BB"),
    ({"mode": "sourced"}, "modes.yaml, field 'mode': bad line"),
])
def test_what_a_constructor_refuses_is_named_as_the_option_given(picky, options, message):
    """An option the constructor refused is named as given (``-o NAME``); an error about
    something else, or already located in a file, is passed on as it is; a plain ValueError or
    TypeError is named after the first option given."""
    with pytest.raises(InputError) as err:
        make_policy("test-picky", **options)
    assert str(err.value) == message


def test_a_constructors_plain_error_without_options_names_no_field():
    class Fails:
        io_aware = False

        def __init__(self, name="fails"):
            raise ValueError("no machine to schedule")

        def decide(self, state):
            return Decision()

    register("test-fails")(Fails)
    try:
        with pytest.raises(InputError) as err:
            make_policy("test-fails")
        assert str(err.value) == "policy 'test-fails': no machine to schedule"
        assert err.value.field is None
    finally:
        POLICIES.remove("test-fails")


def test_a_class_lacking_what_the_engine_needs_is_refused_naming_all_it_lacks():
    class Nothing:
        io_aware = 1  # (not a bool)

    with pytest.raises(InputError) as err:
        register("test-nothing")(Nothing)
    assert err.value.field == "policy"
    where = f"{__name__}.{Nothing.__qualname__}"
    assert str(err.value) == (
        f"field 'policy': policy 'test-nothing' ({where}) is missing decide(state) -> Decision; "
        "io_aware (a class attribute, True or False: whether its starts keep every link of the "
        "I/O tree within its bandwidth)")
    assert "test-nothing" not in POLICIES
    # an object that cannot be called to build the policy; None has no module: "?"
    with pytest.raises(InputError, match=r"^field 'policy': policy 'test-x' \(\?\.None\) is "
                                         r"missing decide\(state\) -> Decision; io_aware .*; a "
                                         r"constructor taking the options$"):
        POLICIES.check("test-x", None)
    with pytest.raises(InputError, match=r"^field 'policy': policy 'test-y' \(.*Picky object "
                                         r"at .*\) is missing a constructor taking the "
                                         r"options$"):
        POLICIES.check("test-y", Picky())


def test_a_declared_module_is_imported_when_one_of_its_names_is_first_used(tmp_path,
                                                                          monkeypatch):
    (tmp_path / "declared_policy.py").write_text(
        "from bbopt.policies.registry import register\n"
        "from tests.policies.test_registry import Picky\n"
        "register('test-declared')(Picky)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "declared_policy", raising=False)  # (imported afresh)
    declare_builtin({"declared_policy": ("test-declared",)})
    try:
        assert "test-declared" in POLICIES
        assert make_policy("test-declared").name == "test-declared"
    finally:
        POLICIES.remove("test-declared")
        POLICIES._declared.pop("test-declared", None)
        sys.modules.pop("declared_policy", None)
