"""``quick_init`` (the faster ``__init__`` of the frozen domain types) builds what the
dataclass's own ``__init__`` builds: same signature and defaults, fresh default-factory values,
``__post_init__`` called, and every other dataclass behaviour untouched."""

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bbopt.core import (
    ClusterState,
    Decision,
    Job,
    Platform,
    Reservation,
    RunningJob,
    SolveStats,
    Start,
    Status,
)
from bbopt.quick_init import _fields_factory, quick_init

FAST = (RunningJob, ClusterState, SolveStats, Start, Reservation, Decision)


def _plain(cls):
    """The same class as the dataclass decorator alone would build it."""
    ns = {f.name: f for f in dataclasses.fields(cls)}
    ns["__annotations__"] = {f.name: f.type for f in dataclasses.fields(cls)}
    return dataclass(frozen=True, slots=True)(type(cls.__name__, (), ns))


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
def test_same_signature_as_the_dataclass(cls):
    assert str(inspect.signature(cls)) == str(inspect.signature(_plain(cls)))


values = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3),
                   st.tuples(st.integers()))


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
@given(data=st.data())
def test_fields_set_as_given(cls, data):
    """Positional, keyword and default arguments land in their own fields."""
    names = [f.name for f in dataclasses.fields(cls)]
    required = [f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    k = data.draw(st.integers(len(required), len(names)))
    given_ = {name: data.draw(values) for name in names[:k]}
    by_pos = cls(*given_.values())
    by_kw = cls(**given_)
    plain = _plain(cls)(**given_)
    for name in names:
        assert getattr(by_pos, name) == getattr(by_kw, name) == getattr(plain, name)


def test_factories_give_fresh_values_and_frozen_stays_frozen():
    a, b = ClusterState(0.0, Platform(nodes=4)), ClusterState(1.0, Platform(nodes=4))
    assert a.memory == {} and a.memory is not b.memory
    assert Decision().stats == SolveStats() and Decision().stats is not Decision().stats
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.time = 2.0
    d = Decision((Start("x"),), (Reservation("y", 3.0),), stats=SolveStats("rule"))
    assert pickle.loads(pickle.dumps(d)) == d
    # Decision statistics are pickled as their field values (compare's workers send them back).
    stats = SolveStats("cpsat", Status.FALLBACK, (1.0, 2.0), (0.5, 1.5), 0.25, 3.0, 5.0, True)
    back = pickle.loads(pickle.dumps(stats))
    assert back == stats and back.audited and back.gap == 0.25 and back.budget == 5.0
    assert dataclasses.replace(d, memory={"k": 1}).memory == {"k": 1}
    assert hash(Start("x", (1, 2))) == hash(Start("x", (1, 2)))
    r = RunningJob(Job("j", 0.0, 10.0), 5.0)
    assert r.expected_end == 15.0 and r.allocation is None


def test_post_init_runs():
    seen = []

    @quick_init
    @dataclass(frozen=True, slots=True)
    class Checked:
        x: int
        ys: list = field(default_factory=list)

        def __post_init__(self):
            seen.append(self.x)
            if self.x < 0:
                raise ValueError("negative")

    assert Checked(3).ys == [] and seen == [3]
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
@given(data=st.data())
def test_of_fields_builds_what_the_class_builds(cls, data):
    """``cls.of_fields`` (every field, positionally: the hot paths' constructor) gives an object
    of the class itself, equal to the class's own, as frozen, hashed and pickled alike."""
    assert cls.of_fields is not cls  # (the fast factory, not the fallback)
    values = [data.draw(values_of) for _ in dataclasses.fields(cls)]
    fast, slow = cls.of_fields(*values), cls(*values)
    assert type(fast) is cls
    for f in dataclasses.fields(cls):
        assert getattr(fast, f.name) is getattr(slow, f.name)
    assert fast == slow and repr(fast) == repr(slow)
    assert pickle.loads(pickle.dumps(fast)) == slow
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(fast, dataclasses.fields(cls)[0].name, 1)
    try:
        assert hash(fast) == hash(slow)
    except TypeError:  # (unhashable field values: unhashable both ways)
        with pytest.raises(TypeError):
            hash(slow)


values_of = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3),
                      st.tuples(st.integers()), st.dictionaries(st.text(max_size=2),
                                                                st.integers(), max_size=2))


