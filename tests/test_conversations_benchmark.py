"""The real-conversation benchmark: retrieval-driven recall, scoring at the end, embeddings, sweeps.

Runs on the invented fixture (``locomo_fixture.py``) with the real encoder (a dozen texts) and
on hand-made arrays; the real file is used only by the last test, skipped without it.
"""

import json
import os
import zipfile
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation_streams import stream
from forgetting.conversations import KeepAll, Window, load_locomo, locomo_zip, parse_session_time, replay
from forgetting.conversations.capacity import Capacity, RandomEviction
from forgetting.conversations.policies import check_events
from forgetting.conversations.records import session_time_text
from forgetting.conversations.source import LOCOMO_ENV, SHARED_COPY
from forgetting.studies.conversations.benchmark import (
    ADVERSARIAL,
    QuestionIndex,
    QuestionRanking,
    pooled,
    question_index,
    ranked_history,
    recall_events,
    score,
    top_k,
)
from forgetting.studies.conversations.embeddings import (
    ConversationVectors,
    embed_conversations,
    fragile_pairs,
    token_counts,
)
from forgetting.studies.conversations.sweep import (
    SweepTask,
    _score_task,
    policy_grid,
    recall_blind,
    replay_blind,
    run_sweep,
)
from forgetting.studies.executor import InProcess, ProcessPool
from forgetting.text.encoder import get_encoder
from locomo_fixture import write_fixture

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fixture_data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("locomo")
    made = write_fixture(folder / "locomo10.zip")
    conversations = load_locomo(made.path, made.sha256, made.members)
    vectors = embed_conversations(conversations, folder / "embeddings")
    return folder, conversations, vectors


# --- retrieval -------------------------------------------------------------------------------


def test_top_k_breaks_ties_by_the_lower_index_and_respects_the_mask():
    scores = np.array([0.5, 0.9, 0.5, 0.9, 0.1])
    assert top_k(scores, 3).tolist() == [1, 3, 0]
    assert top_k(scores, 2, np.array([True, False, True, False, True])).tolist() == [0, 2]
    assert top_k(scores, 10, np.array([False, False, False, False, True])).tolist() == [4]


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=30), st.integers(1, 40))
def test_top_k_is_the_sorted_direct_reading(values, k):
    scores = np.array(values, dtype=float) / 10
    expected = sorted(range(len(values)), key=lambda i: (-scores[i], i))[:k]
    assert top_k(scores, k).tolist() == expected


def test_ranked_history_lists_earlier_turns_at_or_above_the_minimum_best_first():
    cosines = np.array(
        [
            [1.0, 0.3, 0.5, 0.2],
            [0.3, 1.0, 0.4, 0.4],
            [0.5, 0.4, 1.0, 0.7],
            [0.2, 0.4, 0.7, 1.0],
        ]
    )
    ranked = ranked_history(cosines, 0.3)
    assert [r.tolist() for r in ranked] == [[], [0], [0, 1], [2, 1]]
    assert [r.tolist() for r in ranked_history(cosines, -1.0)][3] == [2, 1, 0]
    with pytest.raises(ValueError, match="min_similarity"):
        ranked_history(cosines, 1.5)


class Recorder:
    """A policy that keeps what a window keeps and records every recall."""

    def __init__(self, window):
        self.window = window
        self.calls = []

    @property
    def label(self):
        return "recorder"

    def start(self):
        inner = Window(window_size=self.window).start()
        calls = self.calls

        class Holder:
            def forget(self, event):
                return inner.forget(event)

            def recall(self, mem_id, event):
                calls.append((event.turn, mem_id))
                inner.recall(mem_id, event)

            def store(self, event):
                return inner.store(event)

        return Holder()


