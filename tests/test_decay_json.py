"""The engines' to_dict/from_dict: JSON-safe, the same state and the same future, clear refusals."""

import json

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from forgetting.curves.power_engine import PowerLawEngine
from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
from json_damage import damaged

SETTINGS = {
    EbbinghausEngine: st.fixed_dictionaries(
        {"eviction_threshold": st.floats(0.01, 0.99), "baseline_stability": st.floats(0.3, 40.0)}
    ),
    RecencyWindow: st.fixed_dictionaries({"window_size": st.integers(1, 30)}),
    PowerLawEngine: st.fixed_dictionaries(
        {
            "baseline_stability": st.floats(0.01, 40.0),
            "decay": st.floats(0.05, 3.0),
            "eviction_threshold": st.floats(0.01, 0.99),
        }
    ),
}
ENGINES = list(SETTINGS)
FRESH = {
    EbbinghausEngine: EbbinghausEngine,
    RecencyWindow: RecencyWindow,
    PowerLawEngine: lambda: PowerLawEngine(baseline_stability=8.0, decay=0.5),
}
IDS = ["a", "b", "", "0", 0, 1, -5, 2**70, True, float("nan")]  # the last two are refused
OPS = st.tuples(
    st.sampled_from(["register", "register", "recall", "recall", "burst", "step", "retention"]),
    st.integers(-1, 3),  # turns to advance (-1: a call that goes backwards, refused)
    st.sampled_from(IDS),
    st.booleans(),  # is_foundational, and whether the turn is a numpy integer
)


def apply(engine, op, turn):
    """One call; the turn it was made at and what it returned (or the refusal's message)."""
    kind, advance, mem_id, flag = op
    at = turn + advance
    call_turn = np.int64(at) if flag and at >= 0 else at
    try:
        if kind == "register":
            result = engine.register(mem_id, f"c{at}", call_turn, is_foundational=flag)
        elif kind == "recall":
            result = engine.recall(mem_id, call_turn)
        elif kind == "burst":  # enough recalls to make S infinite (the decay engines)
            result = [engine.recall(mem_id, call_turn) for _ in range(400)][-1]
        elif kind == "step":
            result = engine.step(call_turn)
        else:
            result = engine.retention(mem_id, call_turn) if hasattr(engine, "retention") else None
    except (ValueError, KeyError) as error:
        result = f"refused: {type(error).__name__}: {error}"
    return max(turn, at), repr(result)  # repr: floats bit for bit


def schedule(engine):
    """What to_dict leaves out because it follows from the items: each item's eviction turn."""
    return [(m, engine.item(m).evict_turn) for m in engine.present_ids()]


@settings(max_examples=120, deadline=None)
@given(cls=st.sampled_from(ENGINES), data=st.data())
def test_a_json_round_trip_keeps_the_state_and_the_future(cls, data):
    engine = cls(**data.draw(SETTINGS[cls], label="settings"))
    ops = data.draw(st.lists(OPS, min_size=10, max_size=120), label="ops")
    cut = data.draw(st.integers(0, len(ops)), label="cut")
    turn = 0
    for op in ops[:cut]:
        turn, _ = apply(engine, op, turn)
    saved = engine.to_dict()
    event(f"items at the cut: {min(len(saved['items']), 3)}")
    event(f"an infinite stability at the cut: {any(row[6] is None for row in saved['items'])}")
    text = json.dumps(saved, allow_nan=False)
    restored = cls.from_dict(json.loads(text))
    assert json.dumps(restored.to_dict(), allow_nan=False) == text
    assert schedule(restored) == schedule(engine) and restored.last_turn == engine.last_turn
    for op in ops[cut:]:
        next_turn, expected = apply(engine, op, turn)
        assert apply(restored, op, turn)[1] == expected
        assert restored.to_dict() == engine.to_dict() and schedule(restored) == schedule(engine)
        turn = next_turn
    assert json.dumps(restored.to_dict(), allow_nan=False) == json.dumps(engine.to_dict(), allow_nan=False)


def _used(cls):
    engine = FRESH[cls]()
    engine.register("plain", "text", 1, is_foundational=True)
    engine.register(7, turn=2)
    for turn in range(2, 5):
        engine.recall(7, turn)
    engine.recall("kept", 6)  # an absent id: the clock moves to 6
    return engine


def test_the_dict_is_what_the_docstring_says():
    data = _used(EbbinghausEngine).to_dict()
    assert data == {
        "format": "forgetting.EbbinghausEngine",
        "version": 1,
        "settings": {"eviction_threshold": 0.2, "baseline_stability": 8.0},
        "turn": 6,
        "registrations": 2,
        "items": [
            ["plain", "text", True, 1, 1, 1, 8.0, 0],
            [7, "", False, 2, 4, 4, data["items"][1][6], 1],
        ],
    }
    engine = EbbinghausEngine()
    engine.register("x", turn=1)
    for _ in range(1000):  # S overflows to inf: JSON has no infinity, the dict writes null
        engine.recall("x", 1)
    assert engine.to_dict()["items"][0][6] is None
    assert EbbinghausEngine.from_dict(engine.to_dict()).item("x").stability == float("inf")
    assert all(row[6] is None for row in _used(RecencyWindow).to_dict()["items"])


