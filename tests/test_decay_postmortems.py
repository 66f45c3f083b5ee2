"""The postmortems page's computations: the schedule's bounds against drawn sessions, and the
rows against the study functions they gather."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from forgetting.studies.decay import postmortems, study
from forgetting.studies.decay.sessions import RECALL_JITTER, SessionConfig, generate_session


def first_gaps(config, n_seeds):
    gaps = []
    for seed in range(n_seeds):
        session = generate_session(config.replace(seed=seed))
        gaps += [session.recall_turns(f)[0] - 1 for f in session.foundational_ids if session.recall_turns(f)]
    return gaps


def test_the_published_jitter_is_thirty_percent_either_way():
    low, high = RECALL_JITTER
    assert (
        postmortems.jitter_percent(RECALL_JITTER) == round(100 * (1 - low), 12) == round(100 * (high - 1), 12)
    )
    assert postmortems.jitter_percent((1.0, 1.0)) == 0.0


@pytest.mark.parametrize(
    "jitter, message",
    [
        ((0.5, 1.3), "symmetric|low \\+ high == 2"),
        ((1.3, 0.7), "low <= high"),
        ((0.0, 2.0), r"jitter\[0\] must be"),
        ((float("nan"), 1.0), r"jitter\[0\] must be"),
    ],
)
def test_a_jitter_that_is_not_symmetric_about_one_is_refused(jitter, message):
    with pytest.raises(ValueError, match=message):
        postmortems.jitter_percent(jitter)


@settings(max_examples=25, deadline=None)
@given(
    schedule=st.sampled_from(["spaced", "uniform"]),
    length=st.integers(5, 200),
    first_offset=st.integers(1, 40),
    recalls=st.integers(1, 4),
    first_turn=st.integers(2, 30),
)
def test_every_drawn_first_recall_lies_within_the_bounds(schedule, length, first_offset, recalls, first_turn):
    try:
        config = SessionConfig(
            seed=0,
            session_length=length,
            recalls_per_foundational=recalls,
            noise_per_turn=0,
            schedule=schedule,
            recall_base_offsets=(first_offset, 8, 20, 45),
            uniform_range=(min(first_turn, length), length),
        )
    except ValueError:
        assume(False)  # more recalls than the session can place
    bounds = postmortems.first_recall_gap_bounds(config)
    gaps = first_gaps(config, 40)
    assert bounds is not None and gaps
    assert bounds[0] <= min(gaps) and max(gaps) <= bounds[1]


def test_the_bounds_are_reached_and_force_the_published_shares():
    base = SessionConfig(seed=0)
    low, high = postmortems.first_recall_gap_bounds(base)
    gaps = first_gaps(base, 200)
    assert (min(gaps), max(gaps)) == (low, high)  # 600 facts draw both ends of a 3-turn offset's range
    uniform = postmortems.uniform_config(base, 10)
    assert postmortems.first_recall_gap_bounds(uniform)[0] == 9
    for config, policy in [(base, study.DecayPolicy(0.2, 2.0)), (uniform, study.DecayPolicy(0.2, 2.0))]:
        forced = postmortems.forced_first_recall_share(config, policy)
        assert forced is not None and study.first_recall_in_grace(config, 20, policy) == forced
    later = base.replace(
        recall_base_offsets=(5, 8, 20, 45)
    )  # first recalls from 4 to 8 turns: delay 4 splits them
    assert postmortems.forced_first_recall_share(later, study.DecayPolicy(0.2, 2.0)) is None
    assert postmortems.first_recall_gap_bounds(base.replace(recalls_per_foundational=0)) is None


def test_grace_rows_are_the_study_functions_of_each_stability():
    config = SessionConfig(seed=0, session_length=80)
    rows = postmortems.grace_rows(config, 4, [2.0, 8.0], 0.2)
    assert [r["baseline_stability"] for r in rows] == [2.0, 8.0]
    for row in rows:
        policy = study.DecayPolicy(0.2, row["baseline_stability"])
        summary = study.summarize_runs(study.run_seeds(policy, config, 4))
        assert row["terminal_frr_mean"] == summary["frr_mean"] and row["terminal_frr_sd"] == summary["frr_sd"]
        assert row["reach_first_recall"] == study.first_recall_in_grace(config, 4, policy)
        assert row["first_recall_on_eviction_turn"] == study.first_recall_on_eviction_turn(config, 4, policy)
        assert row["eviction_delay"] == policy.grace_turns


def test_the_first_losing_offset_is_the_first_row_below_one():
    rows = [{"first_offset": 2, "p": 1.0}, {"first_offset": 4, "p": 0.5}, {"first_offset": 6, "p": 0.0}]
    assert postmortems.first_losing_offset(rows, "p") == (4, 0.5)
    assert postmortems.first_losing_offset(rows[:1], "p") is None
    with pytest.raises(ValueError, match="label 'q' is not a column of the sweep"):
        postmortems.first_losing_offset(rows, "q")


def test_the_schedule_comparison_is_run_seeds_on_each_schedule():
    base = SessionConfig(seed=0, session_length=60)
    uniform = postmortems.uniform_config(base, 10)
    assert uniform.uniform_range == (10, 60) and uniform.schedule == "uniform"
    policies = (study.DecayPolicy(0.2), study.WindowPolicy(15))
    rows, per_seed, alarms = postmortems.schedule_comparison({"u": uniform, "s": base}, policies, 5)
    assert [(r["schedule"], r["policy"]) for r in rows] == [(s, p.label) for s in "us" for p in policies]
    for row, (config, policy) in zip(rows, [(c, p) for c in (uniform, base) for p in policies], strict=True):
        frr = [r["terminal_frr"] for r in study.run_seeds(policy, config, 5)]
        assert per_seed[f"{row['schedule']} / {policy.kind}"] == frr
    assert alarms == [name for name, frr in per_seed.items() if len(set(frr)) == 1]
    with pytest.raises(ValueError, match="first_turn must be an int >= 2 and <= 60"):
        postmortems.uniform_config(base, 61)


def test_grace_values_are_the_rows_of_each_stability_and_of_the_short_one():
    rows = postmortems.grace_rows(SessionConfig(seed=0, session_length=60), 3, [2.0, 8.0], 0.2)
    values = postmortems.grace_values(rows, 2.0)
    assert values["naive_turn_s2"] == rows[0]["naive_eviction_turn"] == values["naive_turn_short"]
    assert values["naive_turn_s8"] == rows[1]["naive_eviction_turn"]
    short = rows[0]
    assert (values["delay_short"], values["reach_first_recall_short"], values["on_eviction_turn_short"]) == (
        short["eviction_delay"],
        short["reach_first_recall"],
        short["first_recall_on_eviction_turn"],
    )
    assert (values["frr_short"], values["frr_short_sd"]) == (
        short["terminal_frr_mean"],
        short["terminal_frr_sd"],
    )
    with pytest.raises(ValueError, match="expected one row with baseline_stability = 3.0, found 0"):
        postmortems.grace_values(rows, 3.0)


def test_only_the_stabilities_the_article_names_are_checked_against_it():
    values = {"naive_turn_s2": 3.2, "naive_turn_s8": 12.9, "naive_turn_s3": 4.8, "naive_turn_short": 3.2}
    assert postmortems.article_naive_turns(values) == [
        ("naive_turn_s2", "decay-postmortems.naive_turn_s2"),
        ("naive_turn_s8", "decay-postmortems.naive_turn_s8"),
    ]


def test_schedule_values_are_read_by_schedule_name_and_policy_label_not_by_display_words():
    base = SessionConfig(seed=0, session_length=60)
    uniform = postmortems.uniform_config(base, 10)
    decay, window = study.DecayPolicy(0.2), study.WindowPolicy(15)
    rows, _, _ = postmortems.schedule_comparison({"U": uniform, "S": base}, (decay, window), 4)
    values = postmortems.schedule_values(rows, "U", "S", decay, window)
    by = {(r["schedule"], r["policy"]): r for r in rows}
    assert values["uniform_frr_window"] == by["U", window.label]["frr_mean"]
    assert values["uniform_frr_window_sd"] == by["U", window.label]["frr_sd"]
    assert values["uniform_frr_decay"] == by["U", decay.label]["frr_mean"]
    assert values["uniform_frr_decay_sd"] == by["U", decay.label]["frr_sd"]
    assert values["uniform_winnable_window"] == by["U", window.label]["first_recall_in_grace"]
    assert values["uniform_winnable_decay"] == by["U", decay.label]["first_recall_in_grace"]
    assert values["spaced_winnable_window"] == by["S", window.label]["first_recall_in_grace"]
    with pytest.raises(ValueError, match="expected one row for \\('uniform', "):
        postmortems.schedule_values(rows, "uniform", "S", decay, window)


def test_window_loss_values_split_every_fact_by_where_it_is_first_lost():
    from forgetting.studies.decay import losses

    base = SessionConfig(seed=0, session_length=150)
    uniform = postmortems.uniform_config(base, 10)
    window = study.WindowPolicy(15)
    u, s = losses.where_lost(uniform, 6, window), losses.where_lost(base, 6, window)
    values = postmortems.window_loss_values(u, s)
    facts = 6 * base.num_foundational
    assert values["uniform_window_lost_before_first"] + values["uniform_window_reached_first"] == facts
    assert values["uniform_window_lost_before_first"] == u["before_first"] > 0
    assert (
        values["spaced_window_lost_before_first"] == s["before_first"] == 0
    )  # the spaced schedule forces it
    assert values["window_lost_between"] + values["window_lost_after_last"] + s["kept"] == facts
    assert values["uniform_window_lost_later"] == losses.describe_losses(u["outcomes"], from_recall=2)
