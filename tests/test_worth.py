"""Memory Worth: exact counts, prior and taxonomy edges, bad input, scalar/vectorized agreement."""

import copy
import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from forgetting import worth
from forgetting.worth import (HIGH_VALUE, LOW_VALUE, MIXED, UNCERTAIN, ContextualMemoryWorth,
                              DiscountedMemoryWorth, MemoryWorth, WorthArrays, evidence_volume,
                              memory_worth, oracle_weights, score_weights, uniform_weights,
                              update_batch, worth_class)


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


# --- golden values ---------------------------------------------------------------------------

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


def test_memory_worth_formula_on_arrays():
    pos = np.array([0.0, 3.0, 0.0, 2.5])
    neg = np.array([0.0, 1.0, 4.0, 2.5])
    assert memory_worth(pos, neg, prior=0.5).tolist() == [0.5, 0.75, 0.0, 0.5]
    assert evidence_volume(pos, neg).tolist() == [0.0, 4.0, 4.0, 5.0]
    assert isinstance(memory_worth(1.0, 1.0), float)


# --- taxonomy edges --------------------------------------------------------------------------

@pytest.mark.parametrize("pos, neg, expected", [
    (7.0, 3.0, HIGH_VALUE),   # worth exactly 0.7 -> high-value
    (3.0, 7.0, LOW_VALUE),    # worth exactly 0.3 -> low-value
    (5.0, 5.0, MIXED),
    (6.9, 3.1, MIXED),        # just below 0.7
    (5.0, 0.0, HIGH_VALUE),   # evidence exactly min_evidence (5) is enough
    (4.0, 0.0, UNCERTAIN),    # evidence 4 < 5, even at worth 1
    (0.0, 4.999, UNCERTAIN),
    (0.0, 5.0, LOW_VALUE),
])
def test_classification_at_the_edges(pos, neg, expected):
    mw = MemoryWorth()
    mw.successes_["m"], mw.failures_["m"] = pos, neg
    assert mw.classify("m") == expected
    assert worth_class(memory_worth(pos, neg), pos + neg) == expected


def test_classification_thresholds_are_configurable():
    mw = MemoryWorth(min_evidence=0.0, high_threshold=0.9, low_threshold=0.1)
    mw.update(["a"], True)
    mw.update(["b"], True).update(["b"], False)
    assert mw.classify("a") == HIGH_VALUE
    assert mw.classify("b") == MIXED
    assert mw.classify("unseen") == MIXED  # no evidence needed; prior 0.5 is mixed
    labels = worth_class(np.array([0.9, 0.1, 0.5, 1.0]), np.array([1.0, 1.0, 1.0, 0.5]),
                         min_evidence=1.0, high_threshold=0.9, low_threshold=0.1)
    assert labels.tolist() == [HIGH_VALUE, LOW_VALUE, MIXED, UNCERTAIN]


def test_default_constants():
    assert (worth.DEFAULT_PRIOR, worth.DEFAULT_MIN_EVIDENCE, worth.DEFAULT_HIGH_THRESHOLD,
            worth.DEFAULT_LOW_THRESHOLD) == (0.5, 5.0, 0.7, 0.3)
    mw = MemoryWorth()
    assert (mw.prior, mw.min_evidence, mw.high_threshold, mw.low_threshold) == (0.5, 5.0, 0.7, 0.3)


# --- bad input -------------------------------------------------------------------------------

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


@pytest.mark.parametrize("retrieved, success, weights, message", BAD_EPISODES)
def test_contextual_rejects_the_same_episodes(retrieved, success, weights, message):
    cmw = ContextualMemoryWorth().update(["a"], True, context="x")
    before = state(cmw)
    with pytest.raises(ValueError):
        cmw.update(retrieved, success, weights, context="x")
    assert_same_state(before, state(cmw))


def test_every_problem_of_an_episode_is_listed_at_once():
    with pytest.raises(ValueError) as info:
        MemoryWorth().update(["a", "a"], 1, weights=[-1.0])
    text = str(info.value)
    assert "duplicates" in text and "success must be a bool" in text and "weights" in text


def test_unhashable_context_is_rejected():
    cmw = ContextualMemoryWorth()
    with pytest.raises(ValueError, match="context must be hashable"):
        cmw.update(["a"], True, context=["hard"])
    assert cmw.successes_ == {}


