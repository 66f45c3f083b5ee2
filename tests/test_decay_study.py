"""The decay study: the published numbers of the decay chapters, and determinism."""

import pytest

from forgetting import hashing
from forgetting.decay import metrics, study
from forgetting.decay.engines import EbbinghausEngine
from forgetting.decay.sessions import SessionConfig, generate_session
from forgetting.decay.simulation import simulate


def test_determinism_same_seed_same_trace():
    config = SessionConfig(seed=7)
    first = simulate(EbbinghausEngine(), generate_session(config))
    second = simulate(EbbinghausEngine(), generate_session(config))
    assert first == second
    assert hashing.digest(study.run_seeds(study.DECAY, config, 3)) == hashing.digest(
        study.run_seeds(study.DECAY, config, 3)
    )


def test_published_headline():
    config = SessionConfig(seed=0)
    decay, window = study.headline(config, 50)
    assert (decay["frr_mean"], decay["frr_sd"], window["frr_mean"], window["frr_sd"]) == (1.0, 0.0, 0.0, 0.0)
    assert (decay["facts_evicted"], window["facts_evicted"]) == (0.0, 3.0)
    assert round(decay["footprint_reduction"], 3) == 0.911
    assert round(window["footprint_reduction"], 3) == 0.898


def test_published_trace():
    config = SessionConfig(seed=0, num_foundational=1)
    decay = study.trace_session(study.DECAY, config)
    window = study.trace_session(study.WINDOW, config)
    assert [t for t, _, _ in decay.recalls] == [5, 10, 20, 39]
    assert window.evicted_turn["foundational_0"] == 36
    assert [ok for _, _, ok in window.recalls] == [True, True, True, False]
    assert [ok for _, _, ok in decay.recalls] == [True] * 4
    assert metrics.frr(decay, 30) == metrics.frr(window, 30) == 1.0
    assert decay.is_present_after("foundational_0", 150)


def test_published_sweeps_and_failure_case():
    config = SessionConfig(seed=0)
    for row in study.noise_sweep(config, [1, 20], 20):
        assert (row["decay_frr"], row["window_frr"]) == (1.0, 0.0)
    grid = study.sensitivity_sweep(config, [0.1, 0.3], [10, 50], 20)
    assert all(r["holds"] for r in grid)
    never = config.replace(recalls_per_foundational=0)
    assert study.headline(never, 20)[0]["frr_mean"] == 0.0
    assert study.headline(never, 20)[1]["frr_mean"] == 0.0


def test_mechanism_check_reads_the_published_mechanism():
    mechanism = study.mechanism_check(SessionConfig(seed=0))
    assert mechanism["recall_turns"] == "5, 10, 20, 39" and mechanism["recalls"] == 4
    assert round(mechanism["stability"]) == 292 and mechanism["turns_since"] == 111
    assert round(mechanism["retention"], 3) == 0.684


def test_mechanism_check_needs_a_fact():
    with pytest.raises(ValueError, match="num_foundational >= 1"):
        study.mechanism_check(SessionConfig(seed=0, num_foundational=0))


def test_headline_runs_are_byte_identical_when_rerun():
    """The determinism the decay-headline chapter also shows: two runs, one digest."""
    config = SessionConfig(seed=0)
    runs = {p.kind: study.run_seeds(p, config, 5) for p in (study.DECAY, study.WINDOW)}
    again = {p.kind: study.run_seeds(p, config, 5) for p in (study.DECAY, study.WINDOW)}
    assert hashing.digest(runs) == hashing.digest(again)
