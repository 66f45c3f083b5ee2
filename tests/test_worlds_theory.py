"""The theory check: MW -> p+ at rate 1/sqrt(n); the discounted estimator's floor."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from forgetting.studies import worlds as W


def test_worth_converges_to_exact_p_plus_at_rate_one_over_sqrt_n():
    result = W.theory_check(n_seeds=10, seed=2)
    assert -0.6 < result.slope < -0.4
    assert result.max_abs_error[:, -1].max() < 0.03  # 10 000 retrievals per memory: sd <= 0.005
    assert np.array_equal(result.p_plus, np.stack([W.p_plus_uniform(u, 4) for u in result.utilities]))
    # the measured error stays within its tolerance of the exact expectation at every checkpoint
    assert W.prediction_check(result.mean_abs_error, result.expected_error).passed
    # and the normal approximation is close to the exact expectation (it ignores that R is random)
    exact = result.expected_error.mean(axis=0)
    assert np.all(np.abs(result.predicted_error / exact - 1) < 0.05)


def _direct_expected_abs_error(p: float, q: float, t: int, prior: float = 0.5) -> float:
    """E|MW_t - p| summed over every retrieval count and every success count."""
    total = 0.0
    for r in range(t + 1):
        weight = math.comb(t, r) * q**r * (1 - q) ** (t - r)
        if r == 0:
            total += weight * abs(prior - p)
        else:
            total += weight * sum(
                math.comb(r, s) * p**s * (1 - p) ** (r - s) * abs(s / r - p) for s in range(r + 1)
            )
    return total


@settings(max_examples=60, deadline=None)
@example(p=0.5, q=0.99609375, t=4)  # R = 1 is 5 sd from the mean and still matters
@example(p=0.0, q=1.0, t=0)  # no episode yet: the prior, whatever q
@example(p=2.2250738585072014e-308, q=1.0, t=4)  # the smallest normal float, where scipy's pmf overflows
@example(p=2.0**-91, q=0.5, t=60)
@example(p=0.3, q=2.2250738585072014e-308, t=4)  # the same overflow in Pr[R = r]
@given(
    p=st.floats(0.0, 1.0),
    q=st.floats(0.01, 1.0),
    t=st.integers(0, 60),
)
def test_expected_abs_error_is_the_direct_sum_over_retrievals_and_successes(p, q, t):
    got = W.expected_abs_error(np.array([p]), q, t)[0]
    assert got == pytest.approx(_direct_expected_abs_error(p, q, t), rel=1e-8, abs=1e-12)


def _plain_expected_abs_error(p: float, q: float, t: int, prior: float = 0.5) -> float:
    """The expectation one memory at a time: scipy's pmf for this p alone, summed as a 1-d array."""
    from scipy.stats import binom

    def pmf(k, n, p):
        return np.where(np.asarray(k) == 1, np.asarray(n) * p, 0.0) if p < 2.0**-90 else binom.pmf(k, n, p)

    r = np.arange(1, t + 1)
    r_pmf = pmf(r, t, q)
    r, r_pmf = r[r_pmf > W.theory.NEGLIGIBLE], r_pmf[r_pmf > W.theory.NEGLIGIBLE]
    spread = 0.0
    if p not in (0.0, 1.0) and r.size:
        j = np.floor(r * p)
        spread = float(np.sum(r_pmf * (2 * (j + 1) * (1 - p) * pmf(j + 1, r, p)) / r))
    log_q0 = 0.0 if t == 0 else -math.inf if q == 1 else t * math.log1p(-q)
    return float(f"{math.exp(log_q0) * abs(prior - p) + spread:.10g}")


@pytest.mark.parametrize("table", [None, 1, 3000])  # the default table, one memory per row, a few
def test_expected_abs_error_of_many_memories_is_each_memory_alone_bit_for_bit(monkeypatch, table):
    if table is not None:
        monkeypatch.setattr(W.theory, "TABLE_ELEMENTS", table)
    rng = np.random.default_rng(4)
    p_plus = np.concatenate([rng.uniform(0, 1, 37), [0.0, 1.0, 2.0**-95, 2.2250738585072014e-308, 0.5]])
    rng.shuffle(p_plus)
    for q, t in ((0.2, 5000), (0.2, 100), (0.5, 1), (1.0, 30), (2.0**-100, 12), (0.3, 0)):
        got = W.expected_abs_error(p_plus.reshape(6, 7), q, t)
        assert got.shape == (6, 7)
        plain = [_plain_expected_abs_error(float(p), q, t) for p in p_plus]
        assert got.ravel().tolist() == plain, (q, t)


