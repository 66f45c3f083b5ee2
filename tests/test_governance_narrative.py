"""forgetting.studies.governance.narrative: the chapter's counts and clauses, each against a direct
reading of the world, the session generator or the traced run."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.governance.narrative import (
    gap_schedule,
    jitter_percent,
    late_turns,
    list_text,
    pre_shift_counts,
    stale_fate,
    true_fate,
    worth_after_shift,
)
from forgetting.studies.governance.policies import GovernanceRun, run_governance
from forgetting.studies.governance.summary import late_window
from forgetting.studies.governance.world import JITTER, STALE, GovernanceWorld, generate_governance_session

RULES = dict(eviction_threshold=0.2, min_evidence=5.0, low_threshold=0.3)


@given(length=st.integers(3, 2000), data=st.data())
def test_late_turns_counts_the_turns_of_the_late_window(length, data):
    shift = data.draw(st.integers(2, length - 1))
    world = GovernanceWorld(session_length=length, shift_turn=shift)
    first, last = late_window(world)
    assert late_turns(world) == len(range(first, last + 1)) == (length - shift) // 2


@given(first_gap=st.integers(1, 50), count=st.integers(1, 8))
def test_gap_schedule_doubles_from_the_first_gap(first_gap, count):
    gaps = gap_schedule(GovernanceWorld(first_gap=first_gap), count)
    assert len(gaps) == count and gaps[0] == first_gap
    assert all(b == 2 * a for a, b in zip(gaps, gaps[1:]))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), first_gap=st.integers(1, 4))
def test_the_drawn_gaps_are_the_schedule_within_the_jitter(seed, first_gap):
    """Every pre-shift recall gap of a generated session is its nominal gap times a factor in [1 -+ JITTER]."""
    world = GovernanceWorld(first_gap=first_gap, shift_turn=120, session_length=200)
    session = generate_governance_session(world, seed)
    pre = [1, *(t for t in session.task_turns if t < world.shift_turn)]
    nominal = gap_schedule(world, len(pre) - 1)
    for (a, b), gap in zip(zip(pre, pre[1:]), nominal):
        assert max(1, round(gap * (1 - JITTER))) <= b - a <= max(1, round(gap * (1 + JITTER)))


def test_jitter_percent_is_the_world_constant_in_percent():
    assert jitter_percent() == 100 * JITTER


def test_bad_count_is_refused():
    with pytest.raises(ValueError, match="count"):
        gap_schedule(GovernanceWorld(), 0)


@given(st.lists(st.integers(-99, 99), min_size=1, max_size=6))
def test_list_text_joins_with_commas_and_a_final_and(values):
    text = list_text(values)
    words = [str(v) for v in values]
    if len(values) == 1:
        assert text == words[0]
    else:
        head, last = text.rsplit(" and ", 1)
        assert last == words[-1] and head.split(", ") == words[:-1]


def test_list_text_writes_each_value_with_the_given_form():
    assert list_text([0.0, 0.25, 1.0], "{:g}".format) == "0, 0.25 and 1"
    with pytest.raises(ValueError, match="at least one value"):
        list_text([])


@pytest.fixture(scope="module")
def traced():
    world = GovernanceWorld(session_length=200)
    return run_governance(generate_governance_session(world, 3), "combined", **RULES)


def test_worth_after_shift_reads_the_trace_from_the_shift_on(traced):
    turns, stale, true = worth_after_shift(traced)
    expected = [(t, w) for t, w in zip(traced.task_turns, traced.worth_trace) if t >= traced.shift_turn]
    assert turns == [t for t, _ in expected]
    assert stale == [w[0] for _, w in expected] and true == [w[1] for _, w in expected]
    assert turns and min(turns) >= traced.shift_turn


def test_worth_after_shift_needs_a_worth_trace():
    decay = run_governance(
        generate_governance_session(GovernanceWorld(session_length=100), 0), "decay", **RULES
    )
    with pytest.raises(ValueError, match="worth trace"):
        worth_after_shift(decay)
    with pytest.raises(ValueError, match="GovernanceRun"):
        pre_shift_counts("not a run")


def test_pre_shift_counts_count_the_stale_facts_recalls_and_their_successes(traced):
    recalls, successes = pre_shift_counts(traced)
    pre = [
        (s, r)
        for t, s, r in zip(traced.task_turns, traced.successes, traced.retrieved)
        if t < traced.shift_turn
    ]
    assert recalls == len([r for _, r in pre if STALE in r]) > 0  # before the shift every task retrieves A
    assert successes == len([s for s, r in pre if s and STALE in r]) <= recalls


def _with_removals(run: GovernanceRun, stale, true) -> GovernanceRun:
    from dataclasses import replace

    return replace(run, stale_removed_turn=stale, true_removed_turn=true)


def test_fates_name_the_removal_turn_or_say_it_never_came(traced):
    assert stale_fate(_with_removals(traced, None, None)) == "never"
    assert stale_fate(_with_removals(traced, 57, None)) == "at turn 57"
    assert true_fate(_with_removals(traced, None, None)) == "is kept to the end"
    assert true_fate(_with_removals(traced, None, 88)) == "leaves it at turn 88"