def test_replay_with_k_recalls_the_first_k_held_ids_of_each_ranking():
    ranking = {3: [0, 2, 1], 4: [0, 3, 2, 1], 5: [4, 0, 1, 3]}
    events = stream([0] * 6, ranking)
    recorder = Recorder(window=2)
    result = replay(recorder, events, k=2)
    # direct reading: a window of 2 drops m_j at turn j + 3 unless recalled
    held_before = {}
    last = {}
    expected, missed = [], 0
    for event in events:
        held_before = {m for m, t in last.items() if event.turn - t <= 2}
        order = list(event.recalled)
        missed += sum(m not in held_before for m in order[:2])
        chosen = [m for m in order if m in held_before][:2]
        expected += [(event.turn, m) for m in chosen]
        last = {m: t for m, t in last.items() if m in held_before}
        for m in chosen:
            last[m] = event.turn
        last[event.stored] = event.turn
    assert recorder.calls == expected
    assert result.missed_recalls == missed
    with pytest.raises(ValueError, match="k must be"):
        replay(KeepAll(), events, k=0)


# --- scoring on the fixture --------------------------------------------------------------------


def test_question_index_scores_questions_through_the_evidence_that_names_a_turn(fixture_data):
    _, conversations, _ = fixture_data
    first, second = (question_index(c) for c in conversations)
    assert first.rows.tolist() == [0, 1, 2, 3, 4]
    assert [e.tolist() for e in first.evidence] == [[0, 2], [3], [6], [3], [0]]  # D9:9 names no turn
    assert first.category.tolist() == [1, 2, 3, 4, ADVERSARIAL]
    assert (first.unresolved, first.no_evidence) == (0, 0)
    assert second.rows.size == 0 and second.no_evidence == 1


def test_keeping_everything_keeps_all_evidence_and_changes_no_hit(fixture_data):
    folder, conversations, vectors = fixture_data
    encoder = get_encoder(np.float64)
    conversation, vector = conversations[0], vectors[0]
    index = question_index(conversation)
    tokens = token_counts(conversation, encoder)
    events = recall_events(conversation, ranked_history(vector.turn_cosines, 0.0))
    ranking = QuestionRanking.of(vector.question_cosines, index)
    result = score(conversation, index, ranking, tokens, KeepAll(), events, 2, 1)
    assert (result.evidence, result.evidence_held, result.questions) == (5, 5, 4)
    assert result.hits_held == result.hits_all
    assert (result.turns, result.turns_held, result.tokens_held) == (7, 7, int(tokens.sum()))
    assert (result.adv_questions, result.adv_evidence) == (1, 1)
    shares = pooled([result])
    assert shares["evidence_kept"] == 1.0 and shares["turns_share"] == 1.0


def test_a_short_window_scores_what_a_direct_reading_of_its_held_set_gives(fixture_data):
    _, conversations, vectors = fixture_data
    conversation, vector = conversations[0], vectors[0]
    index = question_index(conversation)
    tokens = np.ones(len(conversation.turns), dtype=np.int64)
    events = recall_events(conversation, ranked_history(vector.turn_cosines, 2.0 - 3.0))
    ranking = QuestionRanking.of(vector.question_cosines, index)
    result = score(conversation, index, ranking, tokens, Window(window_size=1), events, 1, 2)
    held_ids = set(replay(Window(window_size=1), events, k=1).held)
    held = np.array([t.dia_id in held_ids for t in conversation.turns])
    main = [i for i, c in enumerate(index.category) if c != ADVERSARIAL]
    assert result.turns_held == held.sum() == result.tokens_held
    assert result.evidence_held == sum(held[index.evidence[i]].sum() for i in main)
    expected_hits = sum(
        np.isin(top_k(vector.question_cosines[index.rows[i]], 2, held), index.evidence[i]).any() for i in main
    )
    assert result.hits_held == expected_hits
    for question_k in (1, 2, 3):  # hit@k over every turn, the same for every policy
        direct = [
            np.isin(top_k(vector.question_cosines[row], question_k), evidence).any()
            for row, evidence in zip(index.rows, index.evidence)
        ]
        adversarial = index.category == ADVERSARIAL
        found = score(conversation, index, ranking, tokens, Window(window_size=1), events, 1, question_k)
        assert (found.hits_all, found.adv_hits_all) == (
            sum(np.array(direct)[~adversarial]),
            sum(np.array(direct)[adversarial]),
        )