@pytest.mark.parametrize("kwargs, name", [
    ({"prior": 1.5}, "prior"), ({"prior": -0.1}, "prior"), ({"prior": math.nan}, "prior"),
    ({"prior": True}, "prior"), ({"prior": "0.5"}, "prior"),
    ({"min_evidence": -1}, "min_evidence"), ({"min_evidence": math.inf}, "min_evidence"),
    ({"high_threshold": 1.01}, "high_threshold"), ({"low_threshold": -0.01}, "low_threshold"),
    ({"high_threshold": 0.3, "low_threshold": 0.3}, "low_threshold must be < high_threshold"),
    ({"high_threshold": 0.2, "low_threshold": 0.6}, "low_threshold must be < high_threshold"),
])
def test_bad_hyperparameters_name_argument_value_and_range(kwargs, name):
    with pytest.raises(ValueError, match=name) as info:
        MemoryWorth(**kwargs)
    assert repr(next(iter(kwargs.values()))) in str(info.value)
    with pytest.raises(ValueError, match=name):
        WorthArrays(3, **kwargs)


def test_all_bad_hyperparameters_are_listed_at_once():
    with pytest.raises(ValueError) as info:
        MemoryWorth(prior=2.0, min_evidence=-1.0, high_threshold=7)
    text = str(info.value)
    assert "prior must be a real number in [0, 1], got 2.0" in text
    assert "min_evidence must be a finite real number >= 0, got -1.0" in text
    assert "high_threshold must be a real number in [0, 1], got 7" in text


@pytest.mark.parametrize("discount", [0, 0.0, -0.5, 1.5, math.nan, True])
def test_bad_discount(discount):
    with pytest.raises(ValueError, match="discount must be a real number in \\(0, 1\\]"):
        DiscountedMemoryWorth(discount=discount)


# --- weights ---------------------------------------------------------------------------------

def test_weight_helpers():
    assert uniform_weights(3).tolist() == [1.0, 1.0, 1.0]
    assert score_weights([1.0, 3.0]).tolist() == [0.25, 0.75]
    assert score_weights([1.0, 3.0], normalize=False).tolist() == [1.0, 3.0]
    assert oracle_weights([2, 0], [0.1, 0.5, 0.9]).tolist() == [0.9, 0.1]
    assert oracle_weights([2, 0], [0.1, 0.5, 0.9], normalize=True).tolist() == [0.9, 0.1]
    assert score_weights([1.0, 1.0, 1.0]).sum() == 1.0
    mw = MemoryWorth().update(["x", "y"], True, weights=score_weights([2.0, 6.0]))
    assert mw.counters("x") == (0.25, 0.0) and mw.counters("y") == (0.75, 0.0)


@pytest.mark.parametrize("call", [
    lambda: score_weights([1.0, -0.2]), lambda: score_weights([0.0, 0.0]), lambda: score_weights([]),
    lambda: score_weights([1.0, math.nan]), lambda: oracle_weights([3], [0.1, 0.2]),
    lambda: oracle_weights([0.5], [0.1, 0.2]), lambda: uniform_weights(0), lambda: uniform_weights(True),
])
def test_weight_helpers_reject_bad_input(call):
    with pytest.raises(ValueError):
        call()


# --- contextual and discounted variants ------------------------------------------------------

def test_contextual_counters_are_separate_and_pool_to_the_plain_estimator():
    stream = [(["a", "b"], True, "easy"), (["a"], False, "hard"), (["b", "c"], False, "hard"),
              (["a", "c"], True, "easy"), (["c"], True, "hard")]
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


def direct_discounted(stream, discount):
    """The definition, literally: every counter decays each episode, then the retrieved add."""
    pos, neg = {}, {}
    for retrieved, success, weights in stream:
        for store in (pos, neg):
            for m in store:
                store[m] *= discount
        for m, w in zip(retrieved, weights):
            pos.setdefault(m, 0.0)
            neg.setdefault(m, 0.0)
            (pos if success else neg)[m] += w
    return pos, neg


