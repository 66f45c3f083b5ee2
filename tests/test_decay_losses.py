"""Where facts are lost: the batch counts against a direct replay through the event engines."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.decay import losses, study
from forgetting.studies.decay.sessions import SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate


def direct_counts(config, n_seeds, policy):
    """Replay each session through the event engine and classify each fact by hand."""
    counts = {
        "before_first": 0,
        "between": 0,
        "after_last": 0,
        "kept": 0,
        "reached_first": 0,
        "by_recall": {},
    }
    for seed in range(n_seeds):
        session = generate_session(config.replace(seed=seed))
        trace = simulate(policy.engine(), session)
        for fact in session.foundational_ids:
            found = [hit for _, mem_id, hit in trace.recalls if mem_id == fact]
            counts["reached_first"] += bool(found) and found[0]
            missed = [k for k, hit in enumerate(found, start=1) if not hit]
            if missed:
                k = missed[0]
                counts["by_recall"][k] = counts["by_recall"].get(k, 0) + 1
                counts["before_first" if k == 1 else "between"] += 1
            elif fact in trace.evicted_turn:
                counts["after_last"] += 1
            else:
                counts["kept"] += 1
    return counts


@settings(max_examples=20, deadline=None)
@given(
    schedule=st.sampled_from(["spaced", "uniform"]),
    length=st.integers(30, 160),
    recalls=st.integers(1, 4),
    policy=st.sampled_from(
        [
            study.WindowPolicy(15),
            study.WindowPolicy(40),
            study.DecayPolicy(0.2, 2.0),
            study.DecayPolicy(0.5, 4.0),
        ]
    ),
)
def test_the_summary_partitions_the_facts_as_a_direct_replay_does(schedule, length, recalls, policy):
    config = SessionConfig(
        seed=0, session_length=length, recalls_per_foundational=recalls, noise_per_turn=1, schedule=schedule
    )
    summary = losses.where_lost(config, 6, policy)
    direct = direct_counts(config, 6, policy)
    for key in ("before_first", "between", "after_last", "kept", "reached_first"):
        assert summary[key] == direct[key], key
    assert {k: v for k, v in summary["by_recall"].items() if v} == direct["by_recall"]
    assert summary["facts"] == 6 * config.num_foundational
    assert (
        summary["facts"]
        == summary["before_first"] + summary["between"] + summary["after_last"] + summary["kept"]
    )
    assert summary["lost"] == summary["before_first"] + summary["between"] + summary["after_last"]


OUTCOMES = [
    {"recall": 1, "scheduled": 10, "found": 10, "first_lost": 0},
    {"recall": 2, "scheduled": 10, "found": 7, "first_lost": 3},
    {"recall": 3, "scheduled": 10, "found": 2, "first_lost": 5},
    {"recall": 0, "scheduled": 2, "found": 1, "first_lost": 1},
]


def test_losses_are_described_per_recall_then_after_the_last():
    assert losses.describe_losses(OUTCOMES) == "3 at recall 2; 5 at recall 3; 1 after the last recall"
    assert losses.describe_losses(OUTCOMES, from_recall=3, after_last=False) == "5 at recall 3"
    nothing = [{**row, "first_lost": 0} for row in OUTCOMES]
    assert losses.describe_losses(nothing) == "none"
    summary = losses.loss_summary(OUTCOMES)
    assert (summary["facts"], summary["between"], summary["after_last"], summary["kept"]) == (10, 8, 1, 1)


def test_the_loss_table_names_each_schedule_and_repeats_the_outcomes():
    spaced = SessionConfig(seed=0, session_length=60)
    uniform = spaced.replace(schedule="uniform", uniform_range=(10, 60))
    table = losses.loss_table({"a": spaced, "b": uniform}, 3, study.WINDOW)
    assert [r["schedule"] for r in table] == ["a"] * 5 + ["b"] * 5
    assert [{k: r[k] for k in ("recall", "scheduled", "found", "first_lost")} for r in table[5:]] == (
        study.recall_outcomes(uniform, 3, study.WINDOW)
    )


@pytest.mark.parametrize(
    "outcomes, message",
    [
        ([], "outcomes must hold the rows"),
        ([{"recall": 1, "scheduled": 1}], "outcomes rows must have the keys"),
        (OUTCOMES[:3], r"then recall 0 \(after the last\), got recalls \[1, 2, 3\]"),
        ([OUTCOMES[1], OUTCOMES[0], OUTCOMES[3]], r"got recalls \[2, 1, 0\]"),
    ],
)
def test_rows_that_are_not_recall_outcomes_are_refused(outcomes, message):
    with pytest.raises(ValueError, match=message):
        losses.loss_summary(outcomes)


def test_from_recall_must_be_a_positive_int():
    with pytest.raises(ValueError, match="from_recall must be an int >= 1, got 0"):
        losses.describe_losses(OUTCOMES, from_recall=0)