@given(st.lists(st.booleans(), min_size=7, max_size=7), st.integers(1, 8))
def test_ranked_hits_over_a_held_set_are_those_of_top_k(fixture_data, held, k):
    _, conversations, vectors = fixture_data
    index = question_index(conversations[0])
    cosines = vectors[0].question_cosines
    mask = np.array(held)
    found = QuestionRanking.of(cosines, index).hits(k, mask)
    direct = [np.isin(top_k(cosines[row], k, mask), ev).any() for row, ev in zip(index.rows, index.evidence)]
    assert found.tolist() == direct


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.sampled_from([1, 2, 5]), st.data())
def test_ranked_hits_over_a_held_set_are_those_of_top_k_few_held_or_many(n_questions, k, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n_turns = 40
    cosines = np.round(rng.uniform(-1, 1, (n_questions, n_turns)), 1)  # rounded: many ties
    evidence = tuple(np.unique(rng.integers(0, n_turns, rng.integers(1, 4))) for _ in range(n_questions))
    index = QuestionIndex(np.arange(n_questions), evidence, np.ones(n_questions, dtype=int), 0, 0)
    ranking = QuestionRanking.of(cosines, index)
    for share in (0.02, 0.1, 0.3, 0.5, 0.9):  # both readings: a third of the turns held or more
        held = rng.random(n_turns) < share
        direct = [np.isin(top_k(cosines[q], k, held), evidence[q]).any() for q in range(n_questions)]
        assert ranking.hits(k, held).tolist() == direct
        counted = [int(np.isin(top_k(cosines[q], k, held), evidence[q]).sum()) for q in range(n_questions)]
        assert ranking.found(k, held).tolist() == counted
    everything = [int(np.isin(top_k(cosines[q], k), evidence[q]).sum()) for q in range(n_questions)]
    assert ranking.found(k).tolist() == everything
    assert ranking.n_evidence.tolist() == [ev.size for ev in evidence]


def test_recall_and_all_evidence_at_k_are_locomos_share_and_all_of_the_evidence(fixture_data):
    """recall@k: the mean over questions of the share of their evidence turns in the top k
    (LoCoMo's recall_acc), exact; all-evidence@k: every evidence turn in the top k; both over
    what is held and over every turn, read directly from top_k."""
    from fractions import Fraction

    _, conversations, vectors = fixture_data
    conversation, vector = conversations[0], vectors[0]
    index = question_index(conversation)
    tokens = np.ones(len(conversation.turns), dtype=np.int64)
    events = recall_events(conversation, ranked_history(vector.turn_cosines, 0.0))
    ranking = QuestionRanking.of(vector.question_cosines, index)
    held_ids = set(replay(Window(window_size=2), events, k=1).held)
    held = np.array([t.dia_id in held_ids for t in conversation.turns])
    main = [i for i, c in enumerate(index.category) if c != ADVERSARIAL]
    assert any(index.evidence[i].size > 1 for i in main)  # a question where the three measures differ
    for question_k in (1, 2, 3):
        result = score(conversation, index, ranking, tokens, Window(window_size=2), events, 1, question_k)
        for mask, recall, every in ((held, result.recall_held, result.every_held),
                                    (None, result.recall_all, result.every_all)):  # fmt: skip
            found = [np.isin(top_k(vector.question_cosines[index.rows[i]], question_k, mask), index.evidence[i])
                     .sum() for i in main]  # fmt: skip
            assert recall == sum(Fraction(int(f), index.evidence[i].size) for f, i in zip(found, main))
            assert every == sum(int(f) == index.evidence[i].size for f, i in zip(found, main))
        shares = pooled([result, result])
        assert shares["recall_held"] == float(result.recall_held / result.questions)
        assert shares["every_all"] == result.every_all / result.questions
        assert shares["every_held"] <= shares["recall_held"] <= shares["hit_held"]


# --- embeddings -------------------------------------------------------------------------------


def test_embeddings_are_cached_and_do_not_depend_on_the_executor(fixture_data, tmp_path):
    folder, conversations, vectors = fixture_data
    again = embed_conversations(conversations, folder / "embeddings")
    pooled_run = embed_conversations(conversations, tmp_path / "cold", ProcessPool(2))
    for a, b, c in zip(vectors, again, pooled_run):
        assert a.turns.dtype == np.float64
        assert np.array_equal(a.turns, b.turns) and np.array_equal(a.turns, c.turns)
        assert np.array_equal(a.question_cosines, c.question_cosines)
        assert np.array_equal(a.turn_cosines, np.round(a.turn_cosines, 3))


def test_fragile_pairs_counts_the_cosines_near_a_rounding_boundary():
    # unit vectors in the plane with cosines chosen next to (and far from) a boundary
    angles = np.arccos([1.0, 0.50049, 0.2502])
    turns = np.zeros((3, 384))
    turns[:, 0], turns[:, 1] = np.cos(angles), np.sin(angles)
    vectors = ConversationVectors(
        "x", turns, turns[:1], np.round(turns @ turns.T, 3), np.round(turns[:1] @ turns.T, 3)
    )
    assert fragile_pairs(vectors, relative=1e-12) == (0, 0)
    # a tolerance of 2e-4 reaches the boundary 0.5005 from 0.50049 and no other question pair
    turn_pairs, question_pairs = fragile_pairs(vectors, relative=5e-5)
    assert question_pairs == 1 and turn_pairs >= 1


def test_token_counts_leave_out_the_special_tokens(fixture_data):
    _, conversations, _ = fixture_data
    encoder = get_encoder(np.float64)
    counts = token_counts(conversations[0], encoder)
    direct = [
        len(encoder.tokenizer.encode(t.retrieval_text, add_special_tokens=False).ids)
        for t in conversations[0].turns
    ]
    assert counts.tolist() == direct


# --- dates as the turn's text writes them -----------------------------------------------------


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 12, 31)))
def test_session_time_text_is_the_inverse_of_the_parser(moment):
    moment = moment.replace(second=0, microsecond=0)
    assert parse_session_time(session_time_text(moment)) == moment


