"""Discounted Memory Worth: the online, closed and recursive forms agree with the direct definition."""

import math

import numpy as np
import pytest

from forgetting.worth import (
    MIXED,
    UNCERTAIN,
    DiscountedMemoryWorth,
    MemoryWorth,
    discounted_counter_paths,
    discounted_counters,
    memory_worth,
)


@pytest.mark.parametrize("discount", [0, 0.0, -0.5, 1.5, math.nan, True])
def test_bad_discount(discount):
    with pytest.raises(ValueError, match="discount must be a real number in \\(0, 1\\]"):
        DiscountedMemoryWorth(discount=discount)


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
    return [
        (
            rng.choice(n_memories, size=k, replace=False).tolist(),
            bool(rng.random() < 0.6),
            rng.uniform(0.0, 2.0, k).tolist(),
        )
        for _ in range(n_episodes)
    ]


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


@pytest.mark.parametrize("discount", [0.5, 0.9, 1.0])
def test_closed_form_recursive_filter_and_online_estimator_agree(discount):
    rng = np.random.default_rng(5)
    n, k, episodes = 9, 3, 400
    retrieved = np.array([rng.choice(n, k, replace=False) for _ in range(episodes)])
    outcomes = rng.random(episodes) < 0.6
    pos, neg = discounted_counters(retrieved, outcomes, discount, n)
    hits, misses = np.zeros((episodes, n)), np.zeros((episodes, n))
    for t, (row, won) in enumerate(zip(retrieved, outcomes)):
        (hits if won else misses)[t, row] = 1.0
    assert np.allclose(discounted_counter_paths(hits, discount)[-1], pos, rtol=1e-12, atol=0)
    assert np.allclose(discounted_counter_paths(misses, discount)[-1], neg, rtol=1e-12, atol=0)
    online = DiscountedMemoryWorth(discount=discount)
    for row, won in zip(retrieved, outcomes):
        online.update(row.tolist(), bool(won))
    assert np.allclose(
        [online.counters(i) for i in range(n)], np.column_stack([pos, neg]), rtol=1e-12, atol=0
    )


def test_counter_paths_refuse_a_bad_discount():
    with pytest.raises(ValueError, match=r"discount must be a real number in \(0, 1\]"):
        discounted_counter_paths(np.zeros((2, 2)), 0.0)


@pytest.mark.parametrize(
    "retrieved, outcomes, discount, n_memories, message",
    [
        ([[7]], [True], 0.99, 3, r"retrieved_idx must be in \[0, 3\), got values in \[7, 7\]"),
        ([[-1]], [True], 0.99, 3, r"retrieved_idx must be in \[0, 3\)"),
        ([[0, 0]], [True], 0.99, 3, "must not repeat an id"),
        ([[0]], [True, False], 0.99, 3, "outcomes must have one entry per episode"),
        ([[0]], [1], 0.99, 3, "outcomes must be a 1-d bool array"),
        ([0, 1], [True], 0.99, 3, "retrieved_idx must be a 2-d int array"),
        ([[0.5]], [True], 0.99, 3, "retrieved_idx must be a 2-d int array"),
        ([[0]], [True], 0.99, 0, "n_memories must be an int >= 1"),
        ([[0]], [True], 0.99, 2.0, "n_memories must be an int >= 1"),
        ([[0]], [True], 0.99, True, "n_memories must be an int >= 1"),
        ([[0]], [True], 0.0, 3, r"discount must be a real number in \(0, 1\]"),
    ],
)
def test_discounted_counters_refuse_ids_lengths_and_settings_that_disagree(
    retrieved, outcomes, discount, n_memories, message
):
    with pytest.raises(ValueError, match=message):
        discounted_counters(retrieved, outcomes, discount, n_memories)


def test_discounted_counters_always_return_n_memories_values_and_list_every_problem():
    pos, neg = discounted_counters(np.array([[2]]), np.array([True]), 0.99, 3)
    assert pos.tolist() == [0.0, 0.0, 1.0] and neg.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError) as error:
        discounted_counters([[9]], [1], 2.0, 3)
    for name in ("retrieved_idx", "outcomes", "discount"):
        assert f"{name} must" in str(error.value)


def test_the_counter_bound_holds_below_equality_and_rounding_reaches_it_at_equality():
    """GovernedMemory's docstring: below ``discount = 1 - 1 / min_evidence`` a memory never has
    the evidence to be low-value; at equality (0.8 and 5) rounding reaches it after 158 straight
    failures of one memory."""

    def first_low_value(discount, n):
        worth = DiscountedMemoryWorth(discount=discount, min_evidence=5.0)
        for i in range(1, n + 1):
            if worth.update(["m"], False).classify("m") == "low-value":
                return i
        return None

    assert first_low_value(0.79, 2000) is None
    assert first_low_value(0.8, 2000) == 158
