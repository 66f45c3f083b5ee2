"""Metrics over a trace: FRR, survival, the zero-variance alarm."""

import pytest

from forgetting.decay.engines import EbbinghausEngine, RecencyWindow
from forgetting.studies.decay import metrics, study
from forgetting.studies.decay.sessions import SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate


@pytest.mark.parametrize("seed", range(5))
def test_frr_is_a_fraction_at_every_checkpoint(seed):
    config = SessionConfig(seed=seed, noise_per_turn=2, num_foundational=4)
    for engine in (EbbinghausEngine(eviction_threshold=0.3), RecencyWindow(window_size=5)):
        trace = simulate(engine, generate_session(config))
        values = metrics.frr_checkpoints(trace).values()
        assert all(0.0 <= v <= 1.0 for v in values)
        assert all(v * 4 == int(v * 4) for v in values)


def test_survival_statistics_exclude_survivors():
    config = SessionConfig(seed=0, num_foundational=3)
    trace = simulate(RecencyWindow(window_size=15), generate_session(config))
    noise = [i for i in trace.created_turn if i.startswith("noise")]
    stats = metrics.survival_stats(trace, noise)
    evicted = [i for i in noise if i in trace.evicted_turn]
    survivors = [i for i in noise if i not in trace.evicted_turn]
    assert stats.n_evicted == len(evicted) and survivors
    assert stats.max_survival_time == 16  # window: registered at t, gone at t + W + 1
    assert stats.terminal_survival_rate == pytest.approx(len(survivors) / len(noise))
    decay = simulate(EbbinghausEngine(), generate_session(config))
    facts = metrics.survival_stats(decay, decay.foundational_ids)
    assert facts.n_evicted == 0 and facts.mean_survival_time is None
    assert facts.terminal_survival_rate == 1.0


def test_uniform_schedule_window_scores_zero_with_zero_variance():
    config = SessionConfig(seed=0, schedule="uniform")
    runs = study.run_seeds(study.WINDOW, config, 50)
    frr = [r["terminal_frr"] for r in runs]
    assert set(frr) == {0.0}
    assert metrics.zero_variance_alarm({"window": frr, "varies": [0.0, 1.0]}) == ["window"]
