"""The decay engine and the recency window: invariants, the direct reading of the rule, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay.engines import EbbinghausEngine, RecencyWindow, scan_evictions


def test_reinforced_item_outlives_plain_item():
    engine = EbbinghausEngine()
    engine.register("plain", "p", 0)
    engine.register("used", "u", 0)
    evicted_at = {}
    for turn in range(1, 200):
        if turn in (3, 8, 20):
            assert engine.recall("used", turn)
        for mem_id in engine.step(turn):
            evicted_at[mem_id] = turn
    assert evicted_at["plain"] == 13
    assert evicted_at["used"] > evicted_at["plain"] + 20


def test_window_ignores_recall_count():
    many, once = RecencyWindow(window_size=15), RecencyWindow(window_size=15)
    many.register("x", "", 0)
    once.register("x", "", 0)
    for turn in range(1, 11):
        many.recall("x", turn)
    once.recall("x", 10)
    evicted = {}
    for name, engine in (("many", many), ("once", once)):
        for turn in range(11, 60):
            if engine.step(turn):
                evicted[name] = turn
    assert evicted["many"] == evicted["once"] == 26


@pytest.mark.parametrize(
    "engine",
    [
        EbbinghausEngine(),
        EbbinghausEngine(eviction_threshold=0.9, baseline_stability=0.5),
        RecencyWindow(window_size=1),
    ],
)
def test_item_recalled_every_turn_is_never_evicted(engine):
    engine.register("core", "", 1)
    for turn in range(1, 500):
        assert engine.recall("core", turn)
        engine.step(turn)
        assert engine.is_present("core")


class DirectEngine:
    """The rules written out plainly: scan every item at every step."""

    def __init__(self, kind, parameter, s0=8.0):
        self.kind, self.parameter, self.s0, self.items = kind, parameter, s0, {}

    def register(self, mem_id, turn):
        self.items[mem_id] = {"S": self.s0, "n": 1, "last": turn}

    def recall(self, mem_id, turn):
        if mem_id not in self.items:
            return False
        item = self.items[mem_id]
        item["n"] += 1
        item["S"] = item["S"] * (1 + math.log(1 + item["n"]))
        item["last"] = turn
        return True

    def step(self, turn):
        gone = []
        for mem_id, item in self.items.items():
            t = turn - item["last"]
            if self.kind == "decay":
                evict = (math.exp(-t / item["S"]) if t > 0 else 1.0) < self.parameter
            else:
                evict = t > self.parameter
            if evict:
                gone.append(mem_id)
        for mem_id in gone:
            del self.items[mem_id]
        return gone


event = st.tuples(st.integers(0, 3), st.sampled_from(["register", "recall", "step"]), st.integers(0, 6))


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["decay", "window"]),
    theta=st.floats(0.01, 0.99),
    s0=st.floats(0.3, 40.0),
    window=st.integers(1, 30),
    events=st.lists(event, max_size=120),
)
def test_engines_match_direct_reading(kind, theta, s0, window, events):
    engine = (
        EbbinghausEngine(eviction_threshold=theta, baseline_stability=s0)
        if kind == "decay"
        else RecencyWindow(window_size=window)
    )
    direct = DirectEngine(kind, theta if kind == "decay" else window, s0)
    turn = 0
    for advance, action, index in events:
        turn += advance
        mem_id = f"m{index}"
        if action == "register":
            if engine.is_present(mem_id):
                with pytest.raises(ValueError, match="already registered"):
                    engine.register(mem_id, "", turn)
                continue
            engine.register(mem_id, "", turn)
            direct.register(mem_id, turn)
        elif action == "recall":
            assert engine.recall(mem_id, turn) == direct.recall(mem_id, turn)
        else:
            expected = scan_evictions(engine, turn)
            assert engine.step(turn) == direct.step(turn) == expected
        assert engine.present_ids() == list(direct.items)
        for mem_id, item in direct.items.items():
            assert engine.item(mem_id).last_touched == item["last"]
            if kind == "decay":
                assert engine.item(mem_id).stability == item["S"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"eviction_threshold": 0.0}, "eviction_threshold"),
        ({"eviction_threshold": 1.0}, "eviction_threshold"),
        ({"eviction_threshold": float("nan")}, "eviction_threshold"),
        ({"eviction_threshold": True}, "eviction_threshold"),
        ({"baseline_stability": 0.0}, "baseline_stability"),
        ({"baseline_stability": -2}, "baseline_stability"),
        ({"baseline_stability": float("inf")}, "baseline_stability"),
        ({"baseline_stability": 10**400}, "baseline_stability"),
        ({"baseline_stability": -(10**400)}, "baseline_stability"),
        ({"eviction_threshold": 10**400}, "eviction_threshold"),
        ({"baseline_stability": float("nan")}, "baseline_stability"),
        ({"baseline_stability": True}, "baseline_stability"),
        ({"baseline_stability": "8"}, "baseline_stability"),
        ({"eviction_threshold": None}, "eviction_threshold"),
    ],
)
def test_bad_decay_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EbbinghausEngine(**kwargs)


@pytest.mark.parametrize("window", [0, -3, 2.5, True, "15", float("nan"), float("inf"), None, -(10**400)])
def test_bad_window(window):
    with pytest.raises(ValueError, match="window_size"):
        RecencyWindow(window_size=window)


def _state(engine):
    """Everything a call could change: clock, item table, schedule."""
    items = [(i.mem_id, i.last_touched, i.touch_count, i.stability) for i in engine._items.values()]
    return engine._clock, items, sum(map(len, engine._buckets.values())), len(engine._bucket_turns)


@pytest.mark.parametrize("engine_factory", [EbbinghausEngine, RecencyWindow])
def test_bad_calls_leave_no_partial_state(engine_factory):
    engine = engine_factory()
    engine.register("a", "", 5)
    before = (engine.present_ids(), engine.item("a").touch_count, engine.item("a").stability)
    with pytest.raises(ValueError, match="backwards"):
        engine.register("b", "", 4)
    with pytest.raises(ValueError, match="backwards"):
        engine.recall("a", 4)
    with pytest.raises(ValueError, match="backwards"):
        engine.step(3)
    with pytest.raises(ValueError, match="already registered"):
        engine.register("a", "", 6)
    with pytest.raises(ValueError, match="turn must be an int"):
        engine.step(6.0)
    with pytest.raises(ValueError, match="mem_id"):
        engine.register(["unhashable"], "", 6)
    with pytest.raises(ValueError, match="mem_id"):
        engine.register(True, "", 6)
    assert (engine.present_ids(), engine.item("a").touch_count, engine.item("a").stability) == before
    assert engine.recall("missing", 6) is False
    assert engine.present_ids() == ["a"]


@pytest.mark.parametrize("engine_factory", [EbbinghausEngine, RecencyWindow])
@pytest.mark.parametrize(
    "mem_id, turn, message",
    [
        (True, 100, "mem_id must not be a bool"),
        (np.bool_(False), 100, "mem_id must not be a bool"),
        (float("nan"), 100, "mem_id must not be a bool or a value that is not equal to itself"),
        (np.float64("nan"), 100, "not equal to itself"),
        (["a"], 100, r"mem_id must be hashable, got \['a'\]"),
        ({"a": 1}, 100, "mem_id must be hashable"),
        ("a", 4, "turn"),
        ("a", -1, "turn must be >= 0, got -1"),
        ("a", np.int64(4), "turn must not go backwards: got turn=4 after turn 5"),
        (
            "a",
            100.0,
            r"turn must be an int \(a Python or numpy integer; not a bool, a float or a str\), got 100.0",
        ),
        ("a", np.float64(100), "turn must be an int"),
        ("a", True, r"turn must be an int .*, got True \(bool\)"),
        ("a", np.bool_(True), "turn must be an int"),
        ("a", "100", r"turn must be an int .*, got '100' \(str\)"),
        ("a", None, "turn must be an int"),
        (True, 4, "turn|mem_id"),
    ],
)
def test_refused_recall_moves_nothing_not_even_the_clock(engine_factory, mem_id, turn, message):
    engine = engine_factory()
    engine.register("a", "", 5)
    before = _state(engine)
    with pytest.raises(ValueError, match=message):
        engine.recall(mem_id, turn)
    assert _state(engine) == before
    assert engine.step(6) == []  # the clock is still at 5: turn 6 is not "backwards"


@pytest.mark.parametrize("engine_factory", [EbbinghausEngine, RecencyWindow])
def test_recall_of_an_absent_id_is_a_silent_failure_that_advances_the_clock(engine_factory):
    engine = engine_factory()
    engine.register("a", "", 5)
    assert engine.recall("never-registered", 9) is False
    assert engine._clock == 9 and engine.present_ids() == ["a"] and engine.item("a").touch_count == 1
    with pytest.raises(ValueError, match="turn must not go backwards"):
        engine.step(8)


def _schedule_size(engine):
    return sum(map(len, engine._buckets.values())) + len(engine._bucket_turns)


@pytest.mark.parametrize("engine_factory", [EbbinghausEngine, RecencyWindow])
@pytest.mark.parametrize("same_turn", [True, False])
def test_schedule_stays_bounded_under_many_recalls_without_a_step(engine_factory, same_turn):
    engine = engine_factory()
    engine.register("other", "", 0)
    engine.register("x", "", 0)
    for i in range(1, 10**5 + 1):
        assert engine.recall("x", 1 if same_turn else i)
    assert _schedule_size(engine) <= 32  # O(1) per item, not one entry per recall
    assert engine.present_ids() == ["other", "x"]
    # decay: 10^5 reinforcements make x's stability infinite, so only the untouched item goes
    assert engine.step(10**6) == (["other"] if isinstance(engine, EbbinghausEngine) else ["other", "x"])


def test_both_engines_satisfy_the_engine_protocol():
    from forgetting.decay.engines import Engine

    def drive(engine: Engine) -> list[str]:
        engine.register("a", "", 1)
        return engine.step(100)

    assert drive(EbbinghausEngine()) == drive(RecencyWindow()) == ["a"]


def test_reinforcement_reads_the_items_own_stability_not_a_cached_one():
    from forgetting.decay.curves import decay_eviction_delay, reinforced_stability

    engine = EbbinghausEngine()
    for mem_id in ("a", "b"):
        engine.register(mem_id, "", 1)
    assert engine.recall("b", 2)  # caches the first reinforcement of S0
    engine.item("a").stability = 3.0  # not the S0 every item starts from
    assert engine.recall("a", 2)
    assert engine.item("a").stability == reinforced_stability(3.0, 2)
    assert engine.item("a").evict_turn == 2 + decay_eviction_delay(reinforced_stability(3.0, 2), 0.2)
    assert engine.item("b").stability == reinforced_stability(8.0, 2)


@pytest.mark.parametrize("baseline", [8.0, float("8.0"), 5.5])
@pytest.mark.parametrize("threshold", [0.2, 0.05])
def test_engines_that_share_a_reinforcement_cache_each_follow_the_formula(baseline, threshold):
    """Engines of equal S0 and theta share one cache; each item's stabilities and eviction turns
    are still the formula's, recall after recall, for an engine made before or after another
    has filled it, from the same S0 object or an equal one, and with an item set off the path."""
    from forgetting.decay.curves import decay_eviction_delay, reinforced_stability

    def expected(start, recalls):
        stability, rows = start, []
        for n in range(2, recalls + 2):
            stability = reinforced_stability(stability, n)
            delay = decay_eviction_delay(stability, threshold)  # None: never evicted
            rows.append((stability, None if delay is None else n + delay))
        return rows

    def drive(engine, start=None):
        engine.register("x", "", 1)
        if start is not None:
            engine.item("x").stability = start
        rows = []
        for turn in range(2, 42):
            assert engine.recall("x", turn)
            rows.append((engine.item("x").stability, engine.item("x").evict_turn))
        return rows

    first = EbbinghausEngine(eviction_threshold=threshold, baseline_stability=baseline)
    assert drive(first) == expected(baseline, 40)
    assert drive(EbbinghausEngine(eviction_threshold=threshold, baseline_stability=baseline)) == expected(
        baseline, 40
    )
    assert drive(
        EbbinghausEngine(eviction_threshold=threshold, baseline_stability=float(str(baseline)))
    ) == expected(baseline, 40)
    assert drive(
        EbbinghausEngine(eviction_threshold=threshold, baseline_stability=baseline), start=3.0
    ) == expected(3.0, 40)
    assert drive(EbbinghausEngine(eviction_threshold=threshold, baseline_stability=baseline)) == expected(
        baseline, 40
    )


@pytest.mark.parametrize("engine_factory", [EbbinghausEngine, RecencyWindow])
def test_evict_turn_is_the_step_that_evicts(engine_factory):
    engine = engine_factory()
    engine.register("a", "", 1)
    engine.recall("a", 3)
    engine.recall("a", 3)  # a second entry in the same bucket must not evict twice
    due = engine.item("a").evict_turn
    item = engine.item("a")
    assert engine.step(due - 1) == [] and engine.step(due) == ["a"]
    assert item.evict_turn is None and not engine.is_present("a")


def _engines():
    from forgetting.curves.power_engine import PowerLawEngine
    from forgetting.studies.decay.wallclock import LatencyModel, VirtualClock, WallClockEngine

    return [
        EbbinghausEngine(),
        RecencyWindow(),
        PowerLawEngine(baseline_stability=8.0, decay=0.5),
        WallClockEngine(VirtualClock("0/0", LatencyModel(sigma=0.0))),
    ]


@pytest.mark.parametrize("flag", ["no", "False", 0, 1, None, 1.0, [True]])
def test_register_refuses_a_foundational_flag_that_is_not_a_bool(flag):
    for engine in _engines():
        engine.register("a", "", 5)
        before = (engine.present_ids(), [engine.item(m).is_foundational for m in engine.present_ids()])
        with pytest.raises(ValueError, match=r"is_foundational must be a bool \(True or False\), got"):
            engine.register("b", "", 6, is_foundational=flag)
        assert (engine.present_ids(), [engine.item("a").is_foundational]) == before
        assert engine.step(5) == [] and not engine.is_present("b")  # the clock did not move to 6 either
        engine.register("b", "", 6, is_foundational=np.bool_(True))
        assert engine.item("b").is_foundational is True


def _scheduled_engines():
    """Every engine built on ``ScheduledEngine`` (the wall-clock draft has its own register)."""
    from forgetting.curves.power_engine import PowerLawEngine
    from forgetting.studies.decay.capacity import CapacityDecay, CapacityWindow

    return [
        EbbinghausEngine(),
        RecencyWindow(),
        PowerLawEngine(baseline_stability=8.0, decay=0.5),
        CapacityDecay(1, 0.2),
        CapacityWindow(1, 15),
    ]


@pytest.mark.parametrize("content", [None, 3, b"bytes", ["text"]])
def test_register_refuses_content_that_is_not_a_str(content):
    for engine in _scheduled_engines():
        engine.register("a", "", 5)
        before = _state(engine)
        with pytest.raises(ValueError, match=r"^content must be a str \(what the item holds\), got "):
            engine.register("b", content, 6)
        assert _state(engine) == before and engine.present_ids() == ["a"]  # the budget evicted nothing
        assert engine.step(5) == []  # the clock did not move to 6 either


@pytest.mark.parametrize("curve", ["exponential", "power"])
def test_retention_before_the_last_touch_is_refused(curve):
    from forgetting.curves.power_engine import PowerLawEngine

    engine = (
        EbbinghausEngine() if curve == "exponential" else PowerLawEngine(baseline_stability=8.0, decay=0.5)
    )
    engine.register("a", "", 5)
    engine.recall("a", 9)
    before = _state(engine)
    for turn in (-100, -1, 0, 8):
        with pytest.raises(
            ValueError, match=rf"^turn must be an int >= 9, got {turn} \(the last touch of 'a'"
        ):
            engine.retention("a", turn)
    for turn in (9.0, True, "10", None):
        with pytest.raises(ValueError, match=r"^turn must be an int >= 9, got "):
            engine.retention("a", turn)
    assert _state(engine) == before
    assert (
        engine.retention("a", 9) == 1.0
        and engine.retention("a", np.int64(20)) == engine.retention("a", 20) < 1.0
    )


# --- keyword-only settings, any hashable id, integer-like turns, optional content ---------------


def test_positional_settings_are_refused():
    """``EbbinghausEngine(0.3, 8.0)`` read which number is which from the order; now it says so."""
    with pytest.raises(TypeError, match="positional"):
        EbbinghausEngine(0.3, 8.0)  # type: ignore[misc]
    with pytest.raises(TypeError, match="positional"):
        RecencyWindow(15)  # type: ignore[misc]
    assert EbbinghausEngine(eviction_threshold=0.3).eviction_threshold == 0.3
    assert RecencyWindow(window_size=4).window_size == 4


IDS = ["a", "", 0, 7, -3, 2**70, None, ("a", 1), frozenset({1}), 2.5]


def _every_engine():
    from forgetting.studies.decay.capacity import CapacityDecay, CapacityWindow

    return [*_engines(), CapacityDecay(100, 0.2), CapacityWindow(100, 15)]  # room for every id


@pytest.mark.parametrize("make", range(6))
def test_every_engine_takes_any_hashable_id(make):
    """The ids MemoryWorth and GovernedMemory take, with numpy scalars stored as Python values."""
    engine = _every_engine()[make]
    for turn, mem_id in enumerate(IDS, start=1):
        engine.register(mem_id, turn=turn)
        assert engine.is_present(mem_id) and engine.item(mem_id).mem_id == mem_id
        assert engine.recall(mem_id, turn)
    engine.register(np.int64(11), "eleven", np.int64(20))
    engine.register(np.str_("numpy"), "", 20)
    assert type(engine.present_ids()[-2]) is int and type(engine.present_ids()[-1]) is str
    assert engine.present_ids() == [*IDS, 11, "numpy"]
    assert engine.recall(np.int64(11), np.int32(21)) and engine.item(11).last_touched == 21
    assert type(engine.item(11).last_touched) is int and type(engine.last_turn) is int
    assert engine.is_present(np.int64(7)) and not engine.is_present("never")
    for bad in (True, np.bool_(True), float("nan"), ["a"]):
        with pytest.raises(ValueError, match="mem_id"):
            engine.is_present(bad)
        with pytest.raises(ValueError, match="mem_id"):
            engine.item(bad)
    evicted = engine.step(10**6)
    assert evicted == [*IDS, 11, "numpy"] and engine.working_set_size() == 0


@pytest.mark.parametrize("make", range(6))
def test_content_is_optional_and_turn_is_required(make):
    engine = _every_engine()[make]
    engine.register("a", turn=1)
    assert engine.item("a").content == ""
    engine.register("b", "held", 2)
    assert engine.item("b").content == "held"
    with pytest.raises(TypeError, match="missing 1 required argument: 'turn'"):
        engine.register("c")
    with pytest.raises(TypeError, match="missing 1 required argument: 'turn'"):
        engine.register("c", "text")
    with pytest.raises(ValueError, match=r"turn must be an int .*got None"):
        engine.register("c", turn=None)
    assert engine.present_ids() == ["a", "b"] and engine.last_turn == 2


@pytest.mark.parametrize("engine_factory", [EbbinghausEngine, RecencyWindow])
def test_numpy_turns_give_what_python_turns_give(engine_factory):
    python, numpy = engine_factory(), engine_factory()
    for engine, as_turn in ((python, int), (numpy, np.int64)):
        engine.register("a", turn=as_turn(1))
        engine.recall("a", as_turn(3))
    for turn in range(4, 60):
        assert python.step(turn) == numpy.step(np.uint16(turn))
    assert python.present_ids() == numpy.present_ids()