# --- the sweep --------------------------------------------------------------------------------


def test_the_sweep_pools_conversations_and_seeds_and_does_not_depend_on_the_executor(fixture_data):
    _, conversations, vectors = fixture_data
    encoder = get_encoder(np.float64)
    tokens = [token_counts(c, encoder) for c in conversations]
    grid = policy_grid([1, 100], [1], [1, 50], [2, 100], [1, 3], [0.5, 1.0], 0.2, "session", "turn", 0, 2)
    one = run_sweep(grid, conversations, vectors, tokens, [(1, 0.0), (2, 0.5)], 1, InProcess())
    two = run_sweep(grid, conversations, vectors, tokens, [(1, 0.0), (2, 0.5)], 1, ProcessPool(2))
    assert json.dumps(one) == json.dumps(two)
    keep = [r for r in one if r["family"] == "Keep everything"]
    assert [r["evidence_kept"] for r in keep] == [1.0, 1.0]
    random_rows = [r for r in one if r["family"] == "Random eviction"]
    assert {r["replicates"] for r in random_rows} == {2}
    # a capacity above the conversation keeps everything
    assert all(r["turns_share"] == 1.0 for r in one if r["family"] == "LRU" and r["value"] == 100)


def test_a_minimum_similarity_recalls_what_yourmemorys_reinforcement_threshold_lets_through(fixture_data):
    """The sweep gives YourMemory the stream of minimum max(m, 0.75): at each turn the ranking
    filtered by yourmemory_reinforced over its cosines, so every replay decides the same."""
    from forgetting.conversations.field_rules import YourMemory, yourmemory_reinforced

    _, conversations, vectors = fixture_data
    conversation, cosines = conversations[0], vectors[0].turn_cosines
    threshold = float(np.sort(cosines[np.tril_indices_from(cosines, -1)])[-4])  # a few pass it
    ranked = ranked_history(cosines, 0.0)
    filtered = [
        np.array(
            [j for j in yourmemory_reinforced([(j, cosines[i, j]) for j in row], threshold)], dtype=np.intp
        )
        for i, row in enumerate(ranked)
    ]
    assert [r.tolist() for r in filtered] == [r.tolist() for r in ranked_history(cosines, threshold)]
    assert sum(r.size for r in filtered) == 4
    for clock in ("active", "calendar"):
        policy = YourMemory(importance=0.3, clock=clock)
        a = replay(policy, recall_events(conversation, filtered), k=2)
        b = replay(policy, recall_events(conversation, ranked_history(cosines, threshold)), k=2)
        assert a == b


