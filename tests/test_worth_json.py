"""The estimators' to_dict/from_dict: JSON-safe, the same state and the same future, clear refusals."""

import json

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from forgetting.worth import ContextualMemoryWorth, DiscountedMemoryWorth, MemoryWorth
from json_damage import damaged

TAXONOMY = {
    "prior": st.floats(0.0, 1.0),
    "min_evidence": st.sampled_from([0.0, 1.0, 2.5, 5.0]),
    "low_threshold": st.sampled_from([0.1, 0.3]),
}
SETTINGS = {
    MemoryWorth: st.fixed_dictionaries(TAXONOMY),
    DiscountedMemoryWorth: st.fixed_dictionaries(
        {**TAXONOMY, "discount": st.sampled_from([1.0, 0.99, 0.5, 1e-3])}  # 1e-3: rescales often
    ),
    ContextualMemoryWorth: st.fixed_dictionaries(TAXONOMY),
}
ESTIMATORS = list(SETTINGS)
IDS = ["a", "b", "", "0", 0, 1, -5, 2**70, np.int64(3), True]  # True is refused
CONTEXTS = ["easy", "hard", 0, 1]
WEIGHT = st.floats(0.0, 1e6) | st.sampled_from([0.0, 1e-300, 1e300])  # 1e300: some sums overflow
EPISODE = st.tuples(
    st.lists(st.sampled_from(IDS), max_size=4),  # empty or repeated ids: refused
    st.booleans(),
    st.none() | st.lists(WEIGHT, min_size=4, max_size=4),
    st.sampled_from(CONTEXTS),
)


def apply(estimator, episode):
    """One update and every reading after it, as text (repr: floats bit for bit)."""
    ids, success, weights, context = episode
    keyword = {"context": context} if isinstance(estimator, ContextualMemoryWorth) else {}
    try:
        estimator.update(ids, success, None if weights is None else weights[: len(ids)], **keyword)
        result = "accepted"
    except ValueError as error:
        result = f"refused: {error}"
    readings = [
        result,
        estimator.n_episodes_,
        estimator.memory_ids(),
        estimator.successes_,
        estimator.failures_,
    ]
    for mem_id in ("a", "b", "", 0, 2**70, "never"):
        where = (keyword["context"],) if keyword else ()
        readings += [
            estimator.counters(mem_id, *where),
            estimator.worth(mem_id, *where),
            estimator.evidence(mem_id, *where),
            estimator.classify(mem_id, *where),
        ]
        if keyword:
            readings += [estimator.pooled_counters(mem_id), estimator.pooled_worth(mem_id)]
    return repr(readings)


@settings(max_examples=60, deadline=None)
@given(cls=st.sampled_from(ESTIMATORS), data=st.data())
def test_a_json_round_trip_keeps_the_state_and_the_future(cls, data):
    estimator = cls(**data.draw(SETTINGS[cls], label="settings"))
    episodes = data.draw(st.lists(EPISODE, min_size=5, max_size=150), label="episodes")
    cut = data.draw(st.integers(0, len(episodes)), label="cut")
    for episode in episodes[:cut]:
        apply(estimator, episode)
    saved = estimator.to_dict()
    event(f"memories at the cut: {min(len(estimator.memory_ids()), 3)}")
    text = json.dumps(saved, allow_nan=False)
    restored = cls.from_dict(json.loads(text))
    assert json.dumps(restored.to_dict(), allow_nan=False) == text
    for episode in episodes[cut:]:
        assert apply(restored, episode) == apply(estimator, episode)
        assert restored.to_dict() == estimator.to_dict()
    assert json.dumps(restored.to_dict(), allow_nan=False) == json.dumps(estimator.to_dict(), allow_nan=False)


