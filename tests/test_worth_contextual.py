"""Contextual Memory Worth: counters per context, pooled back to the plain estimator."""

import copy
import math

import numpy as np
import pytest

from forgetting.worth import UNCERTAIN, ContextualMemoryWorth, MemoryWorth, WorthArrays
from test_worth_estimator import BAD_EPISODES  # the same episodes, the same refusals


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


@pytest.mark.parametrize("retrieved, success, weights, message", BAD_EPISODES)
def test_contextual_rejects_the_same_episodes(retrieved, success, weights, message):
    cmw = ContextualMemoryWorth().update(["a"], True, context="x")
    before = state(cmw)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        cmw.update(retrieved, success, weights, context="x")
    assert_same_state(before, state(cmw))


@pytest.mark.parametrize("bad", [True, np.bool_(False), math.nan], ids=["bool", "numpy bool", "nan"])
def test_a_context_that_would_merge_or_never_be_found_is_refused(bad):
    cmw = ContextualMemoryWorth().update(["a"], True, context=1).update(["a"], False, context=0)
    before = state(cmw)
    with pytest.raises(ValueError, match="^context must be a context that is not a bool and equals itself"):
        cmw.update(["a"], True, context=bad)
    assert_same_state(before, state(cmw))
    for read in (cmw.counters, cmw.worth, cmw.evidence, cmw.classify):
        with pytest.raises(ValueError, match="^context must be a context that is not a bool"):
            read("a", bad)
        with pytest.raises(ValueError, match="^mem_id must be a memory id that is not a bool"):
            read(bad, 1)
    with pytest.raises(ValueError, match="^mem_id must be a memory id that is not a bool"):
        cmw.pooled_worth(bad)
    assert cmw.counters("a", 1) == (1.0, 0.0) and cmw.contexts() == [1, 0]


def test_unhashable_context_is_rejected():
    cmw = ContextualMemoryWorth()
    with pytest.raises(ValueError, match="context must be hashable"):
        cmw.update(["a"], True, context=["hard"])
    assert cmw.successes_ == {}


def test_contextual_counters_are_separate_and_pool_to_the_plain_estimator():
    stream = [
        (["a", "b"], True, "easy"),
        (["a"], False, "hard"),
        (["b", "c"], False, "hard"),
        (["a", "c"], True, "easy"),
        (["c"], True, "hard"),
    ]
    cmw, plain = ContextualMemoryWorth(), MemoryWorth()
    for retrieved, success, context in stream:
        cmw.update(retrieved, success, context=context)
        plain.update(retrieved, success)
    assert cmw.counters("a", "easy") == (2.0, 0.0)
    assert cmw.counters("a", "hard") == (0.0, 1.0)
    assert cmw.worth("a", "hard") == 0.0 and cmw.worth("a", "unknown context") == 0.5
    assert cmw.evidence("c", "hard") == 2.0
    assert cmw.classify("a", "easy") == UNCERTAIN
    assert cmw.contexts() == ["easy", "hard"]
    assert cmw.memory_ids() == ["a", "b", "c"]
    for m in ("a", "b", "c", "never"):
        assert cmw.pooled_counters(m) == plain.counters(m)
        assert cmw.pooled_worth(m) == plain.worth(m)


def test_weights_whose_sum_overflows_are_refused_without_touching_counters():
    cmw = ContextualMemoryWorth().update(["a"], True, weights=[1e308], context="x")
    before = state(cmw)
    with pytest.raises(ValueError, match=r"weights must keep h\+ \+ h- finite"):
        cmw.update(["a"], False, weights=[1e308], context="x")
    assert_same_state(before, state(cmw))
    cmw.update(["a"], False, weights=[1e308], context="y")  # another context: its own counters
    assert cmw.evidence("a", "y") == 1e308