def test_of_fields_is_the_class_where_the_twin_cannot_stand_in():
    """A ``__post_init__`` (it must run) or inherited slots (another layout): the class."""

    @quick_init
    @dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self):
            if self.x < 0:
                raise ValueError("negative")

    @dataclass(frozen=True, slots=True)
    class Base:
        x: int

    @dataclass(frozen=True, slots=True)
    class Derived(Base):
        y: int = 0

    assert Checked.of_fields is Checked and _fields_factory(Derived) is Derived
    with pytest.raises(ValueError, match="negative"):
        Checked.of_fields(-1)


@given(st.text(min_size=1, max_size=4), st.floats(0, 1e9), st.floats(1, 1e9), st.floats(0, 1e9),
       st.integers(1, 10_000), st.floats(0, 1e15), st.one_of(st.none(), st.text(max_size=3)),
       st.sampled_from([{}, {"memory_per_node": 8.0}]))
def test_trusted_jobs_are_the_checked_jobs(job_id, submit, walltime, runtime, nodes, bb, user,
                                           extra):
    """The reader's unchecked jobs (filled in the slot twin of ``Job``) equal the checked
    ``Job`` field by field, and are as frozen."""
    from bbopt.workloads.columns import trusted_job, with_bbs

    fast = trusted_job(job_id, submit, walltime, runtime, nodes, bb, user, extra)
    slow = Job(job_id, submit, walltime, runtime, nodes, bb, user=user, extra=extra)
    assert type(fast) is Job and fast == slow and hash(fast) == hash(slow)
    for f in dataclasses.fields(Job):
        assert getattr(fast, f.name) == getattr(slow, f.name), f.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.bb = 1.0
    (copy,) = with_bbs([fast], [bb / 2])
    assert type(copy) is Job and copy == dataclasses.replace(slow, bb=bb / 2)


def test_slot_twin_only_for_own_slots_in_field_order():
    from bbopt.quick_init import slot_twin

    twin = slot_twin(Job)
    assert twin is not None and twin.__slots__ == tuple(f.name for f in dataclasses.fields(Job))

    @dataclass(frozen=True)
    class NoSlots:
        x: int

    assert slot_twin(NoSlots) is None


def test_a_class_decorated_here_gets_both_fast_constructors():
    """``quick_init`` applied now (not at import): the dataclass's signature, its defaults and
    fresh factory values, the generated functions named as the class's own, and
    ``of_fields`` building the same frozen object through the slot twin."""
    from bbopt.quick_init import slot_twin

    @quick_init
    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: float = 0.5
        tags: list = field(default_factory=list)

    p = Point(1)
    assert (p.x, p.y, p.tags) == (1, 0.5, []) and Point(1).tags is not p.tags
    assert Point(2, 1.5, ["a"]) == Point(x=2, y=1.5, tags=["a"])
    assert str(inspect.signature(Point.__init__)) == (
        "(self, x: int, y: float = 0.5, tags: list = <factory>) -> None")
    init = Point.__init__
    assert (init.__qualname__, init.__module__) == (f"{Point.__qualname__}.__init__", __name__)
    assert init.__annotations__ == {"x": int, "y": float, "tags": list, "return": None}
    q = Point.of_fields(2, 1.5, ["a"])
    assert type(q) is Point and q == Point(2, 1.5, ["a"]) and repr(q) == repr(Point(2, 1.5, ["a"]))
    make = Point.of_fields
    assert (make.__qualname__, make.__module__) == (f"{Point.__qualname__}.of_fields", __name__)
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.x = 3
    twin = slot_twin(Point)
    assert (twin.__name__, twin.__module__, twin.__slots__) == (
        "PointFields", __name__, ("x", "y", "tags"))


def test_a_class_without_fields_or_with_keyword_only_or_uninitialised_ones():
    """No field: an ``__init__`` of no argument; a keyword-only or ``init=False`` field: the
    dataclass's own ``__init__`` is kept (positional use of a keyword-only field refused)."""

    @quick_init
    @dataclass(frozen=True, slots=True)
    class Empty:
        pass

    assert Empty() == Empty() and Empty.of_fields is Empty

    @dataclass(frozen=True, slots=True)
    class Keyword:
        x: int
        y: int = field(default=0, kw_only=True)

    own = Keyword.__init__
    assert quick_init(Keyword) is Keyword and Keyword.__init__ is own
    assert Keyword(1, y=2).y == 2
    with pytest.raises(TypeError):
        Keyword(1, 2)

    @dataclass(frozen=True, slots=True)
    class Derived:
        x: int
        y: int = field(default=7, init=False)

    own = Derived.__init__
    assert quick_init(Derived) is Derived and Derived.__init__ is own and Derived(1).y == 7