@pytest.mark.parametrize("cls", ENGINES)
def test_an_id_json_cannot_keep_is_named(cls):
    engine = FRESH[cls]()
    engine.register(("a", 1), turn=1)
    with pytest.raises(ValueError, match=r"str and int ids only.*got the id \('a', 1\) \(tuple\)"):
        engine.to_dict()
    engine.step(10**4)
    assert cls.from_dict(engine.to_dict()).present_ids() == []  # once evicted, nothing to write


@pytest.mark.parametrize("cls", ENGINES)
def test_another_format_or_version_is_refused_clearly(cls):
    data = _used(cls).to_dict()
    with pytest.raises(ValueError, match=r"^data has version 2; this library reads version 1$"):
        cls.from_dict({**data, "version": 2})
    with pytest.raises(ValueError, match=r"^data has version None; this library reads version 1$"):
        cls.from_dict({k: v for k, v in data.items() if k != "version"})
    other = RecencyWindow if cls is not RecencyWindow else EbbinghausEngine
    with pytest.raises(
        ValueError, match=rf"^data must be a dict with format '{cls.FORMAT}', got format '{other.FORMAT}'$"
    ):
        cls.from_dict(FRESH[other]().to_dict())
    with pytest.raises(ValueError, match=rf"^data must be a dict with format '{cls.FORMAT}', got \[1\]$"):
        cls.from_dict([1])
    with pytest.raises(ValueError, match=r"got no format in \{'version': 1\}"):
        cls.from_dict({"version": 1})


def _replace(data, key, value):
    return {**data, key: value}


def _item(data, position, value):
    items = [list(row) for row in data["items"]]
    items[1][position] = value
    return {**data, "items": items}


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (
            lambda d: {k: v for k, v in d.items() if k != "items"},
            r"not an EbbinghausEngine's to_dict \(KeyError",
        ),
        (lambda d: _replace(d, "settings", None), r"data\['settings'\] must be a dict, got None"),
        (
            lambda d: _replace(d, "settings", {"theta": 0.2}),
            r"\(TypeError: .*unexpected keyword argument 'theta'",
        ),
        (lambda d: _replace(d, "settings", {"eviction_threshold": 2.0}), r"eviction_threshold must be"),
        (lambda d: _replace(d, "turn", "6"), r"turn must be an int >= 0, got '6'"),
        (lambda d: _replace(d, "turn", 3), r"0 <= created <= last touch <= turn"),
        (lambda d: _replace(d, "registrations", 1), r"sequence is not above the previous item's and below"),
        (lambda d: _replace(d, "items", {"a": 1}), r"data\['items'\] must be a list of lists of 8 entries"),
        (lambda d: _replace(d, "items", [[1, 2]]), r"data\['items'\] must be a list of lists of 8 entries"),
        (lambda d: _item(d, 0, ["a", 1]), r"its id is not a str or an int"),
        (lambda d: _item(d, 0, True), r"its id is not a str or an int"),
        (lambda d: _item(d, 0, "plain"), r"its id is there twice"),
        (lambda d: _item(d, 1, None), r"its content is not a str"),
        (lambda d: _item(d, 2, 0), r"its flag not a bool"),
        (lambda d: _item(d, 3, 2.0), r"not all ints"),
        (lambda d: _item(d, 3, -1), r"0 <= created"),
        (lambda d: _item(d, 5, 0), r"its turns and touches are not those of an item"),
        (lambda d: _item(d, 6, -1.0), r"its stability is not a float > 0"),
        (lambda d: _item(d, 6, 5), r"its stability is not a float > 0"),
        (lambda d: _item(d, 6, float("nan")), r"its stability is not a float > 0"),
        (lambda d: _item(d, 7, 0), r"its sequence is not above the previous item's"),
    ],
)
def test_a_damaged_dict_is_refused_with_a_value_error(damage, match):
    data = _used(EbbinghausEngine).to_dict()
    with pytest.raises(ValueError, match=match):
        EbbinghausEngine.from_dict(damage(data))


def test_an_item_before_any_recall_has_the_baseline_stability():
    data = _used(EbbinghausEngine).to_dict()
    items = [["plain", "text", True, 1, 1, 1, 9.0, 0]]
    with pytest.raises(ValueError, match=r"8\.0 before any recall"):
        EbbinghausEngine.from_dict({**data, "items": items})
    window = _used(RecencyWindow).to_dict()
    items = [[7, "", False, 2, 4, 4, 3.0, 1]]
    with pytest.raises(ValueError, match=r"must be null \(the window reads none\)"):
        RecencyWindow.from_dict({**window, "items": items})


@settings(max_examples=150, deadline=None)
@given(cls=st.sampled_from(ENGINES), data=st.data())
def test_any_damage_is_a_value_error_or_a_working_engine(cls, data):
    """No KeyError, TypeError or IndexError leaks: from_dict either refuses (ValueError) or gives an
    engine that writes JSON-safe data and takes further calls."""
    saved = _used(cls).to_dict()
    broken = damaged(data, saved)
    try:
        engine = cls.from_dict(broken)
    except ValueError:
        return
    json.dumps(engine.to_dict(), allow_nan=False)
    turn = engine.last_turn
    for mem_id in engine.present_ids():
        engine.recall(mem_id, turn + 1)
    engine.register("new", turn=turn + 2)
    assert "new" in engine.step(turn + 10**4)
