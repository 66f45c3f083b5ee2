"""PowerLawEngine: the direct reading of its rule, matched grace, bad input."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.curves.families import power_retention
from forgetting.curves.power_engine import PowerLawEngine, scan_power_evictions
from forgetting.decay.engines import EbbinghausEngine, Engine


class DirectPowerEngine:
    """The rule written out plainly: scan every item at every step."""

    def __init__(self, s0, decay, theta):
        self.s0, self.decay, self.theta, self.items = s0, decay, theta, {}

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
        gone = [
            m
            for m, i in self.items.items()
            if power_retention(turn - i["last"], i["S"], self.decay) < self.theta
        ]
        for mem_id in gone:
            del self.items[mem_id]
        return gone


event = st.tuples(st.integers(0, 4), st.sampled_from(["register", "recall", "step"]), st.integers(0, 6))


@settings(max_examples=150, deadline=None)
@given(
    theta=st.floats(0.01, 0.99),
    s0=st.floats(0.001, 40.0),
    decay=st.floats(0.05, 3.0),
    events=st.lists(event, max_size=120),
)
def test_engine_matches_direct_reading(theta, s0, decay, events):
    engine, direct = (
        PowerLawEngine(baseline_stability=s0, decay=decay, eviction_threshold=theta),
        DirectPowerEngine(s0, decay, theta),
    )
    turn = 0
    for advance, action, index in events:
        turn += advance
        mem_id = f"m{index}"
        if action == "register":
            if engine.is_present(mem_id):
                continue
            engine.register(mem_id, "", turn)
            direct.register(mem_id, turn)
        elif action == "recall":
            assert engine.recall(mem_id, turn) == direct.recall(mem_id, turn)
        else:
            expected = scan_power_evictions(engine, turn)
            assert engine.step(turn) == direct.step(turn) == expected
        assert engine.present_ids() == list(direct.items)
        for mem_id, item in direct.items.items():
            assert engine.item(mem_id).stability == item["S"]


@settings(max_examples=60, deadline=None)
@given(decay=st.floats(0.1, 2.0), recalls=st.lists(st.integers(1, 30), max_size=6))
def test_matched_engine_evicts_when_the_exponential_does(decay, recalls):
    power, exponential = PowerLawEngine.matched(decay=decay), EbbinghausEngine()
    evicted = {"power": None, "exponential": None}
    recall_turns, turn = set(), 1
    for gap in recalls:
        turn += gap
        recall_turns.add(turn)
    for engine in (power, exponential):
        engine.register("fact", "", 1)
    for now in range(1, 600):
        for name, engine in (("power", power), ("exponential", exponential)):
            if now in recall_turns:
                engine.recall("fact", now)
            if engine.step(now) and evicted[name] is None:
                evicted[name] = now
    assert evicted["power"] == evicted["exponential"]


def test_retention_reads_the_power_law():
    engine = PowerLawEngine(baseline_stability=5.0, decay=0.5)
    engine.register("x", "", 2)
    assert engine.retention("x", 7) == pytest.approx(0.9, abs=1e-12)


def test_engine_satisfies_the_engine_protocol():
    engine: Engine = PowerLawEngine.matched(decay=0.5)
    assert engine.working_set_size() == 0


@pytest.mark.parametrize(
    "args, message",
    [
        ((0.0, 0.5), "baseline_stability"),
        ((8.0, 0.0), "decay"),
        ((8.0, 0.5, 1.0), "eviction_threshold"),
        ((float("nan"), 0.5), "baseline_stability"),
        (("8", 0.5), "baseline_stability"),
    ],
)
def test_bad_parameters(args, message):
    names = ("baseline_stability", "decay", "eviction_threshold")
    with pytest.raises(ValueError, match=message):
        PowerLawEngine(**dict(zip(names, args)))


def test_positional_parameters_are_refused():
    with pytest.raises(TypeError, match="positional"):
        PowerLawEngine(8.0, 0.5)  # type: ignore[misc]
    with pytest.raises(TypeError, match="positional"):
        PowerLawEngine.matched(0.5)  # type: ignore[misc]


def test_refused_call_changes_nothing():
    engine = PowerLawEngine.matched(decay=0.5)
    engine.register("a", "", 3)
    with pytest.raises(ValueError, match="turn must not go backwards"):
        engine.recall("a", 2)
    assert engine.item("a").touch_count == 1 and engine.step(3) == []
