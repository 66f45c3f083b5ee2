"""The vectorized form: golden values, bit-for-bit agreement with the scalar estimator, bad input."""

import copy
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.worth import (
    UNCERTAIN,
    ContextualMemoryWorth,
    MemoryWorth,
    UnitCounters,
    WorthArrays,
    add_episodes,
    memory_worth,
    update_batch,
)
from forgetting.worth.batch import PAIRWISE_MAX_K, UNIT_COUNT_LIMIT, _has_repeat_in_a_row, counts_are_exact


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


def test_update_batch_golden():
    pos, neg = np.zeros(4), np.zeros(4)
    update_batch(
        pos, neg, [[0, 1], [1, 2], [3, 0]], [True, False, True], [[1.0, 0.5], [2.0, 1.0], [0.25, 0.0]]
    )
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
    weights = draw(
        st.one_of(
            st.none(),
            st.lists(st.lists(weight, min_size=k, max_size=k), min_size=n_episodes, max_size=n_episodes),
        )
    )
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
            arrays.update_batch(
                np.array(rows[start:stop]),
                np.array(outcomes[start:stop]),
                None if weights is None else np.array(weights[start:stop]),
            )
    for m in range(n_memories):
        pos, neg = scalar.counters(m)
        assert pos.hex() == float(arrays.successes_[m]).hex()
        assert neg.hex() == float(arrays.failures_[m]).hex()
        assert scalar.worth(m) == arrays.worth()[m]
        assert scalar.classify(m) == arrays.classify()[m]


@settings(max_examples=200, deadline=None)
@given(episode_streams(), st.lists(st.booleans(), min_size=1, max_size=5))
def test_unit_and_weighted_blocks_mixed_equal_scalar_bit_for_bit(stream, weighted_blocks):
    """Unit blocks are added as counts only while that is exact; after a weighted block they are not."""
    n_memories, rows, outcomes, weights = stream
    full = weights or [[0.5 + 0.1 * j for j in range(len(rows[0]))] for _ in rows]
    bounds = np.linspace(0, len(rows), len(weighted_blocks) + 1).astype(int)
    scalar, arrays = MemoryWorth(), WorthArrays(n_memories)
    pos, neg = np.zeros(n_memories), np.zeros(n_memories)
    for weighted, start, stop in zip(weighted_blocks, bounds[:-1], bounds[1:]):
        block = None if not weighted else np.array(full[start:stop])
        for t in range(start, stop):
            scalar.update(rows[t], outcomes[t], None if block is None else full[t])
        if stop > start:
            arrays.update_batch(np.array(rows[start:stop]), np.array(outcomes[start:stop]), block)
            update_batch(pos, neg, np.array(rows[start:stop]), np.array(outcomes[start:stop]), block)
    for m in range(n_memories):
        expected = [c.hex() for c in scalar.counters(m)]
        assert [float(arrays.successes_[m]).hex(), float(arrays.failures_[m]).hex()] == expected
        assert [float(pos[m]).hex(), float(neg[m]).hex()] == expected


start_values = st.sampled_from([0.0, -0.0, 3.0, 0.1, 2.0**53 - 1, 1e300, 7.25])


@settings(max_examples=200, deadline=None)
@given(episode_streams(), st.lists(start_values, min_size=16, max_size=16))
def test_unit_kernel_from_any_counters_equals_one_addition_at_a_time(stream, starts):
    n_memories, rows, outcomes, _ = stream
    pos, neg = np.array(starts[:n_memories]), np.array(starts[8 : 8 + n_memories])
    expected_pos, expected_neg = pos.tolist(), neg.tolist()
    for row, success in zip(rows, outcomes):
        for m in row:
            if success:
                expected_pos[m] += 1.0
            else:
                expected_neg[m] += 1.0
    add_episodes(pos, neg, np.array(rows), np.array(outcomes))
    assert [x.hex() for x in pos.tolist()] == [x.hex() for x in expected_pos]
    assert [x.hex() for x in neg.tolist()] == [x.hex() for x in expected_neg]


