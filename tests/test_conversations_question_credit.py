"""A turn's exact effect on LoCoMo-style questions and randomized omission, against direct readings."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.conversations.question_credit import (
    RULES,
    effect_counts,
    omission_draws,
    omitted_episodes,
    question_credit,
    turn_effects,
)
from forgetting.studies.conversations.question_retrieval import QuestionSet
from forgetting.studies.conversations.question_study import credit_results
from forgetting.studies.conversations.question_worth import held_out, learn_worth, question_split
from question_fixtures import direct_retrieve, question_sets


def direct_hit(qs, i, k, suppressed=()):
    return any(t in qs.evidence[i] for t in direct_retrieve(qs.scores[i].tolist(), k, suppressed))


@settings(max_examples=150, deadline=None)
@given(question_sets(), st.integers(1, 8))
def test_the_exact_effect_is_the_hit_minus_the_hit_with_the_turn_withheld(qs, k):
    effects = turn_effects(qs, k)
    for q in range(qs.n_questions):
        top = direct_retrieve(qs.scores[q].tolist(), k)
        assert effects.retrieved[q].tolist() == top
        assert effects.hit[q] == direct_hit(qs, q, k)
        assert effects.delta[q].tolist() == [direct_hit(qs, q, k) - direct_hit(qs, q, k, {t}) for t in top]
        rest = direct_retrieve(qs.scores[q].tolist(), k + 1)
        assert effects.replacement[q] == (rest[k] if len(rest) > k else -1)


@settings(max_examples=60, deadline=None)
@given(question_sets(), st.integers(1, 4))
def test_effect_counts_are_the_retrievals_helps_and_crowd_outs_of_each_turn(qs, k):
    retrieved, helps, crowds = effect_counts(qs, k)
    for t in range(qs.n_turns):
        asked = [q for q in range(qs.n_questions) if t in direct_retrieve(qs.scores[q].tolist(), k)]
        deltas = [direct_hit(qs, q, k) - direct_hit(qs, q, k, {t}) for q in asked]
        assert (retrieved[t], helps[t], crowds[t]) == (len(asked), deltas.count(1), deltas.count(-1))


def test_a_turn_ranked_above_the_evidence_crowds_it_out_and_the_evidence_helps():
    # k = 1: turn 0 outranks the evidence turn 1; withholding turn 0 lets turn 1 in
    qs = QuestionSet("c", np.array([[0.9, 0.5, 0.1], [0.1, 0.9, 0.5]]), (frozenset({1}), frozenset({1})))
    effects = turn_effects(qs, 1)
    assert effects.delta.tolist() == [[-1], [1]]
    assert [c.tolist() for c in effect_counts(qs, 1)] == [[1, 1, 0], [0, 1, 0], [1, 0, 0]]
    assert [c.tolist() for c in effect_counts(qs, 1, [0])] == [[1, 0, 0], [0, 0, 0], [1, 0, 0]]


@settings(max_examples=60, deadline=None)
@given(question_sets(min_questions=2), st.integers(1, 4), st.integers(0, 50))
def test_without_omission_the_episodes_are_the_plain_ones_and_memory_worth_is_learn_worth(qs, k, seed):
    train, _ = question_split(qs.n_questions, 0.5, seed, 0, 0)
    seen = omitted_episodes(
        turn_effects(qs, k), train, omission_draws(qs.n_questions, seed, 0, 0), 0.0, qs.n_turns
    )
    plus, minus = learn_worth(qs, train, k)
    assert seen.slot.tolist() == [-1] * train.size and (seen.lost, seen.gained) == (0, 0)
    assert seen.h_plus.tolist() == plus.tolist() and seen.h_minus.tolist() == minus.tolist()
    assert np.all(np.isnan(seen.effects.effect))


@settings(max_examples=60, deadline=None)
@given(question_sets(min_questions=2), st.integers(1, 4), st.integers(0, 50))
def test_every_episode_withholds_at_rate_one_and_is_scored_as_retrieval_without_that_turn(qs, k, seed):
    train, _ = question_split(qs.n_questions, 0.5, seed, 1, 2)
    draws = omission_draws(qs.n_questions, seed, 1, 2)
    effects = turn_effects(qs, k)
    seen = omitted_episodes(effects, train, draws, 1.0, qs.n_turns)
    plus, minus = np.zeros(qs.n_turns), np.zeros(qs.n_turns)
    lost = gained = 0
    for row, q in enumerate(train.tolist()):
        top = direct_retrieve(qs.scores[q].tolist(), k)
        column = int(draws[q, 1] * len(top))
        gone = top[column]
        observed = direct_retrieve(qs.scores[q].tolist(), k, {gone})
        hit = any(t in qs.evidence[q] for t in observed)
        assert seen.slot[row] == column and seen.hit[row] == hit
        (plus if hit else minus)[observed] += 1
        lost += direct_hit(qs, q, k) and not hit
        gained += hit and not direct_hit(qs, q, k)
    assert seen.h_plus.tolist() == plus.tolist() and seen.h_minus.tolist() == minus.tolist()
    assert (seen.lost, seen.gained) == (lost, gained)


def test_the_draws_are_one_row_per_question_shared_by_every_rate():
    draws = omission_draws(6, 3, 4, 5)
    expected = np.random.default_rng(np.random.SeedSequence([3, 4, 5, 1])).random((6, 2))
    assert draws.tolist() == expected.tolist()
    qs = QuestionSet("c", np.array([[0.9, 0.5, 0.1, 0.0]] * 6), (frozenset({1}),) * 6)
    train = np.arange(6)
    withheld = [omitted_episodes(turn_effects(qs, 2), train, draws, e, 4).slot >= 0 for e in (0.2, 0.5, 0.9)]
    assert np.all(withheld[0] <= withheld[1]) and np.all(withheld[1] <= withheld[2])


def test_the_omission_estimate_averages_to_the_turns_mean_exact_effect():
    # turn 0 ranks first everywhere; it crowds out the evidence on 12 questions, is harmless on 8
    rows = [[0.9, 0.5, 0.1]] * 20
    evidence = (frozenset({1}),) * 12 + (frozenset({0, 1}),) * 8
    qs = QuestionSet("c", np.array(rows), evidence)
    effects = turn_effects(qs, 1)
    exact = effects.delta[:, 0].mean()
    assert exact == pytest.approx(-0.6)
    rng = np.random.default_rng(11)
    estimates = []
    for _ in range(3000):
        seen = omitted_episodes(effects, np.arange(20), rng.random((20, 2)), 0.5, 3)
        if not np.isnan(seen.effects.effect[0]):
            estimates.append(seen.effects.effect[0])
    estimates = np.array(estimates)
    assert abs(estimates.mean() - exact) < 4 * estimates.std() / np.sqrt(estimates.size)


def test_at_no_omission_memory_worths_rule_is_held_outs_and_the_train_oracle_ignores_the_rate():
    rng = np.random.default_rng(5)
    sets = []
    for c in range(3):
        scores = np.round(rng.random((12, 9)), 2)
        sets.append(QuestionSet(f"c{c}", scores, tuple(frozenset({int(rng.integers(9))}) for _ in range(12))))
    rows = question_credit(sets, 2, [0.0, 0.5], 0.5, 4, seed=3, min_evidence=2.0)
    assert [(r.rule, r.epsilon) for r in rows] == [(rule, e) for e in (0.0, 0.5) for rule in RULES]
    plain = held_out(sets, 2, 0.5, 4, 3, 2.0)
    worth = rows[0]
    assert worth.n_flagged.tolist() == plain.n_flagged.tolist()
    assert (
        worth.gained_test.tolist() == plain.gained.tolist()
        and worth.lost_test.tolist() == plain.lost.tolist()
    )
    assert worth.lost.tolist() == [0] * 4 and rows[1].gained.tolist() == [0] * 4
    oracle = [r for r in rows if r.rule == "exact on train"]
    assert oracle[0].n_flagged.tolist() == oracle[1].n_flagged.tolist()
    assert oracle[0].difference.tolist() == oracle[1].difference.tolist()
    assert oracle[1].lost.tolist() == [0] * 4
    assert rows[4].lost.sum() + rows[4].gained.sum() > 0  # omission at 0.5 withholds something
    summary = rows[4].summary()
    assert summary["train hits lost"] == rows[4].lost.sum() / rows[4].n_train.sum()
    assert summary["mean_difference"] == pytest.approx(rows[4].difference.mean())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: question_credit([], 1, [0.0]), r"question_sets must be a non-empty list"),
        (lambda: question_credit([_one()], 1, []), r"epsilons must be a non-empty list of distinct rates"),
        (lambda: question_credit([_one()], 1, [0.1, 0.1]), r"epsilons must be .*distinct.*got \[0.1, 0.1\]"),
        (lambda: question_credit([_one()], 0, [1.5]), r"k must be an int >= 1, got 0; epsilons must"),
        (lambda: turn_effects(_one(), 0), r"k must be an int >= 1, got 0"),
        (lambda: effect_counts(_one(), 1, [0, 0]), r"question_indices must be distinct question indices"),
    ],
)
def test_bad_arguments_are_refused_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _one():
    return QuestionSet("c", np.array([[0.9, 0.1], [0.2, 0.8]]), (frozenset({0}), frozenset({1})))


def test_the_chapters_credit_values_count_turns_and_misses_and_read_the_rows():
    rng = np.random.default_rng(8)
    sets = [
        QuestionSet(
            f"c{c}",
            np.round(rng.random((10, 8)), 2),
            tuple(frozenset({int(rng.integers(8))}) for _ in range(10)),
        )
        for c in range(2)
    ]
    params = dict(question_k=2, credit_epsilons=[0.0, 0.5], mw_train_share=0.5, mw_splits=3, seed=1,
                  mw_min_evidence=2.0, mw_low_threshold=0.3)  # fmt: skip
    values, tables = credit_results(sets, params)
    rows = tables["credit"]
    assert [(r["rule"], r["epsilon"]) for r in rows] == [(rule, e) for e in (0.0, 0.5) for rule in RULES]
    assert values["credit_mw_none_difference"] == rows[0]["mean_difference"]
    assert values["credit_omission_max_lost"] == rows[4]["train hits lost"]
    assert values["credit_oracle_max_flagged"] == rows[5]["flagged (mean)"]
    retrieved = helping = misses = fixable = 0
    for qs in sets:
        for q in range(qs.n_questions):
            row = qs.scores[q].tolist()
            top, rest = direct_retrieve(row, 2), direct_retrieve(row, 3)
            hit = any(t in qs.evidence[q] for t in top)
            misses += not hit
            fixable += not hit and rest[2] in qs.evidence[q]
        counts = effect_counts(qs, 2)
        retrieved += int((counts[0] > 0).sum())
        helping += int((counts[1] > 0).sum())
    assert (values["credit_retrieved"], values["credit_helping"]) == (retrieved, helping)
    assert (values["credit_misses"], values["credit_misses_fixable"]) == (misses, fixable)
