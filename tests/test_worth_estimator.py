"""The Memory Worth estimator: exact counts, prior, bad input refused without a partial update."""

import copy
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.worth import UNCERTAIN, DiscountedMemoryWorth, MemoryWorth, WorthArrays
from forgetting.worth.estimator import validate_episode


def state(estimator):
    """Everything an update may change, copied."""
    if isinstance(estimator, WorthArrays):
        return (estimator.successes_.copy(), estimator.failures_.copy(), estimator.n_episodes_)
    return copy.deepcopy((estimator.successes_, estimator.failures_, estimator.n_episodes_))


def assert_same_state(before, after):
    for a, b in zip(before, after):
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, b)
        else:
            assert a == b


def test_hand_made_stream_gives_exact_counters():
    mw = MemoryWorth()
    mw.update(["a", "b", "c"], True)
    mw.update(["a", "c"], False)
    mw.update(["c", "d"], True, weights=[0.5, 2.0])
    mw.update(["a"], True, weights=[0.0])
    assert mw.successes_ == {"a": 1.0, "b": 1.0, "c": 1.5, "d": 2.0}
    assert mw.failures_ == {"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.0}
    assert list(mw.successes_) == list(mw.failures_) == ["a", "b", "c", "d"]  # first-retrieval order
    assert mw.n_episodes_ == 4
    assert mw.counters("c") == (1.5, 1.0)
    assert mw.worth("a") == 0.5
    assert mw.worth("c") == 0.6
    assert mw.worth("d") == 1.0
    assert mw.evidence("c") == 2.5
    assert mw.memory_ids() == ["a", "b", "c", "d"]


def test_prior_before_evidence_and_for_unseen_ids():
    mw = MemoryWorth(prior=0.25)
    assert mw.worth("never") == 0.25 and mw.evidence("never") == 0.0
    assert mw.counters("never") == (0.0, 0.0)
    mw.update(["zero-weight"], False, weights=[0.0])
    assert "zero-weight" in mw.failures_
    assert mw.worth("zero-weight") == 0.25  # retrieved, but no evidence
    assert mw.classify("never") == UNCERTAIN


def test_update_returns_self_and_reset_forgets():
    mw = MemoryWorth()
    assert mw.update([1], True) is mw
    assert mw.reset() is mw
    assert mw.successes_ == {} and mw.n_episodes_ == 0


def test_numpy_inputs_are_accepted_and_stored_as_python_values():
    mw = MemoryWorth()
    mw.update(np.array([3, 4]), np.bool_(True), weights=np.array([1.0, 2.0]))
    assert mw.successes_ == {3: 1.0, 4: 2.0}
    assert all(type(key) is int for key in mw.successes_)
    assert mw.worth(np.int64(4)) == 1.0


BAD_EPISODES = [
    pytest.param(["a"], True, [-1.0], "weights", id="negative weight"),
    pytest.param(["a"], True, [math.nan], "weights", id="nan weight"),
    pytest.param(["a"], True, [math.inf], "weights", id="inf weight"),
    pytest.param(["a"], True, [True], "weights", id="bool weight"),
    pytest.param(["a"], True, ["1"], "weights", id="str weight"),
    pytest.param(["a", "b"], True, [1.0], "one entry per retrieved id", id="too few weights"),
    pytest.param(["a"], True, [1.0, 1.0], "one entry per retrieved id", id="too many weights"),
    pytest.param(["a"], True, 1.0, "weights must be a sequence", id="scalar weights"),
    pytest.param([], True, None, "must not be empty", id="empty retrieval"),
    pytest.param(["a", "b", "a"], True, None, "duplicates ['a']", id="duplicate id"),
    pytest.param([["a"]], True, None, "hashable", id="unhashable id"),
    pytest.param("ab", True, None, "sequence of memory ids", id="string as retrieval"),
    pytest.param({"a"}, True, None, "sequence of memory ids", id="set as retrieval"),
    pytest.param(np.array([[1, 2]]), True, None, "1-d", id="2-d array"),
    pytest.param(["a"], 1, None, "success must be a bool", id="int 1 outcome"),
    pytest.param(["a"], 0, None, "success must be a bool", id="int 0 outcome"),
    pytest.param(["a"], -1, None, "success must be a bool", id="paper-style -1 outcome"),
    pytest.param(["a"], 1.0, None, "success must be a bool", id="float outcome"),
    pytest.param(["a"], "yes", None, "success must be a bool", id="str outcome"),
    pytest.param(["a"], None, None, "success must be a bool", id="None outcome"),
    pytest.param(["a"], np.int64(1), None, "success must be a bool", id="numpy int outcome"),
    pytest.param([True], True, None, "memory ids must not be bools", id="bool id"),
    pytest.param([1, np.bool_(False)], True, None, "memory ids must not be bools", id="numpy bool id"),
    pytest.param(
        [1, True], True, None, r"memory ids must not be bools \(True == 1 ", id="bool beside its int"
    ),
    pytest.param([math.nan], True, None, "memory ids must equal themselves", id="nan id"),
    pytest.param(np.array([1.0, np.nan]), True, None, "memory ids must equal themselves", id="numpy nan id"),
    pytest.param(
        ["a"], True, np.array([[1.0]]), r"weights must be 1-d, got shape \(1, 1\)", id="2-d weights"
    ),
    pytest.param(
        ["a", "b"], True, np.ones((1, 2)), "weights must be 1-d", id="2-d weights of the right size"
    ),
    pytest.param(["a", "b"], True, [[1.0, 1.0]], "weights must be 1-d", id="nested list weights"),
]


@pytest.mark.parametrize("retrieved, success, weights, message", BAD_EPISODES)
@pytest.mark.parametrize("make", [MemoryWorth, DiscountedMemoryWorth], ids=["plain", "discounted"])
def test_bad_episode_is_rejected_without_touching_counters(make, retrieved, success, weights, message):
    mw = make()
    mw.update(["a", "b"], True).update(["b"], False, weights=[0.5])
    before = state(mw)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        mw.update(retrieved, success, weights)
    assert_same_state(before, state(mw))
    assert mw.worth("a") == 1.0


@pytest.mark.parametrize("make", [MemoryWorth, DiscountedMemoryWorth], ids=["plain", "discounted"])
def test_an_id_that_would_merge_or_never_be_found_is_refused_when_read(make):
    """``True == 1`` and ``hash(True) == hash(1)``: reading ``True`` must not read memory 1."""
    mw = make().update([1, 2.5], True)
    for bad in (True, np.bool_(True), math.nan, np.float64("nan")):
        for read in (mw.counters, mw.worth, mw.evidence, mw.classify):
            with pytest.raises(
                ValueError, match="^mem_id must be a memory id that is not a bool and equals itself"
            ):
                read(bad)
    with pytest.raises(ValueError, match=r"^mem_id must be hashable, got \['a'\]"):
        mw.worth(["a"])
    assert mw.counters(1) == mw.counters(np.int64(1)) == (1.0, 0.0) and mw.memory_ids() == [1, 2.5]


def test_every_problem_of_an_episode_is_listed_at_once():
    with pytest.raises(ValueError, match="duplicates") as info:
        MemoryWorth().update(["a", "a"], 1, weights=[-1.0])
    text = str(info.value)
    assert "duplicates" in text and "success must be a bool" in text and "weights" in text


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"prior": 1.5}, "prior"),
        ({"prior": -0.1}, "prior"),
        ({"prior": math.nan}, "prior"),
        ({"prior": True}, "prior"),
        ({"prior": "0.5"}, "prior"),
        ({"min_evidence": -1}, "min_evidence"),
        ({"min_evidence": math.inf}, "min_evidence"),
        ({"high_threshold": 1.01}, "high_threshold"),
        ({"low_threshold": -0.01}, "low_threshold"),
        ({"high_threshold": 0.3, "low_threshold": 0.3}, "low_threshold must be < high_threshold"),
        ({"high_threshold": 0.2, "low_threshold": 0.6}, "low_threshold must be < high_threshold"),
    ],
)
def test_bad_hyperparameters_name_argument_value_and_range(kwargs, name):
    with pytest.raises(ValueError, match=name) as info:
        MemoryWorth(**kwargs)
    assert repr(next(iter(kwargs.values()))) in str(info.value)
    with pytest.raises(ValueError, match=name):
        WorthArrays(3, **kwargs)