def test_counts_are_exact_only_for_non_negative_integer_counters_with_room():
    zeros = np.zeros(3)
    assert counts_are_exact(np.array([0.0, 4.0, 9.0]), zeros, 10)
    assert not counts_are_exact(np.array([-0.0, 4.0, 9.0]), zeros, 10)
    assert not counts_are_exact(np.array([0.5, 4.0, 9.0]), zeros, 10)
    assert not counts_are_exact(zeros, np.array([2.0**53 - 5, 0.0, 0.0]), 10)


@pytest.mark.parametrize("k", [2, PAIRWISE_MAX_K, PAIRWISE_MAX_K + 1])
@pytest.mark.parametrize("first_id", [0, 2**40])
def test_repeats_are_found_by_column_pairs_and_by_sorting(k, first_id):
    rows = np.arange(3 * k, dtype=np.int64).reshape(3, k) + first_id  # ids beyond int32 too
    assert not _has_repeat_in_a_row(rows)
    rows[2, -1] = rows[2, 0]
    assert _has_repeat_in_a_row(rows)
    if first_id == 0:
        with pytest.raises(ValueError, match=r"must not repeat an id within an episode, episodes \[2\]"):
            update_batch(np.zeros(3 * k), np.zeros(3 * k), rows, np.array([True, False, True]))


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


@pytest.mark.parametrize(
    "idx, outcomes, weights, message",
    [
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
    ],
)
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


@pytest.mark.parametrize("overlap", ["same", "views"])
def test_update_batch_refuses_aliased_counters_before_writing(overlap):
    buffer = np.arange(6, dtype=np.float64)
    successes, failures = (buffer, buffer) if overlap == "same" else (buffer[:4], buffer[2:])
    before = buffer.copy()
    with pytest.raises(ValueError, match="successes and failures"):
        update_batch(successes, failures, [[0, 1], [1, 3]], [True, False])
    assert np.array_equal(buffer, before)


# --- read-only, non-finite and overflowing counters: refused before the first write ----------------


@pytest.mark.parametrize("weights", [None, [[2.0], [1.0]]], ids=["unit", "weighted"])
@pytest.mark.parametrize("read_only", ["successes", "failures"])
def test_update_batch_refuses_a_read_only_counter_before_writing(read_only, weights):
    arrays = {"successes": np.array([1.0, 0.0, 2.0]), "failures": np.array([0.0, 3.0, 0.0])}
    arrays[read_only].flags.writeable = False
    before = {name: array.copy() for name, array in arrays.items()}
    with pytest.raises(ValueError, match=f"{read_only} must be a writable array"):
        update_batch(arrays["successes"], arrays["failures"], [[0], [1]], [True, False], weights)
    for name, array in arrays.items():
        assert np.array_equal(array, before[name])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_update_batch_refuses_counters_that_are_not_finite_counts(bad):
    pos, neg = np.array([0.0, bad]), np.zeros(2)
    before = pos.copy(), neg.copy()
    with pytest.raises(ValueError, match="successes must hold finite counts >= 0"):
        update_batch(pos, neg, [[0]], [True])
    assert np.array_equal(pos, before[0], equal_nan=True) and np.array_equal(neg, before[1])


