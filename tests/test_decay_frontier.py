"""The frontier: terminal FRR against footprint over each policy's range, and the window's bounds."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay import frontier, study
from forgetting.decay.sessions import SessionConfig


def test_rows_have_the_published_columns_in_order():
    rows = frontier.frontier(SessionConfig(seed=0), 3, [0.2], [15, 150])
    assert [tuple(r) for r in rows] == [frontier.FRONTIER_COLUMNS] * 3
    assert [(r["policy"], r["parameter"]) for r in rows] == [("decay", 0.2), ("window", 15), ("window", 150)]


def test_frontier_point_at_the_headline_settings_matches_the_headline():
    config = SessionConfig(seed=0)
    decay = frontier.frontier_point(study.DECAY, config, 50)
    headline = study.summarize_runs(study.run_seeds(study.DECAY, config, 50))
    assert decay["terminal_frr_mean"] == headline["frr_mean"]
    assert decay["footprint_reduction_mean"] == headline["footprint_reduction_mean"]
    assert decay["footprint_reduction_sd"] == headline["footprint_reduction_sd"]


def test_published_window_bounds():
    config = SessionConfig(seed=0)
    assert frontier.window_certain_loss_below(config) == 91  # last recall at turn <= 59
    assert frontier.window_min_full_recall(config, 20) == 116
    point = frontier.frontier_point(study.WindowPolicy(116), config, 20)
    assert point["terminal_frr_mean"] == 1.0 and round(point["footprint_reduction_mean"], 3) == 0.518
    assert frontier.frontier_point(study.WindowPolicy(115), config, 20)["terminal_frr_mean"] < 1.0


def test_no_window_keeps_facts_that_are_never_recalled_past_the_range():
    never = SessionConfig(seed=0, recalls_per_foundational=0)
    assert frontier.window_certain_loss_below(never) is None
    assert frontier.window_min_full_recall(never, 3, max_window=100) is None
    assert frontier.window_min_full_recall(never, 3) == 149  # L - 1: untouched since turn 1


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), length=st.integers(20, 120), window=st.integers(1, 119))
def test_every_window_below_the_bound_loses_every_fact(seed, length, window):
    config = SessionConfig(seed=seed, session_length=length, noise_per_turn=0)
    bound = frontier.window_certain_loss_below(config)
    if window < bound:
        assert study.run_session(study.WindowPolicy(window), config)["terminal_frr"] == 0.0


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="n_seeds must be an int >= 1"):
        frontier.window_min_full_recall(SessionConfig(seed=0), 0)
    with pytest.raises(ValueError, match="max_window must be an int >= 1"):
        frontier.window_min_full_recall(SessionConfig(seed=0), 2, max_window=0)