@pytest.mark.parametrize("cut", [0, 1, 39, 40, 41, 42, 80, 83])
def test_a_round_trip_across_a_rescale_continues_bit_for_bit(cut):
    """gamma = 0.001: the scale falls below 1e-120 every 40 episodes and the stored values are
    multiplied back; a restored estimator rescales at the same episode with the same numbers."""
    rng = np.random.default_rng(cut)
    episodes = [(list(rng.choice(5, size=2, replace=False)), bool(rng.random() < 0.6)) for _ in range(130)]
    estimator = DiscountedMemoryWorth(discount=1e-3, min_evidence=0.5)
    for ids, success in episodes[:cut]:
        estimator.update(ids, success, weights=[0.5, 3.0])
    restored = DiscountedMemoryWorth.from_dict(json.loads(json.dumps(estimator.to_dict(), allow_nan=False)))
    for ids, success in episodes[cut:]:
        for model in (estimator, restored):
            model.update(ids, success, weights=[0.5, 3.0])
        assert restored.to_dict() == estimator.to_dict()
        assert [repr(restored.counters(m)) for m in range(5)] == [
            repr(estimator.counters(m)) for m in range(5)
        ]


def test_the_dicts_are_what_the_docstrings_say():
    plain = MemoryWorth(prior=0.25).update(["a", 3], True).update(["a"], False, weights=[0.5])
    assert plain.to_dict() == {
        "format": "forgetting.MemoryWorth",
        "version": 1,
        "settings": {"prior": 0.25, "min_evidence": 5.0, "high_threshold": 0.7, "low_threshold": 0.3},
        "episodes": 2,
        "memories": [["a", 1.0, 0.5], [3, 1.0, 0.0]],
    }
    discounted = DiscountedMemoryWorth(discount=0.5).update(["a"], True).update(["b"], False)
    data = discounted.to_dict()
    assert data["format"] == "forgetting.DiscountedMemoryWorth" and data["settings"]["discount"] == 0.5
    assert data["scale"] == 0.25 and data["memories"] == [["a", 2.0, 0.0], ["b", 0.0, 4.0]]
    contextual = ContextualMemoryWorth().update(["a"], True, context=1).update(["a"], False, context="x")
    assert contextual.to_dict()["counters"] == [[1, "a", 1.0, 0.0], ["x", "a", 0.0, 1.0]]
    assert contextual.to_dict()["format"] == "forgetting.ContextualMemoryWorth"


def test_an_id_json_cannot_keep_is_named():
    with pytest.raises(ValueError, match=r"str and int ids only.*got the id \('a', 1\) \(tuple\)"):
        MemoryWorth().update([("a", 1)], True).to_dict()
    with pytest.raises(ValueError, match=r"str and int ids only.*got the id 2\.5 \(float\)"):
        DiscountedMemoryWorth().update([2.5], True).to_dict()
    with pytest.raises(ValueError, match=r"str and int ids only.*got the context \('t',\) \(tuple\)"):
        ContextualMemoryWorth().update(["a"], True, context=("t",)).to_dict()
    assert MemoryWorth().update([np.int64(4)], True).to_dict()["memories"] == [[4, 1.0, 0.0]]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_another_format_or_version_is_refused_clearly(cls):
    data = cls().to_dict()
    with pytest.raises(ValueError, match=r"^data has version 2; this library reads version 1$"):
        cls.from_dict({**data, "version": 2})
    with pytest.raises(ValueError, match=r"^data has version '1'; this library reads version 1$"):
        cls.from_dict({**data, "version": "1"})
    other = MemoryWorth if cls is not MemoryWorth else DiscountedMemoryWorth
    with pytest.raises(
        ValueError, match=rf"^data must be a dict with format '{cls.FORMAT}', got format '{other.FORMAT}'$"
    ):
        cls.from_dict(other().to_dict())
    with pytest.raises(ValueError, match=rf"^data must be a dict with format '{cls.FORMAT}', got None$"):
        cls.from_dict(None)