def test_expected_abs_error_refuses_bad_input():
    with pytest.raises(ValueError, match="episodes"):
        W.expected_abs_error(np.array([0.5]), 0.5, -1)
    with pytest.raises(ValueError, match=r"retrieval_rate=0.0; allowed: 0 < retrieval_rate <= 1"):
        W.expected_abs_error(np.array([0.5]), 0.0, 10)
    with pytest.raises(ValueError, match=r"p_plus=.*allowed: values in \[0, 1\]"):
        W.expected_abs_error(np.array([1.5]), 0.5, 10)


def test_theory_check_expects_each_seed_from_its_own_memories():
    world = W.TheoryWorld(n_memories=7, retrieved_per_episode=3, checkpoints=(10, 400))
    result = W.theory_check(world, n_seeds=4, seed=6)
    for row, expected in zip(result.p_plus, result.expected_error):
        plain = [W.expected_abs_error(row, 3 / 7, c).mean() for c in world.checkpoints]
        assert expected.tolist() == plain


def test_the_prediction_check_catches_a_small_systematic_bias():
    world = W.TheoryWorld(checkpoints=(20_000,))
    result = W.theory_check(world, n_seeds=30, seed=5)
    p_plus = result.p_plus
    assert np.array_equal(result.mean_error[:, 0], (result.worth - p_plus).mean(axis=1))

    def check(bias):
        signed = (result.worth + bias - p_plus).mean(axis=1, keepdims=True)
        return W.prediction_check(signed, result.expected_mean_error)

    unbiased = check(0.0)
    assert unbiased.passed
    # the smallest bias the check is sure to see: tolerance * se, a few thousandths here
    detectable = unbiased.tolerance * unbiased.se[0]
    assert detectable < 0.003
    for bias in (2 * detectable, -2 * detectable, 0.004):
        assert not check(bias).passed, bias
    # the mean absolute error alone is a blunt instrument: it moves with the square of a small bias
    absolute = np.abs(result.worth + 0.004 - p_plus).mean(axis=1, keepdims=True)
    assert W.prediction_check(absolute, result.expected_error).passed


def test_prediction_check_statistics_and_bad_input():
    measured = np.array([[1.0, 2.0], [3.0, 2.0], [2.0, 2.0]])
    check = W.prediction_check(measured, np.full((3, 2), 1.0))
    assert check.gap.tolist() == [1.0, 1.0]
    assert check.se[0] == pytest.approx(1 / math.sqrt(3)) and check.se[1] == 0.0
    assert check.z[0] == pytest.approx(math.sqrt(3)) and check.z[1] == 0.0  # no spread: no evidence
    with pytest.raises(ValueError, match="at least 2 seeds"):
        W.prediction_check(measured[:1], measured[:1])
    with pytest.raises(ValueError, match=r"alpha=1.5; allowed: 0 < alpha < 1"):
        W.prediction_check(measured, measured, alpha=1.5)


def test_discounted_theory_check_shares_the_plain_run_and_matches_the_scalar_estimator():
    from forgetting.worth import DiscountedMemoryWorth

    world = W.TheoryWorld(n_memories=6, retrieved_per_episode=2, checkpoints=(5, 40, 300))
    result = W.discounted_theory_check(world, discount=0.9, n_seeds=2, seed=3)
    # the plain errors are theory_check's, bit for bit (same seeds, same draws)
    assert np.array_equal(result.mean_abs_error, W.theory_check(world, n_seeds=2, seed=3).mean_abs_error)
    # discount 1 is the plain estimator
    plain = W.discounted_theory_check(world, discount=1.0, n_seeds=2, seed=3)
    assert np.array_equal(plain.discounted_error, plain.mean_abs_error)
    assert plain.predicted_floor == 0.0 and plain.effective_outcomes == math.inf
    # the discounted errors are those of DiscountedMemoryWorth fed the same episodes
    child = W.seed_streams(3, 2)[0]
    utilities = np.random.default_rng(child).uniform(0.0, 1.0, 6)
    p_plus = W.p_plus_uniform(utilities, 2)
    keys, coins = W.substream(child, W.RETRIEVAL_STREAM), W.substream(child, W.OUTCOME_STREAM)
    scalar, done, errors = DiscountedMemoryWorth(discount=0.9), 0, []
    for checkpoint in world.checkpoints:
        rows = W.uniform_retrieval(keys, checkpoint - done, 6, 2)
        outcomes = coins.random(checkpoint - done) < W.success_probability(utilities, rows)
        for row, y in zip(rows, outcomes):
            scalar.update(row, y)
        done = checkpoint
        errors.append(np.abs(np.array([scalar.worth(m) for m in range(6)]) - p_plus).mean())
    assert result.discounted_error[0] == pytest.approx(errors, rel=1e-10)