def test_the_sweep_task_scores_every_setting_at_each_retrieval_as_score_does(fixture_data):
    _, conversations, vectors = fixture_data
    conversation, vector = conversations[0], vectors[0]
    tokens = token_counts(conversation, get_encoder(np.float64))
    grid = policy_grid([1, 100], [1], [1, 50], [2, 100], [1, 3], [0.5, 1.0], 0.2, "turn", "day", 0, 2)
    retrievals = ((1, 0.0), (2, 0.0), (2, 0.5), (1, -1.0))
    found = _score_task(grid, SweepTask(conversation, vector, tokens, retrievals, 2))
    index = question_index(conversation)
    ranking = QuestionRanking.of(vector.question_cosines, index)
    plain = []
    for k, m in retrievals:
        row = []
        for s in grid:  # YourMemory's recalls: only those at or above its reinforcement threshold
            minimum = m if s.reinforce_min is None else max(m, s.reinforce_min)
            events = recall_events(conversation, ranked_history(vector.turn_cosines, minimum))
            row.append(score(conversation, index, ranking, tokens, s.policy, events, k, 2))
        plain.append(row)
    assert found == plain
    families = {s.family for s in grid}
    assert {
        "MemoryBank 3869efc as written",
        "MemoryBank 3869efc, intent",
        "YourMemory, calendar days",
    } <= families
    assert {s.policy.code for s in grid if s.family.startswith("MemoryBank 3869efc")} == {"head", "intent"}
    yours = {s.family: s for s in grid if s.family.startswith("YourMemory")}
    assert (yours["YourMemory"].policy.clock, yours["YourMemory, calendar days"].policy.clock) == (
        "active",
        "calendar",
    )
    assert {s.reinforce_min for s in yours.values()} == {0.75}
    assert {s.family for s in grid if recall_blind(s.policy)} == {
        "Keep everything",
        "FIFO",
        "Random eviction",
    }
    # the recall-blind families miss recalls at one retrieval setting and not at another
    fifo = [grid.index(s) for s in grid if s.family == "FIFO" and s.value == 2][0]
    assert len({scores[fifo].missed_recalls for scores in found}) > 1


