"""Questions as retrieval episodes: top-k by rounded score, ties by turn index, suppression, turn roles."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.conversations.question_retrieval import (
    QuestionSet,
    hits,
    question_indices_of,
    retrieve,
    turn_roles,
)
from question_fixtures import direct_retrieve, question_sets


def test_retrieval_ranks_by_score_then_lower_index_and_skips_suppressed_turns():
    row = [0.2, 0.5, 0.2, 0.9, 0.5]
    assert retrieve(row, 3).tolist() == [3, 1, 4]  # 1 and 4 tie at 0.5: the lower index first
    assert retrieve(row, 5).tolist() == [3, 1, 4, 0, 2]
    assert retrieve(row, 3, suppressed=[1, 3]).tolist() == [4, 0, 2]
    assert retrieve(row, 3, suppressed=np.array([False, True, False, True, False])).tolist() == [4, 0, 2]


def test_k_larger_than_the_store_retrieves_every_candidate_and_a_fully_suppressed_store_nothing():
    assert retrieve([0.1, 0.3], 10).tolist() == [1, 0]
    assert retrieve([0.1, 0.3], 10, suppressed={0}).tolist() == [1]
    assert retrieve([0.1, 0.3], 1, suppressed=[0, 1]).tolist() == []
    qs = QuestionSet("c", np.array([[0.1, 0.3]]), (frozenset({0}),))
    assert hits(qs, 10).tolist() == [True]
    assert hits(qs, 10, suppressed=[0, 1]).tolist() == [False]


def test_suppressing_a_turn_can_turn_a_miss_into_a_hit_and_a_hit_into_a_miss():
    scores = np.array([[0.9, 0.8, 0.1], [0.9, 0.8, 0.1]])
    qs = QuestionSet("c", scores, (frozenset({1}), frozenset({0})))
    assert hits(qs, 1).tolist() == [False, True]
    assert hits(qs, 1, suppressed=[0]).tolist() == [True, False]  # turn 1 moves up; turn 0 is gone
    assert hits(qs, 2, suppressed=[0]).tolist() == [True, False]


def test_equal_scores_go_to_the_lower_turn_index_in_hits():
    qs = QuestionSet("c", np.array([[0.5, 0.5, 0.5]]), (frozenset({2}),))
    assert hits(qs, 2).tolist() == [False]  # turns 0 and 1 come first
    assert hits(qs, 2, suppressed=[1]).tolist() == [True]


@settings(max_examples=150, deadline=None)
@given(question_sets(), st.integers(1, 8), st.data())
def test_hits_and_retrieve_agree_with_a_direct_reading(qs, k, data):
    suppressed = data.draw(st.sets(st.integers(0, qs.n_turns - 1)))
    expected = []
    for i, row in enumerate(qs.scores.tolist()):
        top = direct_retrieve(row, k, suppressed)
        assert retrieve(row, k, suppressed).tolist() == top
        expected.append(any(t in qs.evidence[i] for t in top))
    assert hits(qs, k, suppressed).tolist() == expected
    mask = np.isin(np.arange(qs.n_turns), sorted(suppressed))
    assert hits(qs, k, mask).tolist() == expected


@settings(max_examples=150, deadline=None)
@given(question_sets(), st.integers(1, 8), st.data())
def test_turn_roles_agree_with_a_direct_reading(qs, k, data):
    index = data.draw(st.lists(st.integers(0, qs.n_questions - 1), unique=True))
    retrieved, co, failures = np.zeros((3, qs.n_turns), dtype=int)
    for i in index:
        top = direct_retrieve(qs.scores[i].tolist(), k)
        success = any(t in qs.evidence[i] for t in top)
        for t in top:
            retrieved[t] += 1
            failures[t] += not success
            co[t] += success and t not in qs.evidence[i]
    roles = turn_roles(qs, index, k)
    assert roles.retrieved.tolist() == retrieved.tolist()
    assert roles.co_retrieved.tolist() == co.tolist()
    assert roles.failures.tolist() == failures.tolist()
    assert roles.evidence.tolist() == [any(t in e for e in qs.evidence) for t in range(qs.n_turns)]
    never = ~roles.evidence
    enough = roles.retrieved >= 2
    assert roles.hitchhikers(2, 0.5).tolist() == (never & enough & (2 * co >= retrieved)).tolist()
    assert roles.distractors(2).tolist() == (never & enough & (2 * failures > retrieved)).tolist()


def test_a_turn_that_rides_beside_evidence_is_a_hitchhiker_and_one_retrieved_in_failures_a_distractor():
    # turn 0 is evidence of q0 and q1, turn 1 ranks next to it; turn 2 tops q2 and q3, whose evidence is turn 3
    scores = np.array(
        [[0.9, 0.8, 0.0, 0.1], [0.9, 0.8, 0.0, 0.1], [0.0, 0.1, 0.9, 0.2], [0.0, 0.1, 0.9, 0.2]]
    )
    evidence = (frozenset({0}), frozenset({0}), frozenset({3}), frozenset({3}))
    roles = turn_roles(QuestionSet("c", scores, evidence), [0, 1, 2, 3], 2)
    assert roles.retrieved.tolist() == [2, 2, 2, 2]
    assert roles.co_retrieved.tolist() == [0, 2, 2, 0]  # turn 2 rides beside turn 3 in q2 and q3
    assert roles.hitchhikers(2).tolist() == [False, True, True, False]
    k1 = turn_roles(QuestionSet("c", scores, evidence), [0, 1, 2, 3], 1)
    assert k1.distractors(2).tolist() == [
        False,
        False,
        True,
        False,
    ]  # at k = 1, q2 and q3 retrieve only turn 2


def test_a_question_set_stores_a_read_only_float_copy_and_plain_int_evidence():
    raw = np.array([[1, 0]])
    qs = QuestionSet("c", raw, (frozenset({np.int64(1)}),))
    assert qs.scores.dtype == np.float64 and not qs.scores.flags.writeable
    assert qs.evidence == (frozenset({1}),) and type(next(iter(qs.evidence[0]))) is int
    raw[0, 0] = 0
    assert qs.scores[0, 0] == 1.0
    assert (qs.n_questions, qs.n_turns) == (1, 2)


@pytest.mark.parametrize(
    ("name", "scores", "evidence", "message"),
    [
        ("", np.zeros((1, 2)), (frozenset({0}),), r"name must be a non-empty str, got ''"),
        ("c", [[0.0, 0.1]], (frozenset({0}),), r"scores must be a non-empty 2-d numpy array .* got list"),
        ("c", np.zeros(3), (frozenset({0}),), r"scores must be .*2-d.* shape \(3,\)"),
        ("c", np.zeros((0, 3)), (), r"scores must be a non-empty 2-d"),
        ("c", np.array([[0.0, np.nan]]), (frozenset({0}),), r"scores must be finite cosines in \[-1, 1\]"),
        ("c", np.array([[0.0, 1.5]]), (frozenset({0}),), r"scores must be finite cosines in \[-1, 1\]"),
        ("c", np.array([[0.0, 0.1234]]), (frozenset({0}),), r"scores must be rounded to 3 decimals"),
        ("c", np.zeros((2, 2)), (frozenset({0}),), r"evidence must be a tuple of 2 frozensets"),
        ("c", np.zeros((1, 2)), [frozenset({0})], r"evidence must be a tuple of 1 frozensets"),
        (
            "c",
            np.zeros((1, 2)),
            (frozenset(),),
            r"evidence must hold a non-empty frozenset .*\(questions \[0\]\)",
        ),
        ("c", np.zeros((1, 2)), (frozenset({2}),), r"turn indices in \[0, 2\).*frozenset\(\{2\}\)"),
        ("c", np.zeros((1, 2)), ({0},), r"evidence must hold a non-empty frozenset"),
        ("c", np.zeros((1, 2)), (frozenset({True}),), r"evidence must hold a non-empty frozenset"),
    ],
)
def test_a_bad_question_set_is_refused_with_a_message(name, scores, evidence, message):
    with pytest.raises(ValueError, match=message):
        QuestionSet(name, scores, evidence)


def test_every_problem_of_a_question_set_is_reported_at_once():
    with pytest.raises(ValueError, match=r"name must be .*; scores must be rounded.*; evidence must hold"):
        QuestionSet("", np.array([[0.0001]]), (frozenset({5}),))


@given(
    st.lists(st.integers(-2, 6), max_size=8),
    st.sampled_from([np.int64, np.int8, np.uint16, np.uint64]),
)
def test_question_indices_as_an_int_array_are_checked_as_item_by_item(values, dtype):
    qs = QuestionSet("c", np.zeros((5, 2)), tuple(frozenset({0}) for _ in range(5)))
    array = np.array([v % 10 for v in values] if dtype in (np.uint16, np.uint64) else values, dtype=dtype)

    def read(indices):
        try:
            found = question_indices_of(qs, indices)
        except ValueError:
            return "refused"
        assert found.dtype == np.int64
        return found.tolist()

    items = array.tolist()
    direct = items if len(set(items)) == len(items) and all(0 <= i < 5 for i in items) else "refused"
    assert read(array) == direct == read(list(array))  # a list is checked item by item


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda qs: retrieve([0.1, 0.2], 0), r"k must be an int >= 1, got 0"),
        (lambda qs: retrieve([0.1, 0.2], True), r"k must be an int >= 1, got True"),
        (lambda qs: retrieve([[0.1]], 1), r"scores_row must be a 1-d sequence of finite real numbers"),
        (lambda qs: retrieve([0.1, np.inf], 1), r"scores_row must be a 1-d sequence of finite real numbers"),
        (
            lambda qs: retrieve([0.1, 0.2], 1, suppressed=[2]),
            r"suppressed must be None, .* in \[0, 2\), got \[2\]",
        ),
        (lambda qs: retrieve([0.1, 0.2], 1, suppressed="0"), r"suppressed must be None"),
        (lambda qs: retrieve([0.1, 0.2], 1, suppressed=3), r"suppressed must be None, .* got 3"),
        (
            lambda qs: hits(qs, 1, np.array([True])),
            r"suppressed as a boolean mask must have shape \(2,\), got \(1,\)",
        ),
        (lambda qs: hits(qs, 1.0), r"k must be an int >= 1, got 1.0"),
        (
            lambda qs: turn_roles(qs, [0, 0], 1),
            r"question_indices must be distinct question indices in \[0, 1\)",
        ),
        (lambda qs: turn_roles(qs, [1], 1), r"question_indices must be distinct .* got \[1\]"),
        (lambda qs: turn_roles(qs, 0, 1), r"question_indices must be distinct .* got 0"),
        (lambda qs: turn_roles(qs, [0], 1).hitchhikers(0), r"min_retrievals must be an int >= 1, got 0"),
        (
            lambda qs: turn_roles(qs, [0], 1).hitchhikers(1, 1.5),
            r"co_share must be a real number in \[0, 1\]",
        ),
        (lambda qs: turn_roles(qs, [0], 1).distractors(2.0), r"min_retrievals must be an int >= 1, got 2.0"),
    ],
)
def test_bad_arguments_are_refused_with_a_message(call, message):
    qs = QuestionSet("c", np.array([[0.1, 0.2]]), (frozenset({0}),))
    with pytest.raises(ValueError, match=message):
        call(qs)
