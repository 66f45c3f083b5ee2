"""The frontier: terminal FRR against footprint over each policy's range, and the window's bounds."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.decay import frontier, study
from forgetting.studies.decay.sessions import SessionConfig


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


def test_frontier_with_intervals_agrees_with_the_frontier_and_states_its_widths():
    from forgetting.studies import stats

    config = SessionConfig(seed=0)
    rows = frontier.frontier_with_intervals(config, 15, [0.1, 0.6], [20, 120])
    plain = frontier.frontier(config, 15, [0.1, 0.6], [20, 120])
    for row, reference in zip(rows, plain, strict=True):
        assert tuple(row) == frontier.INTERVAL_COLUMNS
        assert {key: row[key] for key in reference} == reference
        assert row["terminal_frr_ci95"] == stats.Z_95 * row["terminal_frr_sd"] / 15**0.5
        assert row["footprint_reduction_ci95"] == stats.Z_95 * row["footprint_reduction_sd"] / 15**0.5
    window_120 = study.run_seeds(study.WindowPolicy(120), config, 15)
    assert rows[-1]["full_recall_share"] == sum(r["terminal_frr"] == 1.0 for r in window_120) / 15
    thresholds, windows, advantage = frontier.advantage_matrix(rows)
    assert (thresholds, windows, advantage.shape) == ([0.1, 0.6], [20, 120], (2, 2))
    assert advantage[1, 0] == rows[1]["terminal_frr_mean"] - rows[2]["terminal_frr_mean"]


def test_fine_settings_cover_each_range_evenly():
    assert frontier.fine_settings(0.25, 50, 150) == ([0.25, 0.5, 0.75], [1, 51, 101])
    thresholds, windows = frontier.fine_settings(0.01, 1, 150)
    assert len(thresholds) == 99 and thresholds[2] == 0.03 and thresholds[-1] == 0.99
    assert windows == list(range(1, 151))
    with pytest.raises(ValueError, match="theta_step"):
        frontier.fine_settings(0.0, 1, 150)


def test_point_labels_merge_runs_of_points_that_would_overlap():
    def row(parameter, footprint, frr):
        return {
            "policy": "window",
            "parameter": parameter,
            "footprint_reduction_mean": footprint,
            "terminal_frr_mean": frr,
        }

    rows = [
        row(90, 0.57, 0.0),
        row(120, 0.503, 1.0),
        row(130, 0.497, 1.0),
        row(150, 0.494, 1.0),
        {"policy": "decay", "parameter": 0.2, "footprint_reduction_mean": 0.5, "terminal_frr_mean": 1.0},
    ]
    assert frontier.point_labels(rows, "window", min_dx=0.012) == [(0.57, 0.0, "90"), (0.503, 1.0, "120–150")]
    assert frontier.point_labels(rows, "decay", min_dx=0.012) == [(0.5, 1.0, "0.2")]
