"""The theory check: MW -> p+ at rate 1/sqrt(n); the discounted estimator's floor."""

import math

import numpy as np
import pytest

from forgetting import worlds as W


def test_worth_converges_to_exact_p_plus_at_rate_one_over_sqrt_n():
    result = W.theory_check(n_seeds=10, seed=2)
    error = result.mean_abs_error.mean(axis=0)
    assert -0.6 < result.slope < -0.4
    # the error tracks the normal approximation sqrt(2/pi) sd at every checkpoint: 200 errors
    # per checkpoint put the mean within about 5 % (1 sd), so 30 % is a generous bound
    assert np.all(np.abs(error / result.predicted_error - 1) < 0.3)
    assert result.max_abs_error[:, -1].max() < 0.03  # 10 000 retrievals per memory: sd <= 0.005
    assert np.array_equal(result.p_plus, np.stack([W.p_plus_uniform(u, 4) for u in result.utilities]))


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
    rng = np.random.default_rng(W.seed_streams(3, 2)[0])
    utilities = rng.uniform(0.0, 1.0, 6)
    p_plus = W.p_plus_uniform(utilities, 2)
    scalar, done, errors = DiscountedMemoryWorth(discount=0.9), 0, []
    for checkpoint in world.checkpoints:
        rows = W.uniform_retrieval(rng, checkpoint - done, 6, 2)
        outcomes = rng.random(checkpoint - done) < W.success_probability(utilities, rows)
        for row, y in zip(rows, outcomes):
            scalar.update(row, y)
        done = checkpoint
        errors.append(np.abs(np.array([scalar.worth(m) for m in range(6)]) - p_plus).mean())
    assert result.discounted_error[0] == pytest.approx(errors, rel=1e-10)


def test_discounted_error_stalls_at_its_predicted_floor():
    result = W.discounted_theory_check(discount=0.99, n_seeds=10, seed=1)
    late = result.discounted_error.mean(axis=0)[-3:]
    assert np.all(np.abs(late / result.predicted_floor - 1) < 0.3)
    assert result.mean_abs_error.mean(axis=0)[-1] < late.min() / 5  # the plain one keeps shrinking
    assert result.effective_outcomes == pytest.approx(0.2 * 199)
    with pytest.raises(ValueError, match="discount"):
        W.discounted_theory_check(discount=0.0)