def random_stream(seed, n_episodes, n_memories=12, k=3):
    rng = np.random.default_rng(seed)
    return [(rng.choice(n_memories, size=k, replace=False).tolist(), bool(rng.random() < 0.6),
             rng.uniform(0.0, 2.0, k).tolist()) for _ in range(n_episodes)]


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99, 1.0])
def test_discounted_equals_direct_definition(discount):
    # 0.5 ** 2000 is far below the rescaling point (1e-120): the lazy rescale runs several times
    stream = random_stream(seed=11, n_episodes=2000)
    dmw = DiscountedMemoryWorth(discount=discount)
    for retrieved, success, weights in stream:
        dmw.update(retrieved, success, weights)
    pos, neg = direct_discounted(stream, discount)
    assert list(dmw.successes_) == list(pos)
    for m in pos:
        got_pos, got_neg = dmw.counters(m)
        assert math.isclose(got_pos, pos[m], rel_tol=1e-12, abs_tol=1e-300)
        assert math.isclose(got_neg, neg[m], rel_tol=1e-12, abs_tol=1e-300)
        assert math.isclose(dmw.worth(m), memory_worth(pos[m], neg[m]), rel_tol=1e-12)
        assert dmw.successes_[m] == got_pos


def test_discounted_with_discount_one_is_the_plain_estimator_exactly():
    stream = random_stream(seed=3, n_episodes=300)
    dmw, plain = DiscountedMemoryWorth(discount=1.0), MemoryWorth()
    for retrieved, success, weights in stream:
        dmw.update(retrieved, success, weights)
        plain.update(retrieved, success, weights)
    assert dmw.successes_ == plain.successes_ and dmw.failures_ == plain.failures_


def test_discounted_evidence_fades_but_rate_stays():
    dmw = DiscountedMemoryWorth(discount=0.5)
    dmw.update(["old"], True, weights=[8.0]).update(["old"], False, weights=[8.0])  # h+ 4, h- 8
    assert dmw.counters("old") == (4.0, 8.0) and dmw.classify("old") == MIXED
    for _ in range(2):
        dmw.update(["other"], True)
    assert dmw.counters("old") == (1.0, 2.0)
    assert dmw.worth("old") == 1 / 3
    assert dmw.classify("old") == UNCERTAIN  # evidence 3 < 5


# --- vectorized form -------------------------------------------------------------------------

def test_update_batch_golden():
    pos, neg = np.zeros(4), np.zeros(4)
    update_batch(pos, neg, [[0, 1], [1, 2], [3, 0]], [True, False, True], [[1.0, 0.5], [2.0, 1.0], [0.25, 0.0]])
    assert pos.tolist() == [1.0, 0.5, 0.0, 0.25]
    assert neg.tolist() == [0.0, 2.0, 1.0, 0.0]
    arrays = WorthArrays(4).update_batch([[0, 1], [1, 2]], [True, False])
    assert arrays.worth().tolist() == [1.0, 0.5, 0.0, 0.5]
    assert arrays.evidence().tolist() == [1.0, 2.0, 1.0, 0.0]
    assert arrays.classify().tolist() == [UNCERTAIN] * 4
    assert arrays.n_episodes_ == 2