def _with(data, key, value):
    return {**data, key: value}


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (
            lambda d: {k: v for k, v in d.items() if k != "memories"},
            r"not a MemoryWorth's to_dict \(KeyError",
        ),
        (lambda d: _with(d, "settings", [0.5]), r"data\['settings'\] must be a dict, got \[0\.5\]"),
        (
            lambda d: _with(d, "settings", {"prior": 2.0}),
            r"prior must be a real number in \[0, 1\], got 2\.0",
        ),
        (
            lambda d: _with(d, "settings", {"gamma": 1.0}),
            r"\(TypeError: .*unexpected keyword argument 'gamma'",
        ),
        (lambda d: _with(d, "episodes", -1), r"episodes must be an int >= 0, got -1"),
        (lambda d: _with(d, "episodes", 2.0), r"episodes must be an int >= 0, got 2\.0"),
        (lambda d: _with(d, "memories", [["a", 1.0]]), r"data\['memories'\] must be a list of lists of 3"),
        (lambda d: _with(d, "memories", "a"), r"data\['memories'\] must be a list of lists of 3"),
        (lambda d: _with(d, "memories", [[["a"], 1.0, 0.0]]), r"must hold str or int ids only"),
        (lambda d: _with(d, "memories", [[False, 1.0, 0.0]]), r"must hold str or int ids only"),
        (lambda d: _with(d, "memories", [["a", 1.0, 0.0], ["a", 1.0, 0.0]]), r"repeats an id"),
        (lambda d: _with(d, "memories", [["a", -1.0, 0.0]]), r"two finite real numbers >= 0"),
        (lambda d: _with(d, "memories", [["a", "1", 0.0]]), r"two finite real numbers >= 0"),
        (lambda d: _with(d, "memories", [["a", True, 0.0]]), r"two finite real numbers >= 0"),
        (lambda d: _with(d, "memories", [["a", 1e308, 1e308]]), r"with a finite sum"),
        (lambda d: _with(d, "memories", [["a", float("nan"), 0.0]]), r"two finite real numbers >= 0"),
    ],
)
def test_a_damaged_dict_is_refused_with_a_value_error(damage, match):
    data = MemoryWorth().update(["a", "b"], True).to_dict()
    with pytest.raises(ValueError, match=match):
        MemoryWorth.from_dict(damage(data))


def test_a_damaged_scale_or_context_is_refused():
    data = DiscountedMemoryWorth().update(["a"], True).to_dict()
    for scale in (0.0, 1.5, None, float("inf")):
        with pytest.raises(ValueError, match=r"scale must be a real number in \(0, 1\]"):
            DiscountedMemoryWorth.from_dict({**data, "scale": scale})
    data = ContextualMemoryWorth().update(["a"], True, context="c").to_dict()
    with pytest.raises(ValueError, match=r"data\['counters'\] must be a list of lists of 4"):
        ContextualMemoryWorth.from_dict({**data, "counters": [["a", 1.0, 0.0]]})
    with pytest.raises(ValueError, match=r"must hold str or int ids only"):
        ContextualMemoryWorth.from_dict({**data, "counters": [[None, "a", 1.0, 0.0]]})


def _used(cls):
    estimator = cls()
    keyword = {"context": "c"} if cls is ContextualMemoryWorth else {}
    return estimator.update(["a", 1], True, **keyword).update(["a"], False, **keyword)


@settings(max_examples=150, deadline=None)
@given(cls=st.sampled_from(ESTIMATORS), data=st.data())
def test_any_damage_is_a_value_error_or_a_working_estimator(cls, data):
    """No KeyError, TypeError or IndexError leaks: from_dict either refuses (ValueError) or gives an
    estimator that writes JSON-safe data and takes further episodes."""
    saved = _used(cls).to_dict()
    broken = damaged(data, saved)
    try:
        estimator = cls.from_dict(broken)
    except ValueError:
        return
    json.dumps(estimator.to_dict(), allow_nan=False)
    keyword = {"context": "c"} if cls is ContextualMemoryWorth else {}
    estimator.update(["a", "new"], True, **keyword)
    where = ("c",) if keyword else ()
    assert 0.0 <= estimator.worth("a", *where) <= 1.0 and estimator.classify("new", *where)
