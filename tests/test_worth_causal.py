"""Randomized omission and regression credit: a direct reading of each formula, their
unbiasedness in an additive world, identifiability, and bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from forgetting.worth.causal import design_counts, omission_effects, regression_credit


def exact_rank(matrix: np.ndarray) -> int:
    """The rank of a matrix of integers (stored as floats), by Gaussian elimination in fractions."""
    rows = [[Fraction(int(v)) for v in row] for row in matrix]
    rank, width = 0, len(rows[0]) if rows else 0
    for column in range(width):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][column] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(rank + 1, len(rows)):
            factor = rows[r][column] / rows[rank][column]
            if factor:
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[rank], strict=True)]
        rank += 1
    return rank


def episodes(seed: int, n: int, k: int, count: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((count, n)), axis=1)[:, :k].astype(np.intp)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(3, 8), st.integers(1, 3), st.integers(1, 60))
def test_omission_effects_is_the_difference_of_the_two_arms_rates(seed, n, k, count):
    rng = np.random.default_rng(seed)
    retrieved = episodes(seed, n, k, count)
    slots = np.where(rng.random(count) < 0.5, rng.integers(0, k, count), -1).astype(np.intp)
    outcomes = rng.random(count) < 0.5
    got = omission_effects(retrieved, slots, outcomes, n)
    for m in range(n):
        kept = [outcomes[t] for t in range(count) if slots[t] < 0 and m in retrieved[t]]
        gone = [outcomes[t] for t in range(count) if slots[t] >= 0 and retrieved[t, slots[t]] == m]
        assert (got.kept[m], got.withheld[m]) == (len(kept), len(gone))
        assert (got.kept_successes[m], got.withheld_successes[m]) == (sum(kept), sum(gone))
        if kept and gone:
            p1, p0 = sum(kept) / len(kept), sum(gone) / len(gone)
            assert got.effect[m] == pytest.approx(p1 - p0, abs=1e-12)
            assert got.se[m] == pytest.approx(
                math.sqrt(p1 * (1 - p1) / len(kept) + p0 * (1 - p0) / len(gone))
            )
        else:
            assert math.isnan(got.effect[m]) and math.isnan(got.se[m])


def additive_run(seed: int, epsilon: float, count: int = 60_000, n: int = 8, k: int = 3):
    """Success probability = sum of the present utilities / k: memory m's effect is u_m / k."""
    rng = np.random.default_rng(seed)
    utilities = np.linspace(0.0, 1.0, n)
    retrieved = episodes(seed + 1, n, k, count)
    slots = np.where(rng.random(count) < epsilon, rng.integers(0, k, count), -1).astype(np.intp)
    present = np.ones((count, k), dtype=bool)
    rows = np.flatnonzero(slots >= 0)
    present[rows, slots[rows]] = False
    outcomes = rng.random(count) < (utilities[retrieved] * present).sum(axis=1) / k
    return utilities / k, retrieved, slots, outcomes


def test_omission_effects_are_unbiased_for_the_effect_of_including_a_memory():
    truth, retrieved, slots, outcomes = additive_run(seed=3, epsilon=0.3)
    got = omission_effects(retrieved, slots, outcomes, truth.size)
    z = (got.effect - truth) / got.se
    assert np.abs(z).max() < 4.0, z  # 8 memories: a 4-sd miss has odds well below 1e-3


def test_regression_credit_recovers_additive_effects_up_to_a_common_shift():
    truth, retrieved, _, outcomes = additive_run(seed=5, epsilon=0.0)
    got = regression_credit(retrieved, outcomes, truth.size)
    assert got.identified.all() and got.rank == got.width  # no intercept, no groups: full rank
    assert np.abs(got.beta - (truth - truth.mean())).max() < 0.02
    assert got.difference(7, 0) == pytest.approx(truth[7] - truth[0], abs=0.03)


def test_a_pair_always_retrieved_together_is_not_identified_and_a_broken_pair_is():
    """Half the episodes retrieve the pair 0, 1 and two of 2..9; the others four of 2..9."""
    rng = np.random.default_rng(0)
    pair = np.column_stack([np.zeros(1000, np.intp), np.ones(1000, np.intp), episodes(2, 8, 2, 1000) + 2])
    retrieved = np.concatenate([pair, episodes(3, 8, 4, 1000) + 2])
    outcomes = rng.random(2000) < 0.5
    together = regression_credit(retrieved, outcomes, 10)
    assert not together.identified[:2].any() and together.identified[2:].all()
    assert math.isnan(together.beta[0]) and math.isnan(together.difference(0, 1))
    assert not math.isnan(together.difference(2, 9))
    broken = retrieved.copy()
    rows = np.arange(0, 1000, 5)
    broken[rows, 1] = [next(m for m in range(2, 10) if m not in broken[t]) for t in rows]
    apart = regression_credit(broken, outcomes, 10)
    assert apart.identified.all() and not math.isnan(apart.difference(0, 1))