@st.composite
def episode_streams(draw):
    n_memories = draw(st.integers(1, 8))
    k = draw(st.integers(1, n_memories))
    n_episodes = draw(st.integers(1, 25))
    rows = [draw(st.permutations(range(n_memories)))[:k] for _ in range(n_episodes)]
    outcomes = draw(st.lists(st.booleans(), min_size=n_episodes, max_size=n_episodes))
    weight = st.floats(0.0, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    weights = draw(st.one_of(st.none(), st.lists(st.lists(weight, min_size=k, max_size=k),
                                                 min_size=n_episodes, max_size=n_episodes)))
    return n_memories, rows, outcomes, weights


@settings(max_examples=200, deadline=None)
@given(episode_streams(), st.integers(1, 4))
def test_vectorized_equals_scalar_bit_for_bit(stream, n_blocks):
    """Arbitrary float weights: same float64 additions in the same order, so identical bits."""
    n_memories, rows, outcomes, weights = stream
    scalar = MemoryWorth()
    for t, (retrieved, success) in enumerate(zip(rows, outcomes)):
        scalar.update(retrieved, success, None if weights is None else weights[t])
    arrays = WorthArrays(n_memories)
    bounds = np.linspace(0, len(rows), n_blocks + 1).astype(int)  # fed in several blocks
    for start, stop in zip(bounds[:-1], bounds[1:]):
        if stop > start:
            arrays.update_batch(np.array(rows[start:stop]), np.array(outcomes[start:stop]),
                                None if weights is None else np.array(weights[start:stop]))
    for m in range(n_memories):
        pos, neg = scalar.counters(m)
        assert pos.hex() == float(arrays.successes_[m]).hex()
        assert neg.hex() == float(arrays.failures_[m]).hex()
        assert scalar.worth(m) == arrays.worth()[m]
        assert scalar.classify(m) == arrays.classify()[m]


def test_vectorized_contextual_layout_matches_contextual_estimator():
    """Counters of type c for memory m at c * n + m: what the worlds use for Experiment 2."""
    rng = np.random.default_rng(5)
    n, k, episodes = 6, 2, 200
    rows = np.array([rng.choice(n, k, replace=False) for _ in range(episodes)])
    types = rng.integers(0, 2, episodes)
    outcomes = rng.random(episodes) < 0.4
    cmw = ContextualMemoryWorth()
    for row, c, y in zip(rows, types, outcomes):
        cmw.update(row, y, context=int(c))
    pos, neg = np.zeros(2 * n), np.zeros(2 * n)
    update_batch(pos, neg, rows + (types * n)[:, None], outcomes)
    for c in (0, 1):
        for m in range(n):
            assert cmw.counters(m, c) == (pos[c * n + m], neg[c * n + m])


@pytest.mark.parametrize("idx, outcomes, weights, message", [
    ([[0, 4]], [True], None, r"retrieved_idx must be in \[0, 4\)"),
    ([[0, -1]], [True], None, r"retrieved_idx must be in"),
    ([[1, 1]], [True], None, "must not repeat an id within an episode, episodes \\[0\\]"),
    ([0, 1], [True], None, "2-d int array"),
    ([[0.0, 1.0]], [True], None, "2-d int array"),
    ([[0, 1]], [1], None, "outcomes must be a 1-d bool array"),
    ([[0, 1]], [True, False], None, "one entry per episode"),
    ([[0, 1]], [True], [[1.0]], "weights must have the shape"),
    ([[0, 1]], [True], [[1.0, -2.0]], "finite and >= 0"),
    ([[0, 1]], [True], [[1.0, np.nan]], "finite and >= 0"),
])
def test_update_batch_rejects_bad_input_without_touching_counters(idx, outcomes, weights, message):
    arrays = WorthArrays(4).update_batch([[0, 1]], [True])
    before = state(arrays)
    with pytest.raises(ValueError, match=message):
        arrays.update_batch(idx, outcomes, weights)
    assert_same_state(before, state(arrays))


def test_update_batch_rejects_bad_counter_arrays():
    with pytest.raises(ValueError, match="successes must be a 1-d float64"):
        update_batch(np.zeros(3, dtype=np.float32), np.zeros(3), [[0]], [True])
    with pytest.raises(ValueError, match="same shape"):
        update_batch(np.zeros(3), np.zeros(4), [[0]], [True])
    with pytest.raises(ValueError, match="n_memories must be an int >= 1"):
        WorthArrays(0)


def test_docstring_examples():
    failures, tried = doctest.testmod(worth)
    assert tried >= 8 and failures == 0


# --- counters are finite and >= 0; the two counter arrays are distinct -------------------------

@pytest.mark.parametrize("successes, failures, name", [
    (-1, 2, "successes"), (1, -0.5, "failures"), (float("nan"), 1, "successes"), (1, float("inf"), "failures"),
    (np.array([1.0, -1.0]), np.array([1.0, 1.0]), "successes"), (1.0, np.array([0.0, np.nan]), "failures"),
    ("a", 1, "successes"), (1, None, "failures"), (10**400, 1, "successes"), (True, 1, "successes"),
])
def test_formulas_refuse_negative_or_non_finite_counters(successes, failures, name):
    for formula in (memory_worth, evidence_volume):
        with pytest.raises(ValueError, match=name):
            formula(successes, failures)


@pytest.mark.parametrize("overlap", ["same", "views"])
def test_update_batch_refuses_aliased_counters_before_writing(overlap):
    buffer = np.arange(6, dtype=np.float64)
    successes, failures = (buffer, buffer) if overlap == "same" else (buffer[:4], buffer[2:])
    before = buffer.copy()
    with pytest.raises(ValueError, match="successes and failures"):
        update_batch(successes, failures, [[0, 1], [1, 3]], [True, False])
    assert np.array_equal(buffer, before)
