"""forgetting.studies.governance.policies: decay keeps contradicting facts, outcome evidence deprecates.

The golden test pins, for a dozen sessions of the chapter's default world, the turn at which
each policy lost each fact. The direct-reading tests replay a run's own log against the
plain rules: every outcome is the session's shared draw against the outcome model (no
policy draws its own), Memory Worth deprecates a fact exactly when a fresh estimator fed
the same episodes calls it low-value (no oracle, no silent policy), the working set leaves
deprecated facts out, and a recall on a fact's eviction turn comes before the eviction.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay import DEFAULT_EVICTION_THRESHOLD, EbbinghausEngine, decay_eviction_delay
from forgetting.governed import DeprecationRule
from forgetting.studies.governance.batch import run_governance_seeds
from forgetting.studies.governance.policies import (
    ALL_POLICIES,
    EVIDENCE_POLICIES,
    POLICIES,
    SEQUENTIAL,
    GovernancePolicy,
    GovernanceRun,
    NeverEvicting,
    _play,
    decay_fact_states,
    noise_present,
    run_governance,
)
from forgetting.studies.governance.world import (
    STALE,
    TRUE,
    GovernanceOutcome,
    GovernanceSession,
    GovernanceWorld,
    generate_governance_session,
)
from forgetting.worth import LOW_VALUE, MemoryWorth

#: (stale_removed_turn, true_removed_turn) per seed 0..11 of ``GovernanceWorld()`` with the
#: default rules; regression pins of this code, checked against the published chapter's digest.
GOLDEN_REMOVALS = {
    "decay": [(None, None)] * 12,
    "worth": [
        (60, None),
        (96, None),
        (66, 49),
        (65, None),
        (48, None),
        (73, None),
        (72, None),
        (74, None),
        (60, 45),
        (53, 48),
        (57, None),
        (58, 49),
    ],
}
GOLDEN_REMOVALS["combined"] = GOLDEN_REMOVALS["worth"]


def small_world(**changes):
    return GovernanceWorld(**{"session_length": 200, "noise_per_turn": 1, **changes})


def test_golden_removal_turns_of_every_policy():
    runs = run_governance_seeds(GovernanceWorld(), 12)
    for policy in POLICIES:
        assert [(r.stale_removed_turn, r.true_removed_turn) for r in runs[policy]] == GOLDEN_REMOVALS[
            policy
        ], policy


def test_combined_governance_can_lose_the_true_fact_and_says_when():
    runs = run_governance_seeds(GovernanceWorld(), 12)["combined"]
    lost = [r for r in runs if r.true_removed_turn is not None]
    assert lost  # outcome evidence is wrong about B in some sessions: the chapter's cost
    for run in lost:
        assert run.true_removed_turn >= run.shift_turn
        after = [r for t, r in zip(run.task_turns, run.retrieved) if t > run.true_removed_turn]
        assert all(TRUE not in r for r in after)  # a deprecated fact is never retrieved again


def test_policies_share_the_same_tasks():
    runs = run_governance_seeds(small_world(), 3)
    for k in range(3):
        assert len({runs[p][k].task_turns for p in POLICIES}) == 1


def test_decay_alone_keeps_both_contradicting_facts():
    for run in run_governance_seeds(small_world(co_retrieval=0.5), 5)["decay"]:
        assert run.stale_removed_turn is None and run.true_removed_turn is None
        assert any(set(r) == {STALE, TRUE} for r in run.retrieved)  # both recalled together


def test_decay_fact_states_are_read_from_the_engine_that_played():
    session = generate_governance_session(GovernanceWorld(), 0)
    states = decay_fact_states(session)
    decay = run_governance(session, "decay")
    for fact in (STALE, TRUE):
        assert states[fact].recalls == sum(fact in r for r in decay.retrieved)
        assert states[fact].evicted_turn is None
        assert 0.2 < states[fact].retention <= 1.0 and states[fact].stability > 8.0


@pytest.mark.parametrize(
    "world, theta, seed, evicted",
    [
        (GovernanceWorld(task_rate=0.0), 0.2, 0, {TRUE}),  # B is never retrieved: it decays away
        # a threshold a fact stays above only when recalled on the next turn: seed 2 has no
        # task at turn 1 + shift_turn (so B goes too), seed 0 has one (B is kept)
        (GovernanceWorld(), 0.9, 2, {STALE, TRUE}),
        (GovernanceWorld(), 0.9, 0, {STALE}),
    ],
)
def test_decay_fact_states_report_evicted_facts_instead_of_failing(world, theta, seed, evicted):
    session = generate_governance_session(world, seed)
    states = decay_fact_states(session, theta)
    decay = run_governance(session, "decay", eviction_threshold=theta)
    assert set(states) == {STALE, TRUE}
    assert {m for m, s in states.items() if s.evicted_turn is not None} == evicted
    for fact, removed in ((STALE, decay.stale_removed_turn), (TRUE, decay.true_removed_turn)):
        assert states[fact].recalls == sum(fact in r for r in decay.retrieved)
        if fact in evicted:
            assert states[fact].evicted_turn == removed
            assert states[fact].stability is None and states[fact].retention is None


def _outcome_probability(world, turn, retrieved):
    """The outcome model read directly: before the shift A is the true fact."""
    if turn < world.shift_turn:
        return world.outcome.p_ok if STALE in retrieved else world.outcome.p_none
    return world.outcome.probability(TRUE in retrieved, STALE in retrieved)


worlds = st.builds(
    GovernanceWorld,
    session_length=st.integers(60, 160),
    shift_turn=st.integers(10, 50),
    task_rate=st.sampled_from([0.0, 0.3, 0.8, 1.0]),
    co_retrieval=st.sampled_from([0.0, 0.5, 1.0]),
    noise_per_turn=st.integers(0, 2),
    outcome=st.builds(
        GovernanceOutcome,
        st.sampled_from([0.6, 0.9]),
        st.sampled_from([0.1, 0.25]),
        st.sampled_from([0.05, 0.3]),
        st.sampled_from([0.2, 0.5]),
    ),
)


@settings(max_examples=40, deadline=None)
@given(world=worlds, seed=st.integers(0, 10_000), theta=st.sampled_from([0.2, 0.5, 0.9]))
def test_every_outcome_is_the_sessions_shared_draw(world, seed, theta):
    session = generate_governance_session(world, seed)
    for policy in POLICIES:
        run = run_governance(session, policy, eviction_threshold=theta)
        assert run.task_turns == session.task_turns
        for i, (turn, retrieved) in enumerate(zip(run.task_turns, run.retrieved)):
            expected = session.draw_outcome[i] < _outcome_probability(world, turn, retrieved)
            assert run.successes[i] == expected, (policy, turn)


@settings(max_examples=40, deadline=None)
@given(world=worlds, seed=st.integers(0, 10_000), min_evidence=st.sampled_from([1.0, 5.0]))
def test_memory_worth_deprecates_exactly_when_a_fresh_estimator_says_low_value(world, seed, min_evidence):
    session = generate_governance_session(world, seed)
    run = run_governance(session, "worth", min_evidence=min_evidence)  # never evicts: removal = deprecation
    estimator = MemoryWorth(min_evidence=min_evidence)
    deprecated: dict[str, int] = {}
    for i, (turn, retrieved) in enumerate(zip(run.task_turns, run.retrieved)):
        assert not set(retrieved) & set(deprecated)  # a deprecated fact is never retrieved again
        if retrieved:
            estimator.update(retrieved, run.successes[i])
        for fact in retrieved:
            if estimator.classify(fact) == LOW_VALUE:
                deprecated.setdefault(fact, turn)
        assert run.worth_trace[i] == (estimator.worth(STALE), estimator.worth(TRUE))
    assert (run.stale_removed_turn, run.true_removed_turn) == (deprecated.get(STALE), deprecated.get(TRUE))


def test_combined_working_set_is_decays_minus_the_deprecated_facts():
    # In the default world decay never evicts a deployment fact, so the two engines hold the
    # same noise and combined governance differs only by the facts it deprecated.
    for seed in range(4):
        session = generate_governance_session(GovernanceWorld(), seed)
        decay, combined = run_governance(session, "decay"), run_governance(session, "combined")
        assert (decay.stale_removed_turn, decay.true_removed_turn) == (None, None)
        for turn, (kept, size) in enumerate(zip(decay.working_set, combined.working_set), start=1):
            gone = sum(
                t is not None and t <= turn for t in (combined.stale_removed_turn, combined.true_removed_turn)
            )
            assert size == kept - gone, turn


@pytest.mark.parametrize("policy", ["decay", "combined"])
def test_a_recall_on_the_eviction_turn_comes_before_the_eviction(policy):
    # A is due for eviction on turn 1 + d; a task that turn must still find and reinforce it.
    world = GovernanceWorld(session_length=60, shift_turn=50, noise_per_turn=0)
    due = 1 + decay_eviction_delay(8.0, 0.2)
    session = GovernanceSession(world, 0, (due,), (0.0,), (0.0,), (0.0,), (0.0,), (0.0,))
    run = run_governance(session, policy)
    assert run.retrieved == ((STALE,),) and run.successes == (True,)
    assert run.stale_removed_turn is None or run.stale_removed_turn > due
    late = replace(session, task_turns=(due + 1,))  # one turn too late: A is gone
    assert run_governance(late, policy).retrieved == ((),)
    assert run_governance(late, policy).stale_removed_turn == due


def test_working_set_excludes_deprecated_items_and_worth_alone_keeps_the_noise():
    runs = run_governance_seeds(small_world(co_retrieval=0.0), 3)
    for worth_run in runs["worth"]:
        assert worth_run.worth_trace is not None
        assert worth_run.working_set[-1] == 1 + 200 * 1 + 1 - (worth_run.stale_removed_turn is not None) - (
            worth_run.true_removed_turn is not None
        )
    assert all(r.worth_trace is None for r in runs["decay"])


def plain_mean(values):
    """The rates' plain reading: numpy's mean of the values, NaN for none."""
    return float(np.mean(values)) if values else math.nan


def same_float(a, b):
    return type(a) is float and (a == b or (math.isnan(a) and math.isnan(b)))


@given(
    st.lists(
        st.tuples(st.integers(1, 60), st.booleans(), st.booleans()), max_size=40, unique_by=lambda t: t[0]
    ),
    st.integers(1, 59),
    st.integers(0, 62),
    st.integers(0, 62),
    st.lists(st.integers(0, 2**40), min_size=60, max_size=60),
)
def test_a_runs_rates_are_the_plain_means_over_its_tasks(tasks, shift, first, last, sizes):
    turns, successes, crowded = (tuple(column) for column in zip(*sorted(tasks))) if tasks else ((), (), ())
    run = GovernanceRun(
        "decay", 0, shift, turns, successes, ((),) * len(turns), tuple(sizes), None, None, None, crowded
    )
    assert same_float(run.success_after_shift, plain_mean([s for t, s in zip(turns, successes) if t > shift]))
    assert same_float(run.crowded_after_shift, plain_mean([c for t, c in zip(turns, crowded) if t > shift]))
    chosen = [s for t, s in zip(turns, successes) if first <= t <= last]
    assert same_float(run.success_between(first, last), plain_mean(chosen))
    assert same_float(run.mean_working_set, plain_mean(sizes[shift:]))


def test_success_between_checks_its_turns():
    run = run_governance(generate_governance_session(small_world(), 0), "decay")
    assert 0.0 <= run.success_between(1, 200) <= 1.0
    assert math.isnan(run.success_between(500, 600))
    with pytest.raises(ValueError, match="first_turn"):
        run.success_between(-1, 10)
    with pytest.raises(ValueError, match="last_turn"):
        run.success_between(1, "10")


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: run_governance("session", "decay"), "session"),
        (lambda: run_governance(generate_governance_session(GovernanceWorld(), 0), "oracle"), "policy"),
        (
            lambda: run_governance(
                generate_governance_session(GovernanceWorld(), 0), "combined", eviction_threshold=1.0
            ),
            "eviction_threshold",
        ),
        (
            lambda: run_governance(
                generate_governance_session(GovernanceWorld(), 0), "combined", min_evidence=0
            ),
            "min_evidence",
        ),
        (
            lambda: run_governance(
                generate_governance_session(GovernanceWorld(), 0), "combined", low_threshold=0.8
            ),
            "low_threshold",
        ),
        (lambda: run_governance_seeds(GovernanceWorld(), 0), "n_seeds"),
        (lambda: run_governance_seeds(GovernanceWorld(), 1, -3), "base_seed"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("co_retrieval, both", [(0.0, False), (1.0, True)])
def test_co_retrieval_at_its_ends_never_or_always_retrieves_both(co_retrieval, both):
    # Decay alone keeps both facts here, so every post-shift task finds both: at 0 it never
    # retrieves them together (p_conflict plays no part), at 1 it always does (shared evidence).
    for run in run_governance_seeds(small_world(co_retrieval=co_retrieval), 3)["decay"]:
        after = [r for t, r in zip(run.task_turns, run.retrieved) if t > run.shift_turn]
        assert after and all((set(r) == {STALE, TRUE}) is both for r in after)


def test_decay_could_not_evict_the_stale_fact_within_the_published_session_even_unretrieved():
    """beyond-governance: the stale fact's pre-shift recalls alone carry it past the end of the
    session, so decay keeps it whether or not it is retrieved after the shift (``task_rate`` 0:
    no task after the shift)."""
    world = replace(GovernanceWorld(), task_rate=0.0)
    for seed in range(200):
        session = generate_governance_session(world, seed)
        stale = decay_fact_states(session)[STALE]
        assert stale.evicted_turn is None, seed
        last_recall = max(t for t in session.task_turns if t < world.shift_turn)
        delay = decay_eviction_delay(stale.stability, DEFAULT_EVICTION_THRESHOLD)
        assert delay is None or last_recall + delay > world.session_length, (seed, last_recall, delay)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.integers(0, 60).map(float), st.floats(0.0, 1e6)),
    st.one_of(st.integers(0, 60).map(float), st.floats(0.0, 1e6), st.just(1.7e308)),
    st.floats(0.0, 1.0),
    st.floats(1.0, 50.0),
    st.floats(0.0, 0.69),
)
def test_the_policies_read_worth_exactly_as_the_validated_formulas(
    positive, negative, prior, min_evidence, low
):
    """The policies' scalar reading of a fact's worth and class is the estimator's own, value for
    value and label for label (no cache, no numpy: the same float operations)."""
    from forgetting.studies.governance.policies import _read_worth
    from forgetting.worth import evidence_volume, memory_worth, worth_class

    rate, label = _read_worth((positive, negative), prior, min_evidence, 0.7, low)
    expected = float(memory_worth(positive, negative, prior=prior))
    assert rate == expected
    if math.isfinite(positive + negative):
        assert label == worth_class(expected, evidence_volume(positive, negative), min_evidence, 0.7, low)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.01, 0.99),
    st.integers(0, 4),
    st.integers(1, 60),
)
def test_noise_is_counted_as_the_engine_would_hold_it(theta: float, per_turn: int, turns: int) -> None:
    """The policies count the never-recalled noise instead of holding it: the count is what a
    decay engine (or, with ``delay=None``, a store that never evicts) holds, before and after each
    turn's step."""
    engine = EbbinghausEngine(eviction_threshold=theta)
    delay = decay_eviction_delay(engine.baseline_stability, engine.eviction_threshold)
    assert engine.untouched_delay() == delay  # what the policies read
    for turn in range(1, turns + 1):
        for j in range(per_turn):
            engine.register(f"noise-{turn}-{j}", "unrelated detail", turn)
        assert engine.working_set_size() == noise_present(turn, per_turn, delay, stepped=False)
        assert per_turn * turn == noise_present(turn, per_turn, None, stepped=False)
        engine.step(turn)
        assert engine.working_set_size() == noise_present(turn, per_turn, delay, stepped=True)
        assert per_turn * turn == noise_present(turn, per_turn, None, stepped=True)