def test_all_bad_hyperparameters_are_listed_at_once():
    with pytest.raises(ValueError, match="prior must be") as info:
        MemoryWorth(prior=2.0, min_evidence=-1.0, high_threshold=7)
    text = str(info.value)
    assert "prior must be a real number in [0, 1], got 2.0" in text
    assert "min_evidence must be a finite real number >= 0, got -1.0" in text
    assert "high_threshold must be a real number in [0, 1], got 7" in text


@pytest.mark.parametrize("make", [MemoryWorth, DiscountedMemoryWorth], ids=["plain", "discounted"])
def test_weights_whose_sum_overflows_are_refused_without_touching_counters(make):
    mw = make().update(["a"], True, weights=[1e308])
    before = state(mw)
    with pytest.raises(ValueError, match=r"weights must keep h\+ \+ h- finite.*'a'"):
        mw.update(["b", "a"], True, weights=[1.0, 1e308])  # h+(a) would overflow
    assert_same_state(before, state(mw))
    with pytest.raises(ValueError, match=r"h\+ \+ h- finite"):
        mw.update(["a"], False, weights=[1e308])  # h+ and h- finite, their sum not
    assert_same_state(before, state(mw))
    assert math.isfinite(mw.evidence("a")) and mw.classify("a")


def test_discounted_weights_are_checked_after_the_scale_they_are_divided_by():
    """The online form stores ``w / s``: a weight can overflow there although ``h`` would not."""
    dmw = DiscountedMemoryWorth(discount=0.5)
    for _ in range(300):  # s = 0.5**300 ~ 5e-91, above the rescale point
        dmw.update(["x"], True)
    before = state(dmw)
    with pytest.raises(ValueError, match="overflows the discounted counters"):
        dmw.update(["y"], True, weights=[1e300])
    assert_same_state(before, state(dmw))
    assert dmw.update(["y"], True, weights=[1e200]).counters("y")[0] == pytest.approx(1e200, rel=1e-12)


