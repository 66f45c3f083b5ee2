"""decay-sweeps' computations: the capacity sweep, its summary, the frontier summaries, the ceiling."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies import stats
from forgetting.studies.decay import frontier, metrics, sweep_study
from forgetting.studies.decay.capacity import CapacityDecay, CapacityWindow
from forgetting.studies.decay.policies import EngineKind
from forgetting.studies.decay.sessions import SessionConfig, generate_session, recall_schedules
from forgetting.studies.decay.simulation import simulate
from forgetting.studies.decay.study import DecayPolicy, WindowPolicy

CONFIG = SessionConfig(seed=0)


@pytest.mark.parametrize("oldest_first", [True, False])  # read without events (capacity_batch); replayed
def test_the_capacity_sweep_is_the_event_engines_seed_by_seed(oldest_first):
    rows = sweep_study.capacity_sweep(CONFIG, [1, 6], [5, 40], 3, 0.2, 15, oldest_first)
    assert len(rows) == 2 * 2 * 4 and all(tuple(r) == sweep_study.CAPACITY_COLUMNS for r in rows)
    for row in rows:
        make = {
            ("decay", True): lambda c: CapacityDecay(c, oldest_first=oldest_first),
            ("window", True): lambda c: CapacityWindow(c, oldest_first=oldest_first),
            ("decay", False): lambda c: CapacityDecay(c, 0.2, oldest_first=oldest_first),
            ("window", False): lambda c: CapacityWindow(c, 15, oldest_first=oldest_first),
        }[row["policy"], row["rule"] == "budget only"]
        traces = [
            simulate(
                make(row["budget"]),
                generate_session(CONFIG.replace(seed=s, noise_per_turn=row["noise_per_turn"])),
            )
            for s in range(3)
        ]
        frr = [metrics.terminal_frr(t) for t in traces]
        assert row["terminal_frr_mean"] == statistics.fmean(frr)
        assert row["terminal_frr_ci95"] == stats.ci95_half_width(stats.summarize(frr))
        assert row["footprint_reduction_mean"] == statistics.fmean(
            metrics.footprint_reduction(t) for t in traces
        )
        assert row["peak_working_set"] == max(max(t.working_set_sizes) for t in traces) <= row["budget"]


def test_the_capacity_sweep_refuses_bad_input():
    with pytest.raises(ValueError, match=r"budgets\[1\] must be"):
        sweep_study.capacity_sweep(CONFIG, [1], [4, 0], 2, 0.2, 15)
    with pytest.raises(ValueError, match="n_seeds must be"):
        sweep_study.capacity_sweep(CONFIG, [1], [4], 0, 0.2, 15)
    with pytest.raises(ValueError, match="oldest_first must be"):
        sweep_study.capacity_sweep(CONFIG, [1], [4], 2, 0.2, 15, oldest_first="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind must be one of 'decay', 'window', got 'lru'"):
        sweep_study.CapacityPolicy("lru", 4)  # refused when made, not when its engine is built
    with pytest.raises(ValueError, match="kind must be one of 'decay', 'window', got .*'power'"):
        sweep_study.CapacityPolicy(EngineKind.POWER, 4)
    assert sweep_study.CapacityPolicy("window", 4).kind is EngineKind.WINDOW


def _row(noise, budget, policy, rule, frr, footprint=0.5, peak=1):
    return {
        "noise_per_turn": noise,
        "budget": budget,
        "policy": policy,
        "rule": rule,
        "terminal_frr_mean": frr,
        "footprint_reduction_mean": footprint,
        "peak_working_set": peak,
    }


def test_the_capacity_summary_counts_what_its_docstring_says():
    alone, timed_d, timed_w = "budget only", "budget and θ = 0.2", "budget and W = 15"
    rows = [
        _row(1, 4, "decay", alone, 1.0), _row(1, 4, "window", alone, 0.0),
        _row(1, 4, "decay", timed_d, 1.0), _row(1, 4, "window", timed_w, 0.0),
        _row(1, 8, "decay", alone, 1.0), _row(1, 8, "window", alone, 1.0, footprint=0.4),
        _row(1, 8, "decay", timed_d, 0.5), _row(1, 8, "window", timed_w, 0.25),
        _row(9, 4, "decay", alone, 0.0), _row(9, 4, "window", alone, 0.5),
        _row(9, 4, "decay", timed_d, 0.0), _row(9, 4, "window", timed_w, 0.0),
        _row(9, 8, "decay", alone, 1.0), _row(9, 8, "window", alone, 0.0, peak=9),
        _row(9, 8, "decay", timed_d, 1.0), _row(9, 8, "window", timed_w, 0.0),
    ]  # fmt: skip
    summary = sweep_study.capacity_summary(rows, none_text="none")
    assert summary["capacity_settings"] == 8 and summary["capacity_cells"] == 4
    moves = {(4, "decay", alone), (4, "decay", timed_d), (4, "window", alone), (8, "decay", timed_d)}
    moves |= {(8, "window", alone), (8, "window", timed_w)}
    assert set(sweep_study.noise_moves_frr(rows)) == moves
    assert summary["capacity_noise_moves"] == 6
    assert summary["capacity_same_footprint_cells"] == 3
    assert (summary["capacity_decay_ahead_cells"], summary["capacity_window_ahead_cells"]) == (2, 1)
    assert (
        summary["capacity_timed_decay_same_cells"] == 3 and summary["capacity_timed_window_frr_max"] == 0.25
    )
    assert summary["capacity_within_budget"] is False  # peak 9 > budget 8
    assert (summary["capacity_decay_budget_low_noise"], summary["capacity_decay_budget_high_noise"]) == (4, 8)
    assert summary["capacity_window_budget_low_noise"] == 8 and summary["capacity_window_none_levels"] == 1
    assert (
        summary["capacity_noise_low"],
        summary["capacity_noise_high"],
        summary["capacity_n_noise_levels"],
    ) == (1, 9, 2)


@settings(max_examples=25, deadline=None)
@given(
    low=st.floats(0.3, 1.0),
    spread=st.floats(0.0, 0.6),
    recalls=st.integers(1, 4),
    length=st.integers(60, 400),
)
def test_no_seed_leaves_a_longer_silence_than_the_ceiling(low, spread, recalls, length):
    config = SessionConfig(
        seed=0, session_length=length, recalls_per_foundational=recalls, recall_jitter=(low, low + spread)
    )
    ceiling = sweep_study.window_full_recall_ceiling(config)
    for seed in range(40):
        for turns in recall_schedules(config.replace(seed=seed)):
            assert length - turns[-1] <= ceiling


def test_the_ceiling_is_reached_by_the_earliest_schedule_and_refuses_no_recalls():
    # the direct reading: every factor at the low end (rounded as the generator rounds) for W 3, 8, 20, 45
    assert sweep_study.window_full_recall_ceiling(CONFIG) == 150 - (1 + round(45 * 0.7000000000000001))
    uniform = CONFIG.replace(schedule="uniform")
    assert sweep_study.window_full_recall_ceiling(uniform) == 150 - (10 + 4 - 1)
    with pytest.raises(ValueError, match="recalls_per_foundational >= 1"):
        sweep_study.window_full_recall_ceiling(CONFIG.replace(recalls_per_foundational=0))


def test_the_frontier_summary_is_the_frontier_functions_read_directly():
    summary = sweep_study.frontier_summary(CONFIG, 4, [0.1, 0.2, 0.9], [15, 120], DecayPolicy(0.2))
    assert summary["rows"] == frontier.frontier(CONFIG, 4, [0.1, 0.2, 0.9], [15, 120])
    min_w = frontier.window_min_full_recall(CONFIG, 4)
    point = frontier.frontier_point(WindowPolicy(min_w), CONFIG, 4)
    default = frontier.frontier_point(DecayPolicy(0.2), CONFIG, 4)
    values = summary["values"]
    assert values["window_min_w_full_recall"] == min_w == summary["min_w"]
    assert values["window_full_recall_footprint"] == point["footprint_reduction_mean"]
    assert values["decay_default_footprint"] == default["footprint_reduction_mean"]
    full = [r for r in summary["rows"] if r["policy"] == "decay" and r["terminal_frr_mean"] == 1.0]
    assert values["decay_max_theta_full_recall"] == max(r["parameter"] for r in full)
    ratio = (1 - point["footprint_reduction_mean"]) / (1 - default["footprint_reduction_mean"])
    assert values["window_vs_decay_resident"] == ratio


def test_the_fine_summary_counts_pairs_and_names_its_settings():
    summary = sweep_study.fine_summary(CONFIG, 6, 0.25, 40, 0.2, 15)
    values = summary["values"]
    advantage = summary["advantage"]
    assert values["fine_pairs_hold"] + values["fine_pairs_tie"] + values["fine_pairs_lose"] == advantage.size
    assert values["fine_n_thresholds"] == 3 and values["fine_n_windows"] == 4  # 0.25..0.75; W 1, 41, 81, 121
    assert summary["rows"] == frontier.frontier_with_intervals(CONFIG, 6, [0.25, 0.5, 0.75], [1, 41, 81, 121])
    labels = [r["setting"] for r in summary["named"]]
    assert labels[:2] == ["decay, θ = 0.2 (default)", "window, W = 15"]
    assert values["fine_min_w_full_recall"] == frontier.window_min_full_recall(CONFIG, 6)


def test_capacity_points_pick_one_line_of_the_figure_in_budget_order():
    config = SessionConfig(seed=0, session_length=40)
    rows = sweep_study.capacity_sweep(config, [1, 3], [4, 8], 2, 0.2, 15, True)
    points = sweep_study.capacity_points(rows, 3, "window", False)
    assert [r["budget"] for r in points] == [4, 8]
    assert all(
        r["noise_per_turn"] == 3 and r["policy"] == "window" and r["rule"] != "budget only" for r in points
    )
    alone = sweep_study.capacity_points(rows, 1, "decay", True)
    assert [r["rule"] for r in alone] == ["budget only"] * 2
    assert sweep_study.capacity_label("decay", True) == "Ebbinghaus decay, budget only"
    assert sweep_study.capacity_label("window", False) == "recency window, budget and time rule"