def test_task_types_enter_as_group_columns_of_the_exact_integer_design():
    retrieved = np.array([[0, 1], [1, 2], [0, 2]], dtype=np.intp)
    groups = np.array([0, 1, 1], dtype=np.intp)
    gram = design_counts(retrieved, 3, groups, 2)
    x = np.zeros((3, 5), dtype=np.intp)
    for t, (row, g) in enumerate(zip(retrieved, groups)):
        x[t, row] = 1
        x[t, 3 + g] = 1
    assert np.array_equal(gram, x.T @ x)


@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True), max_size=12),
            st.integers(0, 3),
            st.randoms(use_true_random=False),
        )
    )
)
def test_design_counts_are_the_dense_integer_gram_matrix(case):
    """The pair-code count is ``X^T X`` of the dense indicator design, with or without groups."""
    n, sets, n_groups, rng = case
    k = min((len(row) for row in sets), default=1)
    retrieved = np.array([row[:k] for row in sets], dtype=np.intp).reshape(len(sets), k)
    groups = np.array([rng.randrange(n_groups) for _ in sets], dtype=np.intp) if n_groups else None
    x = np.zeros((len(sets), n + n_groups), dtype=np.intp)
    for t, row in enumerate(retrieved):
        x[t, row] = 1
        if groups is not None:
            x[t, n + groups[t]] = 1
    assert np.array_equal(design_counts(retrieved, n, groups, n_groups), x.T @ x)


def test_exact_rank_of_small_matrices():
    assert exact_rank(np.array([[1.0, 2.0], [2.0, 4.0]])) == 1
    assert exact_rank(np.array([[0.0, 0.0], [0.0, 0.0]])) == 0
    assert exact_rank(np.eye(3)) == 3
    assert exact_rank(np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 2.0]])) == 2


@settings(max_examples=80, deadline=None)
@example(seed=52, n=29, k=1, count=52, typed=True)  # lstsq's default cut-off said 28, the rank is 27
@given(st.integers(0, 10**6), st.integers(3, 30), st.integers(1, 5), st.integers(2, 120), st.booleans())
def test_the_solution_is_numpy_lstsqs_minimum_norm_solution_of_the_normal_equations(seed, n, k, count, typed):
    """A direct reading: the rank of the integer matrix ``X^T X`` over the seen columns, by exact
    elimination, and ``numpy.linalg.lstsq``'s minimum-norm solution of ``X^T X b = X^T y`` there,
    to rounding (the library solves it from the singular value decomposition it needs for the null
    space). With task types the design is rank-deficient; with few episodes many columns are
    unseen. The rank is not lstsq's: on the normal equations, whose condition is the square of
    the design's, its default cut-off counted a singular value of 1.1e-16 as one (seed 52, n 29,
    k 1, 52 episodes, with types: exact rank 27, lstsq's 28), so lstsq is held to the exact rank."""
    k = min(k, n - 1)
    retrieved = episodes(seed, n, k, count)
    rng = np.random.default_rng(seed + 1)
    outcomes = rng.random(count) < 0.5
    groups = rng.integers(0, 2, count) if typed else None
    got = regression_credit(retrieved, outcomes, n, groups, 2 if typed else 0)
    columns = retrieved if groups is None else np.column_stack([retrieved, n + groups])
    x = np.zeros((count, got.width))
    x[np.arange(count)[:, None], columns] = 1.0
    gram, xty = x.T @ x, x.T @ outcomes.astype(np.float64)
    seen = np.diag(gram) > 0
    exact = exact_rank(gram[np.ix_(seen, seen)])
    solution, _, rank, _ = np.linalg.lstsq(gram[np.ix_(seen, seen)], xty[seen], rcond=1e-9)
    assert got.rank == exact
    assert rank == exact  # the reference solution is the minimum-norm one of that rank
    np.testing.assert_allclose(got.solution[seen], solution, rtol=0, atol=1e-9)
    assert np.isnan(got.solution[~seen]).all()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: omission_effects(np.zeros((2, 2), np.intp), np.array([0, -1]), np.array([1, 0]), 3),
            "outcomes must be booleans",
        ),
        (
            lambda: omission_effects(np.zeros((2, 2), np.intp), np.array([0, 2]), np.array([True, False]), 3),
            "withheld_slot must be",
        ),
        (
            lambda: omission_effects(np.array([[0, 3]]), np.array([-1]), np.array([True]), 3),
            r"retrieved ids must be in \[0, 2\]",
        ),
        (
            lambda: omission_effects(np.zeros(2, np.intp), np.array([-1]), np.array([True]), 3),
            "retrieved must be a 2-d integer",
        ),
        (lambda: regression_credit(np.zeros((1, 2), np.intp), np.array([True]), 0), "n_memories"),
        (
            lambda: regression_credit(
                np.zeros((1, 2), np.intp), np.array([True]), 3, groups=np.array([2]), n_groups=2
            ),
            "groups must be in",
        ),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