_IDS = st.one_of(
    st.text(max_size=3),
    st.integers(-3, 3),
    st.booleans(),
    st.sampled_from([np.int64(1), np.str_("a"), 1.0, (1, 2)]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.lists(_IDS, max_size=4), st.lists(_IDS, max_size=4).map(tuple)),
    st.sampled_from([True, False, np.True_, 1, 0, None]),
)
def test_the_common_episodes_short_path_returns_what_the_full_check_does(retrieved, success):
    """validate_episode's shorter path (distinct str/int ids in a list or tuple, a bool, no
    weights) agrees with the full check on every input: the same result, or the same refusal."""
    from forgetting.worth.estimator import _validate_fully

    def outcome(check):
        try:
            return check(retrieved, success, None)
        except ValueError as error:
            return str(error)

    short, full = outcome(validate_episode), outcome(_validate_fully)
    assert short == full
    if not isinstance(short, str):
        assert [type(m) for m in short[0]] == [type(m) for m in full[0]]
        assert type(short[1]) is type(full[1]) is bool


@pytest.mark.parametrize(
    ("make", "args"),
    [("MemoryWorth", (0.7, 0.3)), ("DiscountedMemoryWorth", (0.9,)), ("ContextualMemoryWorth", (0.5,))],
)
def test_positional_settings_are_refused(make, args):
    """``MemoryWorth(0.7, 0.3)`` was a prior of 0.7 and a min_evidence of 0.3, silently."""
    from forgetting import worth

    with pytest.raises(TypeError, match="positional"):
        getattr(worth, make)(*args)
    assert MemoryWorth(prior=0.7, min_evidence=0.3).settings() == {
        "prior": 0.7,
        "min_evidence": 0.3,
        "high_threshold": 0.7,
        "low_threshold": 0.3,
    }
