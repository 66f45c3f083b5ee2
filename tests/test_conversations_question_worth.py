"""Memory Worth learned on some questions and used on held-out ones, against a direct reading with MemoryWorth."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.conversations.question_retrieval import QuestionSet
from forgetting.studies.conversations.question_worth import (
    HeldOut,
    flag_low_value,
    flag_report,
    held_out,
    learn_worth,
    question_split,
)
from forgetting.worth import MemoryWorth
from question_fixtures import direct_retrieve, question_sets

FIELDS = ("n_test", "plain_hits", "suppressed_hits", "n_flagged", "gained", "lost")


def direct_split(n, share, seed, split, conversation):
    """The seed scheme as the brief states it: SeedSequence([seed, split, conversation]), a permutation."""
    order = np.random.default_rng(np.random.SeedSequence([seed, split, conversation])).permutation(n)
    n_train = min(max(round(share * n), 1), n - 1)
    return sorted(order[:n_train].tolist()), sorted(order[n_train:].tolist())


def direct_hit(qs, i, k, suppressed=()):
    return any(t in qs.evidence[i] for t in direct_retrieve(qs.scores[i].tolist(), k, suppressed))


def direct_worth(qs, questions, k, min_evidence=5.0, low_threshold=0.3):
    """MemoryWorth updated episode by episode, in the order given."""
    mw = MemoryWorth(min_evidence=min_evidence, low_threshold=low_threshold)
    for i in questions:
        top = direct_retrieve(qs.scores[i].tolist(), k)
        mw.update(top, any(t in qs.evidence[i] for t in top))
    return mw


def direct_run(qs, conversation, split, k, share, seed, min_evidence, low_threshold):
    """One conversation in one split, read off the definitions: the six counts of HeldOut and the flags."""
    train, test = direct_split(qs.n_questions, share, seed, split, conversation)
    mw = direct_worth(qs, train, k, min_evidence, low_threshold)
    flagged = {t for t in range(qs.n_turns) if mw.classify(t) == "low-value"}
    plain = [direct_hit(qs, i, k) for i in test]
    cut = [direct_hit(qs, i, k, flagged) for i in test]
    counts = np.array(
        [
            len(test),
            sum(plain),
            sum(cut),
            len(flagged),
            sum(c and not p for p, c in zip(plain, cut)),
            sum(p and not c for p, c in zip(plain, cut)),
        ]
    )
    return counts, train, test, mw, flagged


def direct_held_out(sets, k, share, n_splits, seed, min_evidence, low_threshold, first=0):
    table = np.zeros((n_splits, 6), dtype=int)
    for s in range(n_splits):
        for c, qs in enumerate(sets, start=first):
            table[s] += direct_run(qs, c, s, k, share, seed, min_evidence, low_threshold)[0]
    return table


def table_of(result):
    return np.column_stack([getattr(result, name) for name in FIELDS])


@settings(max_examples=120, deadline=None)
@given(question_sets(), st.integers(1, 8), st.data())
def test_learned_counters_are_memory_worth_updated_episode_by_episode(qs, k, data):
    index = data.draw(st.permutations(range(qs.n_questions)).flatmap(lambda p: st.just(p[: len(p) // 2 + 1])))
    h_plus, h_minus = learn_worth(qs, index, k)
    mw = direct_worth(qs, index, k)
    assert h_plus.dtype == h_minus.dtype == np.float64
    assert [(float(p), float(m)) for p, m in zip(h_plus, h_minus)] == [
        mw.counters(t) for t in range(qs.n_turns)
    ]
    assert learn_worth(qs, [], k)[0].tolist() == [0.0] * qs.n_turns


def test_flags_are_the_taxonomys_low_value_class_at_its_boundaries():
    h_plus = [3, 4, 1, 0, 0, 3]
    h_minus = [7, 6, 3, 5, 4, 2]
    # 3/10 is at the threshold (low-value); 4/10 above; evidence 4 < 5 uncertain; 0/5 low; 0/4 uncertain
    assert flag_low_value(h_plus, h_minus).tolist() == [True, False, False, True, False, False]
    assert flag_low_value(h_plus, h_minus, min_evidence=4).tolist() == [True, False, True, True, True, False]
    assert flag_low_value(h_plus, h_minus, low_threshold=0.6).tolist() == [
        True,
        True,
        False,
        True,
        False,
        True,
    ]
    # never retrieved: worth is the prior 0.5, uncertain unless min_evidence is 0
    assert flag_low_value([0], [0], min_evidence=0, low_threshold=0.5).tolist() == [True]
    assert flag_low_value([0], [0], min_evidence=0, low_threshold=0.3).tolist() == [False]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=1, max_size=10),
    st.sampled_from([0.0, 1.0, 5.0, 7.0]),
    st.sampled_from([0.0, 0.25, 0.3, 0.5, 0.6]),
)
def test_flags_agree_with_memory_worth_classify(counters, min_evidence, low_threshold):
    mw = MemoryWorth(min_evidence=min_evidence, low_threshold=low_threshold)
    for t, (plus, minus) in enumerate(counters):
        for _ in range(plus):
            mw.update([t], True)
        for _ in range(minus):
            mw.update([t], False)
    expected = [mw.classify(t) == "low-value" for t in range(len(counters))]
    h_plus, h_minus = (np.array(c, dtype=float) for c in zip(*counters))
    assert flag_low_value(h_plus, h_minus, min_evidence, low_threshold).tolist() == expected


@settings(max_examples=100, deadline=None)
@given(
    st.integers(2, 40), st.floats(0.01, 0.99), st.integers(0, 2**32), st.integers(0, 50), st.integers(0, 20)
)
def test_a_split_is_the_seed_schemes_permutation_cut_at_the_rounded_share(
    n, share, seed, split, conversation
):
    train, test = question_split(n, share, seed, split, conversation)
    assert (train.tolist(), test.tolist()) == direct_split(n, share, seed, split, conversation)
    assert 1 <= train.size <= n - 1 and sorted(train.tolist() + test.tolist()) == list(range(n))


def test_the_train_size_rounds_half_to_even_and_keeps_one_question_on_each_side():
    assert question_split(5, 0.5, 0, 0, 0)[0].size == 2  # round(2.5) == 2
    assert question_split(7, 0.5, 0, 0, 0)[0].size == 4  # round(3.5) == 4
    assert question_split(3, 0.01, 0, 0, 0)[0].size == 1
    assert question_split(3, 0.99, 0, 0, 0)[0].size == 2


@settings(max_examples=40, deadline=None)
@given(
    st.lists(question_sets(min_questions=2), min_size=1, max_size=3),
    st.integers(1, 5),
    st.sampled_from([0.3, 0.5, 0.7]),
    st.integers(1, 3),
    st.integers(0, 1000),
    st.sampled_from([0.0, 1.0, 2.0, 5.0]),
    st.sampled_from([0.0, 0.3, 0.5]),
)
def test_held_out_agrees_with_a_direct_reading(sets, k, share, n_splits, seed, min_evidence, low_threshold):
    result = held_out(sets, k, share, n_splits, seed, min_evidence, low_threshold)
    expected = direct_held_out(sets, k, share, n_splits, seed, min_evidence, low_threshold)
    assert table_of(result).tolist() == expected.tolist()
    assert result.plain.tolist() == (expected[:, 1] / expected[:, 0]).tolist()
    assert result.difference.tolist() == ((expected[:, 4] - expected[:, 5]) / expected[:, 0]).tolist()
    assert np.all(result.suppressed_hits - result.plain_hits == result.gained - result.lost)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(question_sets(min_questions=2), min_size=2, max_size=3), st.integers(1, 4), st.integers(0, 99)
)
def test_a_split_depends_neither_on_the_number_of_splits_nor_on_the_other_conversations(sets, k, seed):
    arguments = dict(train_share=0.5, seed=seed, min_evidence=1.0, low_threshold=0.3)
    short, long = (table_of(held_out(sets, k, n_splits=n, **arguments)) for n in (5, 10))
    assert short.tolist() == long[:5].tolist()
    # the first conversations' part is the same whatever comes after them (position c is in the seed)
    alone = table_of(held_out(sets[:1], k, n_splits=5, **arguments))
    rest = direct_held_out(sets[1:], k, 0.5, 5, seed, 1.0, 0.3, first=1)
    assert (short - rest).tolist() == alone.tolist()


def test_suppressing_a_turn_learned_to_fail_gains_every_held_out_question():
    # four identical questions: turn 0 ranks first and is never evidence, turn 1 is the evidence
    qs = QuestionSet("c", np.array([[0.9, 0.5, 0.1]] * 4), (frozenset({1}),) * 4)
    result = held_out([qs], 1, 0.5, 3, seed=7, min_evidence=2)
    assert table_of(result).tolist() == [[2, 0, 2, 1, 2, 0]] * 3
    assert result.summary() == {
        "n_splits": 3.0,
        "mean_difference": 1.0,
        "low": 1.0,
        "high": 1.0,
        "share_better": 1.0,
        "share_worse": 0.0,
        "share_same": 0.0,
    }
    report = flag_report([qs], 1, 0.5, 3, seed=7, min_evidence=2, min_retrievals=2)
    assert (report.n_flagged, report.evidence_of_test, report.hitchhikers, report.distractors) == (3, 0, 0, 3)
    assert report.n_worth == {"hitchhiker": 0, "evidence": 0, "other": 3}
    assert report.mean_worth["other"] == 0.0 and math.isnan(report.mean_worth["evidence"])


def test_k_larger_than_the_store_makes_every_episode_a_success_and_flags_nothing():
    qs = QuestionSet(
        "c", np.array([[0.9, 0.5, 0.1]] * 4), (frozenset({1}), frozenset({2}), frozenset({0}), frozenset({1}))
    )
    result = held_out([qs], 10, n_splits=4, min_evidence=1)
    assert result.n_flagged.tolist() == [0] * 4 and result.difference.tolist() == [0.0] * 4
    assert result.summary()["share_same"] == 1.0


def test_the_summary_is_the_mean_percentiles_and_shares_of_the_split_differences():
    n = np.array([10, 10, 10, 10])
    result = HeldOut(
        n,
        np.array([5, 5, 5, 5]),
        np.array([6, 5, 4, 7]),
        n * 0,
        np.array([1, 1, 0, 2]),
        np.array([0, 1, 1, 0]),
    )
    assert result.difference.tolist() == [0.1, 0.0, -0.1, 0.2]
    summary = result.summary()
    assert summary["mean_difference"] == pytest.approx(0.05)
    assert (summary["low"], summary["high"]) == tuple(np.percentile([0.1, 0.0, -0.1, 0.2], [2.5, 97.5]))
    assert (summary["share_better"], summary["share_worse"], summary["share_same"]) == (0.5, 0.25, 0.25)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(question_sets(min_questions=2), min_size=1, max_size=3), st.integers(1, 4), st.integers(0, 99)
)
def test_flag_report_agrees_with_a_direct_reading(sets, k, seed):
    args = dict(train_share=0.5, n_splits=3, seed=seed, min_evidence=1.0, low_threshold=0.5)
    report = flag_report(sets, k, **args, min_retrievals=1, co_share=0.5)
    counts, worth = np.zeros(4, dtype=int), {"hitchhiker": [], "evidence": [], "other": []}
    for s in range(3):
        for c, qs in enumerate(sets):
            _, _, test, mw, flagged = direct_run(qs, c, s, k, 0.5, seed, 1.0, 0.5)
            retrieved, co, fail = ({t: 0 for t in range(qs.n_turns)} for _ in range(3))
            for i in test:
                top = direct_retrieve(qs.scores[i].tolist(), k)
                hit = any(t in qs.evidence[i] for t in top)
                for t in top:
                    retrieved[t] += 1
                    co[t] += hit and t not in qs.evidence[i]
                    fail[t] += not hit
            ever = {t for e in qs.evidence for t in e}
            hitch = {
                t for t in retrieved if t not in ever and retrieved[t] >= 1 and 2 * co[t] >= retrieved[t]
            }
            distract = {
                t for t in retrieved if t not in ever and retrieved[t] >= 1 and 2 * fail[t] > retrieved[t]
            }
            test_evidence = {t for i in test for t in qs.evidence[i]}
            counts += [
                len(flagged),
                len(flagged & test_evidence),
                len(flagged & hitch),
                len(flagged & distract),
            ]
            for t in range(qs.n_turns):
                if mw.evidence(t) >= 1.0:
                    group = "hitchhiker" if t in hitch else "evidence" if t in ever else "other"
                    worth[group].append(mw.worth(t))
    assert [
        report.n_flagged,
        report.evidence_of_test,
        report.hitchhikers,
        report.distractors,
    ] == counts.tolist()
    assert report.n_flagged == held_out(sets, k, **args).n_flagged.sum()
    assert report.n_worth == {g: len(v) for g, v in worth.items()}
    for group, values in worth.items():
        assert report.mean_worth[group] == pytest.approx(
            math.fsum(values) / len(values) if values else math.nan, nan_ok=True
        )


def one_set(n_questions=2):
    return QuestionSet("c", np.array([[0.1, 0.2]] * n_questions), (frozenset({0}),) * n_questions)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: held_out([one_set()], 0), r"k must be an int >= 1, got 0"),
        (
            lambda: held_out([one_set()], 1, train_share=1.0),
            r"train_share must be a real number in \(0, 1\), got 1.0",
        ),
        (lambda: held_out([one_set()], 1, n_splits=0), r"n_splits must be an int >= 1, got 0"),
        (lambda: held_out([one_set()], 1, seed=-1), r"seed must be an int >= 0, got -1"),
        (lambda: held_out([one_set()], 1, low_threshold=0.8), r"low_threshold must be < high_threshold"),
        (
            lambda: held_out([one_set()], 1, min_evidence=-1),
            r"min_evidence must be a finite real number >= 0",
        ),
        (lambda: held_out([], 1), r"question_sets must be a non-empty list or tuple of QuestionSets"),
        (lambda: held_out([one_set(1)], 1), r"QuestionSets with >= 2 questions each"),
        (lambda: held_out(one_set(), 1), r"question_sets must be a non-empty list or tuple"),
        (lambda: held_out([one_set()], 0, n_splits=0, seed=-1), r"k must .*; n_splits must .*; seed must"),
        (
            lambda: flag_report([one_set()], 1, min_retrievals=0, co_share=2),
            r"min_retrievals must .*; co_share must",
        ),
        (lambda: flag_report([], 1, min_retrievals=0), r"min_retrievals must .*; question_sets must"),
        (
            lambda: learn_worth(one_set(), [0, 0], 1),
            r"question_indices must be distinct question indices in \[0, 2\)",
        ),
        (lambda: learn_worth(one_set(), [0], 0), r"k must be an int >= 1, got 0"),
        (lambda: flag_low_value([1, 2], [1]), r"h_plus and h_minus must have the same length, got 2 and 1"),
        (lambda: flag_low_value([-1], [1]), r"h_plus must be a 1-d array of finite counts >= 0, got \[-1\]"),
        (lambda: flag_low_value([1], [np.nan]), r"h_minus must be a 1-d array of finite counts >= 0"),
        (lambda: flag_low_value([True], [1]), r"h_plus must be a 1-d array"),
        (
            lambda: flag_low_value([1], [1], low_threshold=2),
            r"low_threshold must be a real number in \[0, 1\]",
        ),
        (lambda: question_split(1, 0.5, 0, 0, 0), r"n_questions must be an int >= 2, got 1"),
        (
            lambda: question_split(4, 0.0, 0, -1, 0.5),
            r"train_share must .*; split must .*; conversation must",
        ),
    ],
)
def test_bad_arguments_are_refused_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()