def test_the_policy_names_are_one_enum_whose_values_are_the_published_strings():
    assert [str(p) for p in GovernancePolicy] == [
        "decay",
        "worth",
        "combined",
        "newest",
        "discounted",
        "effect",
        "sequential",
    ]
    assert (*POLICIES, *EVIDENCE_POLICIES, SEQUENTIAL) == ALL_POLICIES == tuple(GovernancePolicy)
    assert [p for p in GovernancePolicy if not p.evicts] == [GovernancePolicy.WORTH]


def test_each_library_rule_is_played_by_one_policy_and_back():
    assert {rule: GovernancePolicy.of_rule(rule) for rule in DeprecationRule} == {
        DeprecationRule.WORTH: GovernancePolicy.COMBINED,
        DeprecationRule.DISCOUNTED: GovernancePolicy.DISCOUNTED,
        DeprecationRule.EFFECT: GovernancePolicy.EFFECT,
        DeprecationRule.SEQUENTIAL: GovernancePolicy.SEQUENTIAL,
    }
    assert all(GovernancePolicy.of_rule(rule).rule is rule for rule in DeprecationRule)
    assert [p for p in GovernancePolicy if p.rule is None] == [
        GovernancePolicy.DECAY,
        GovernancePolicy.WORTH,
        GovernancePolicy.NEWEST,
    ]
    assert GovernancePolicy.of_rule("effect") is GovernancePolicy.EFFECT
    with pytest.raises(ValueError, match="rule must be one of 'worth', .*got 'combined'"):
        GovernancePolicy.of_rule("combined")  # a policy's name, not a rule's


def test_a_policy_is_given_as_the_member_or_its_string_and_the_run_carries_the_member():
    session = generate_governance_session(GovernanceWorld(), 3)
    by_name, by_member = (
        run_governance(session, "combined"),
        run_governance(session, GovernancePolicy.COMBINED),
    )
    assert by_name == by_member and by_name.policy is GovernancePolicy.COMBINED
    with pytest.raises(ValueError, match="policy must be one of 'decay', 'worth', .*got 'oracle'"):
        run_governance(session, "oracle")


def test_the_worth_policy_s_store_is_an_engine_that_never_evicts():
    store = NeverEvicting()
    store.register("a", "", 1)
    store.recall("a", 5)
    assert store.step(10**6) == [] and store.is_present("a") and store.untouched_delay() is None
    rules = (DEFAULT_EVICTION_THRESHOLD, 3.0, 0.3, 1.0, 1.96, 0.05)
    _, engine = _play(generate_governance_session(GovernanceWorld(), 0), "worth", rules)
    assert isinstance(engine, NeverEvicting) and engine.present_ids() == [STALE, TRUE]