def test_weights_whose_sums_overflow_are_refused_before_any_change():
    arrays = WorthArrays(2)
    with pytest.raises(ValueError, match=r"weights must keep every h\+ \+ h- finite.*memories \[0\]"):
        arrays.update_batch([[0], [0]], [True, True], [[1e308], [1e308]])
    assert arrays.successes_.tolist() == [0.0, 0.0] and arrays.n_episodes_ == 0
    # h+ and h- each finite, their sum not: refused too (worth and evidence would be unreadable)
    pos, neg = np.array([1e308]), np.array([0.0])
    with pytest.raises(ValueError, match=r"h\+ \+ h- finite"):
        update_batch(pos, neg, [[0]], [False], [[1e308]])
    assert pos.tolist() == [1e308] and neg.tolist() == [0.0]
    # the largest blocks that stay finite are still added, bit for bit like the scalar estimator
    arrays.update_batch([[0], [1]], [True, False], [[1e308], [1.7e308]])
    scalar = MemoryWorth().update([0], True, [1e308]).update([1], False, [1.7e308])
    assert arrays.successes_.tolist() == [scalar.counters(0)[0], 0.0]
    assert arrays.worth().tolist() == [1.0, 0.0] and np.isfinite(arrays.evidence()).all()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(st.floats(0.0, 1.7976931348623157e308), st.floats(0.0, 10.0)), min_size=1, max_size=6),
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_a_weighted_block_is_added_exactly_when_every_sum_stays_finite(weights, outcomes):
    """Near the top of float64 the check is exact: refused iff adding one at a time overflows h+ + h-."""
    hits = outcomes[: len(weights)]
    pos_ref = neg_ref = 0.0
    for weight, hit in zip(weights, hits):  # the scalar estimator's additions, in order
        pos_ref, neg_ref = (pos_ref + weight, neg_ref) if hit else (pos_ref, neg_ref + weight)
    pos, neg = np.zeros(1), np.zeros(1)
    if math.isfinite(pos_ref + neg_ref):
        update_batch(pos, neg, [[0]] * len(weights), hits, [[w] for w in weights])
        assert (pos[0], neg[0]) == (pos_ref, neg_ref)
    else:
        with pytest.raises(ValueError, match=r"h\+ \+ h- finite"):
            update_batch(pos, neg, [[0]] * len(weights), hits, [[w] for w in weights])
        assert pos.tolist() == [0.0] and neg.tolist() == [0.0]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 12),
    st.integers(0, 2**32 - 1),
    st.integers(1, 6),
    st.floats(0.0, 1.0),
)
def test_unit_counters_are_add_episodes_and_memory_worth_bit_for_bit(n_memories, seed, blocks, prior):
    """A per-episode loop on UnitCounters reads the same worth, bit for bit, as add_episodes and
    memory_worth on plain arrays (memories never retrieved read the prior)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, n_memories + 1))
    counters = UnitCounters(n_memories, prior)
    pos, neg = np.zeros(n_memories), np.zeros(n_memories)
    for _ in range(blocks):
        episodes = int(rng.integers(0, 5))
        retrieved = np.argsort(rng.random((episodes, n_memories)), axis=1)[:, :k]
        outcomes = rng.random(episodes) < 0.5
        add_episodes(pos, neg, retrieved, outcomes)
        counters.add(retrieved, outcomes)
        assert counters.worth().tobytes() == memory_worth(pos, neg, prior=prior).tobytes()
    assert counters.successes.tobytes() == pos.tobytes()
    assert counters.failures.tobytes() == neg.tobytes()


def test_unit_counters_refuse_a_block_past_exact_counts_and_change_nothing():
    counters = UnitCounters(3)
    counters.add(np.array([[0, 1]]), np.array([True]))
    counters._added = UNIT_COUNT_LIMIT - 2  # as if 2**53 - 2 additions had been made
    with pytest.raises(ValueError, match="additions, beyond which counts are not exact; nothing was added"):
        counters.add(np.array([[0, 2]]), np.array([False]))
    assert counters.successes.tolist() == [1.0, 1.0, 0.0]
    assert counters.failures.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("size", [-1, 2.5, "3", True])
def test_unit_counters_refuse_a_size_that_is_not_a_count(size):
    with pytest.raises(ValueError, match="size"):
        UnitCounters(size)


@pytest.mark.parametrize("prior", [-0.1, 1.5, math.nan, "0.5"])
def test_unit_counters_refuse_a_prior_outside_zero_one(prior):
    with pytest.raises(ValueError, match="prior"):
        UnitCounters(3, prior)