def test_memorybanks_of_other_caps_share_only_runs_whose_memories_never_reached_a_cap(
    fixture_data, monkeypatch
):
    """memorybank_replays gives each cap's own replay (labels included) at every retrieval
    setting and pass schedule, and runs fewer replays than caps only where a run's highest level
    stayed below a smaller cap."""
    from forgetting.conversations import field_rules

    _, conversations, vectors = fixture_data
    runs = []
    real = field_rules.replay_state

    def counted(policy, events, k=None):
        replay_and_state = real(policy, events, k)
        runs.append((policy.max_strength, replay_and_state[1].highest_level))
        return replay_and_state

    monkeypatch.setattr(field_rules, "replay_state", counted)
    caps = [200, 1, 3, 2, 5, 50, 3]  # unsorted, a repeat
    served = 0
    for forget_at in ("turn", "day", "session"):
        banks = [field_rules.MemoryBank(seed=1, max_strength=cap, forget_at=forget_at) for cap in caps]
        for k, m in ((1, 0.0), (3, -1.0)):
            events = recall_events(conversations[0], ranked_history(vectors[0].turn_cosines, m))
            runs.clear()
            assert field_rules.memorybank_replays(banks, events, k) == [replay(b, events, k) for b in banks]
            ran = [cap for cap, _ in runs]
            served += len(set(caps)) - len(ran)
            for bank in {b.max_strength for b in banks} - set(ran):  # served by a larger cap's run
                assert any(cap > bank and level <= bank - 1 for cap, level in runs)
    assert served > 0  # some cap was served by another's run
    with pytest.raises(ValueError, match="banks must differ only in max_strength"):
        field_rules.memorybank_replays(
            [field_rules.MemoryBank(seed=0), field_rules.MemoryBank(seed=1)], events, 1
        )


def same_turns(days, recall_lists):
    """Streams of the same turns (``conversation_streams.stream``), one per recall pattern, checked."""
    return [check_events(stream(days, dict(enumerate(recalls)))) for recalls in recall_lists]


@settings(max_examples=60, deadline=None)
@given(st.data(), st.lists(st.sampled_from([0, 0, 1, 3, 40]), min_size=1, max_size=25))
def test_replay_blind_is_the_replay_of_each_stream(data, gaps):
    days = [sum(gaps[: i + 1]) - gaps[0] for i in range(len(gaps))]
    rankings = st.lists(st.permutations(range(len(days))), min_size=len(days), max_size=len(days))
    recall_lists = [
        [[j for j in order if j < i] for i, order in enumerate(data.draw(rankings))] for _ in range(3)
    ]
    streams = same_turns(days, recall_lists)
    ks = data.draw(st.lists(st.integers(1, 4), min_size=3, max_size=3))
    for policy in (
        KeepAll(),
        Capacity(capacity=3, rule="fifo"),
        RandomEviction(capacity=2, seed=7),
        RandomEviction(capacity=5, seed=0),
    ):
        assert replay_blind(policy, streams, ks) == [replay(policy, e, k) for e, k in zip(streams, ks)]


def test_replay_blind_refuses_a_policy_that_reads_recalls_and_streams_of_other_turns():
    streams = same_turns([0, 0, 0, 0], [[[], [], [0], [1]], [[], [], [1], [0]]])
    lru = Capacity(capacity=2, rule="lru")
    assert not recall_blind(lru)
    assert replay(lru, streams[0], 1).dropped != replay(lru, streams[1], 1).dropped  # LRU reads recalls
    with pytest.raises(ValueError, match="recall-blind"):
        replay_blind(lru, streams, [1, 1])
    other = check_events(stream([0, 0, 1, 1]))  # same ids, another day
    with pytest.raises(ValueError, match="same turns"):
        replay_blind(KeepAll(), [streams[0], other], [1, 1])


# --- the real file ------------------------------------------------------------------------------

REAL_ENV = os.environ.get(LOCOMO_ENV)
REAL = Path(REAL_ENV) if REAL_ENV else ROOT / SHARED_COPY


@pytest.mark.skipif(not REAL.is_file(), reason=f"no LoCoMo zip at ${LOCOMO_ENV} or {ROOT / SHARED_COPY}")
def test_every_real_session_date_is_written_back_as_the_file_writes_it():
    conversations = load_locomo(locomo_zip(local=REAL))
    with zipfile.ZipFile(REAL) as archive:
        for conversation in conversations:
            name = next(m for m in archive.namelist() if m.endswith(f"/{conversation.name}.json"))
            raw = json.loads(archive.read(name))
            raw = raw.get("conversation", raw)
            for number, time in conversation.sessions:
                assert session_time_text(time) == raw[f"session_{number}_date_time"]