def test_the_errors_at_a_checkpoint_do_not_depend_on_the_other_checkpoints(monkeypatch):
    world = W.TheoryWorld(n_memories=8, retrieved_per_episode=2, checkpoints=(10, 100, 1000, 3000))
    every = W.theory_check(world, n_seeds=3, seed=5)
    every_discounted = W.discounted_theory_check(world, discount=0.95, n_seeds=3, seed=5)
    monkeypatch.setattr(W.model, "BLOCK_EPISODES", 64)  # other blocks too
    for checkpoints, columns in (
        ((1000,), [2]),
        ((100, 3000), [1, 3]),
        ((3, 10, 999, 1000), [None, 0, None, 2]),
    ):
        few = W.theory_check(dataclasses.replace(world, checkpoints=checkpoints), n_seeds=3, seed=5)
        discounted = W.discounted_theory_check(
            dataclasses.replace(world, checkpoints=checkpoints), discount=0.95, n_seeds=3, seed=5
        )
        for j, column in enumerate(columns):
            if column is not None:  # a common point: bit for bit
                for name in ("mean_abs_error", "max_abs_error", "mean_error"):
                    assert np.array_equal(getattr(few, name)[:, j], getattr(every, name)[:, column]), name
                assert np.array_equal(
                    discounted.mean_abs_error[:, j], every_discounted.mean_abs_error[:, column]
                )
                assert np.array_equal(
                    discounted.discounted_error[:, j], every_discounted.discounted_error[:, column]
                )


def test_discounted_error_stalls_at_its_predicted_floor():
    result = W.discounted_theory_check(discount=0.99, n_seeds=10, seed=1)
    late = result.discounted_error.mean(axis=0)[-3:]
    assert np.all(np.abs(late / result.predicted_floor - 1) < 0.3)
    assert result.mean_abs_error.mean(axis=0)[-1] < late.min() / 5  # the plain one keeps shrinking
    assert result.effective_outcomes == pytest.approx(0.2 * 199)
    with pytest.raises(ValueError, match="discount"):
        W.discounted_theory_check(discount=0.0)


def test_class_plane_gives_each_point_the_index_of_its_class():
    from forgetting import worth
    from forgetting.studies.worlds.theory import class_plane

    grid_v, grid_r, codes = class_plane((1.0, 100.0, 5), (0.0, 1.0, 11))
    assert grid_v.shape == grid_r.shape == codes.shape == (11, 5)
    for v, r, c in zip(grid_v.ravel(), grid_r.ravel(), codes.ravel()):
        assert worth.WORTH_CLASSES[c] == worth.worth_class(r, v)
    assert set(codes.ravel()) == set(range(len(worth.WORTH_CLASSES)))  # every class is on the plane


def test_convergence_summary_is_the_plain_and_discounted_checks_read_off():
    from forgetting.studies.worlds.theory import convergence_summary

    world = W.TheoryWorld(n_memories=6, retrieved_per_episode=2, checkpoints=(50, 200, 800))
    summary = convergence_summary(world, discount=0.9, n_seeds=4, seed=3)
    plain = W.theory_check(world, n_seeds=4, seed=3)
    assert np.array_equal(summary.plain.mean_abs_error, plain.mean_abs_error)
    v = summary.values
    assert (v["n_memories"], v["k"], v["n_seeds"], v["n_checkpoints"]) == (6, 2, 4, 3)
    assert (v["first_checkpoint"], v["last_checkpoint"], v["retrievals_last"]) == (50, 800, 800 * 2 / 6)
    assert v["error_first"] == plain.mean_abs_error.mean(axis=0)[0] == summary.error[0]
    assert v["error_last"] == summary.error[-1] and v["expected_last"] == summary.expected[-1]
    assert v["z_max"] == np.abs(summary.exact.z).max() and v["z_max_signed"] == np.abs(summary.signed.z).max()
    assert v["p_plus_low"] == plain.p_plus.min() and v["p_plus_high"] == plain.p_plus.max()
    assert v["discount"] == 0.9 and v["effective_outcomes"] == pytest.approx(2 / 6 * 1.9 / 0.1)
    assert [r["episodes"] for r in summary.rows] == [50, 200, 800]
    assert [r["discounted_error"] for r in summary.rows] == list(
        summary.discounted.discounted_error.mean(axis=0)
    )
    assert [r["z"] for r in summary.rows] == list(summary.exact.z)
