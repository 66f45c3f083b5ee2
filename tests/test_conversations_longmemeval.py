"""LongMemEval's data layer: the manifest, the copies and their checks, the schema, the records,
the replay events, and (where a copy is at hand) the real files' counts.

Everything but the last section runs on small invented questions written into ``tmp_path`` with a
manifest of their own; the network is never used (``urllib.request.urlopen`` is replaced).
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import urllib.error
import urllib.request
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from forgetting.conversations import (
    DataUnavailable,
    DecayClock,
    Ebbinghaus,
    KeepAll,
    QuestionType,
    Role,
    Window,
    lme_counts,
    load_longmemeval,
    longmemeval_copy,
    parse_lme_date,
    question_events,
    replay,
)
from forgetting.conversations.longmemeval import parse_question
from forgetting.conversations.longmemeval_source import (
    CACHE_DIR,
    LME_ENV,
    MANIFEST_PATH,
    MANIFEST_SHA256,
    MEMBER_FOLDER,
    SHARED_COPY,
    ManifestEntry,
    Setting,
    file_url,
    read_manifest,
)
from forgetting.conversations.source import OFFLINE_ENV
from forgetting.pipeline import data as pipeline_data
from longmemeval_examples import UPDATE, turn

ROOT = Path(__file__).resolve().parents[1]
REAL_ENV = os.environ.get(LME_ENV)  # read before the autouse fixture unsets it


# --- invented questions --------------------------------------------------------------------------


#: An abstention question with an int answer and two sessions at one date (file order kept).
ABSTAIN = {
    "question_id": "9f8e7d6c_abs",
    "question_type": "multi-session",
    "question": "How many cats do I have?",
    "answer": 2,
    "question_date": "2023/05/30 (Tue) 12:00",
    "haystack_session_ids": ["s_b", "s_a"],
    "haystack_dates": ["2023/05/22 (Mon) 05:28", "2023/05/22 (Mon) 05:28"],
    "haystack_sessions": [[turn("user", "second in the file")], [turn("user", "first? no, later in file")]],
    "answer_session_ids": ["s_a"],
}


def name_of(doc):
    return f"{len(doc['haystack_sessions'])}_{doc['question_id']}.json"


def encoded(doc):
    return json.dumps(doc, indent=2).encode()


def write_copy(folder: Path, docs, as_zip=False, setting=Setting.ORACLE):
    """Write ``docs`` as a folder (or a zip of ``lme_jsons/`` members); return (path, manifest)."""
    pairs = [(doc, encoded(doc)) if isinstance(doc, dict) else doc for doc in docs]
    files = {name_of(doc): data for doc, data in pairs}
    manifest = tuple(
        ManifestEntry(setting, name, len(data), hashlib.sha256(data).hexdigest())
        for name, data in files.items()
    )
    folder.mkdir(parents=True, exist_ok=True)
    if as_zip:
        path = folder / "lme.zip"
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in files.items():
                archive.writestr(MEMBER_FOLDER + name, data)
        return path, manifest
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder, manifest


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No test sees the caller's $FORGETTING_LONGMEMEVAL or $FORGETTING_OFFLINE or the network."""
    monkeypatch.delenv(LME_ENV, raising=False)
    monkeypatch.delenv(OFFLINE_ENV, raising=False)

    def no_network(url, timeout=None):
        raise urllib.error.URLError("network disabled in the tests")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    return root


# --- dates and the schema ----------------------------------------------------------------------


def test_dates_are_read_with_their_weekday_checked():
    assert parse_lme_date("2023/04/11 (Tue) 08:03") == datetime(2023, 4, 11, 8, 3)
    for bad, says in [
        ("2023/04/11 (Mon) 08:03", "weekday must be its own (Tue)"),
        ("2023/02/30 (Thu) 08:03", "real date"),
        ("2023-04-11 08:03", "must look like"),
        (None, "must look like"),
    ]:
        with pytest.raises(ValueError, match=r"\(Tue\)|real date|must look like") as error:
            parse_lme_date(bad)
        assert says in str(error.value)


def test_sessions_are_sorted_by_date_and_numbered_with_every_field_typed():
    question, problems = parse_question(name_of(UPDATE), encoded(UPDATE))
    assert problems == []
    assert question.name == "3_0a1b2c3d"
    assert question.question_type is QuestionType.KNOWLEDGE_UPDATE
    assert question.question_date == datetime(2023, 6, 1, 10, 0)
    assert not question.abstention
    assert [s.session_id for s in question.sessions] == ["answer_x_1", "noise_1", "answer_x_2"]
    assert [s.number for s in question.sessions] == [1, 2, 3]
    assert [s.file_position for s in question.sessions] == [2, 1, 0]
    times = [s.time for s in question.sessions]
    assert times == sorted(times)
    assert [t.index for t in question.turns] == list(range(6))
    assert [t.turn_id for t in question.turns] == ["S1:1", "S1:2", "S2:1", "S2:2", "S3:1", "S3:2"]
    assert all(t.time == question.sessions[t.session - 1].time for t in question.turns)
    # has_answer absent (the noise session) reads as False; the evidence is the user's, old first
    assert [t.has_answer for t in question.turns] == [True, False, False, False, True, False]
    assert [t.content for t in question.evidence] == [
        "My bike lives on the balcony.",
        "I moved my bike to the basement.",
    ]
    assert all(t.role is Role.USER for t in question.evidence)
    assert [s.session_id for s in question.answer_sessions] == ["answer_x_1", "answer_x_2"]
    assert question.answer_session_ids == ("answer_x_1", "answer_x_2")


def test_abstention_int_answer_and_tied_dates_keep_the_file_order():
    question, problems = parse_question(name_of(ABSTAIN), encoded(ABSTAIN))
    assert problems == []
    assert question.abstention and question.answer == "2"
    assert [s.session_id for s in question.sessions] == ["s_b", "s_a"]
    assert [s.is_answer for s in question.sessions] == [False, True]


def test_a_session_id_given_twice_is_two_sessions_with_distinct_turn_ids():
    doc = copy.deepcopy(UPDATE)
    doc["haystack_session_ids"][1] = "answer_x_2"  # as two S-setting files do (same id, two dates)
    doc["answer_session_ids"] = ["answer_x_1"]
    question, problems = parse_question(name_of(doc), encoded(doc))
    assert problems == []
    assert [s.session_id for s in question.sessions] == ["answer_x_1", "answer_x_2", "answer_x_2"]
    assert len({t.turn_id for t in question.turns}) == len(question.turns)
    assert lme_counts([question]).distinct_sessions == 2


def test_every_schema_problem_is_reported_at_once_with_its_path():
    doc = copy.deepcopy(UPDATE)
    doc["question_type"] = "knowledge-updates"
    doc["question_date"] = "2023/06/01 (Fri) 10:00"
    doc["haystack_sessions"][0][1]["role"] = "bot"
    del doc["haystack_sessions"][1][0]["content"]
    doc["haystack_sessions"][2][0]["has_answer"] = "yes"
    doc["haystack_sessions"][2][1]["speaker"] = "me"
    doc["answer_session_ids"] = ["answer_x_1", "nowhere"]
    doc["haystack_dates"][1] = "12 May 2023"
    doc["extra"] = 1
    question, problems = parse_question(name_of(doc), encoded(doc))
    assert question is None
    text = "\n".join(problems)
    for expected in [
        "3_0a1b2c3d: unknown field 'extra'",
        "3_0a1b2c3d: question_type must be one of",
        "3_0a1b2c3d: question_date: a date's weekday must be its own (Thu)",
        "3_0a1b2c3d: haystack_sessions[0][1].role must be 'user' or 'assistant', got 'bot'",
        "3_0a1b2c3d: haystack_sessions[1][0]: 'content' missing",
        "3_0a1b2c3d: haystack_sessions[2][0].has_answer must be a bool, got 'yes'",
        "3_0a1b2c3d: haystack_sessions[2][1] has unknown field 'speaker'",
        "3_0a1b2c3d: answer_session_ids names 'nowhere', not a haystack session id",
        "3_0a1b2c3d: haystack_dates[1]: a date must look like",
    ]:
        assert expected in text
    assert len(problems) == 9


def test_missing_fields_lengths_and_names_are_problems():
    doc = copy.deepcopy(UPDATE)
    del doc["answer"]
    assert parse_question(name_of(UPDATE), encoded(doc))[1] == ["3_0a1b2c3d: 'answer' missing"]
    doc = copy.deepcopy(UPDATE)
    doc["haystack_dates"].pop()
    (problem,) = parse_question(name_of(UPDATE), encoded(doc))[1]
    assert "must have one length, got 3, 2 and 3" in problem
    question, problems = parse_question("2_0a1b2c3d.json", encoded(UPDATE))
    assert question is None and problems == [
        "2_0a1b2c3d: the name must start with its number of sessions (3_)"
    ]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (encoded(UPDATE)[:-40], "3_0a1b2c3d: not JSON ("),
        (b"\xff\xfe garbage", "3_0a1b2c3d: not UTF-8"),
        (b'{"question_id": "a", "question_id": "b"}', "key 'question_id' is given twice"),
        (b"[1, 2]", "the document must be a JSON object"),
    ],
)
def test_a_truncated_or_garbled_file_is_one_clear_problem(data, says):
    question, problems = parse_question(name_of(UPDATE), data)
    assert question is None and len(problems) == 1 and says in problems[0]


# --- the manifest and the copies ---------------------------------------------------------------


def test_the_committed_manifest_is_pinned_and_lists_every_file():
    entries = read_manifest(ROOT / MANIFEST_PATH)
    assert hashlib.sha256((ROOT / MANIFEST_PATH).read_bytes()).hexdigest() == MANIFEST_SHA256
    assert [sum(e.setting == s for e in entries) for s in Setting] == [500, 78]
    assert len({e.file for e in entries}) == 578
    assert file_url("1_001be529.json") == (
        "https://raw.githubusercontent.com/hussainzs/Memoria/959167b875ddc992661da1cf1a3263821e6831ed/"
        "evaluations/data/lme_jsons/1_001be529.json"
    )


def test_a_bad_manifest_is_refused_with_every_problem(tmp_path):
    path = tmp_path / "MANIFEST.tsv"
    path.write_text(
        "setting\tfile\tbytes\tsha256\n"
        f"oracle\t1_0a1b2c3d.json\t12\t{'a' * 64}\n"
        f"m\t1_0a1b2c3d.json\t0\t{'A' * 64}\n"
        "s\tnot a file\t3\n"
    )
    with pytest.raises(ValueError) as error:
        read_manifest(path, sha256=None)
    message = str(error.value)
    for expected in [
        "line 3: setting must be one of ['oracle', 's'], got 'm'",
        "line 3: file '1_0a1b2c3d.json' is listed twice",
        "line 3: bytes must be a positive int, got '0'",
        "line 3: sha256 must be 64 lowercase",
        "line 4 must have 4 tab-separated fields",
    ]:
        assert expected in message
    with pytest.raises(ValueError, match="SHA-256 is .*refusing the manifest"):
        read_manifest(path)


@pytest.mark.parametrize("as_zip", [False, True])
def test_a_local_copy_is_checked_and_loaded(tmp_path, repo, as_zip):
    path, manifest = write_copy(tmp_path / "given", [UPDATE, ABSTAIN], as_zip=as_zip)
    found = longmemeval_copy("oracle", local=path, root=repo, manifest=manifest)
    assert found == path.resolve()
    questions = load_longmemeval(found, "oracle", manifest)
    assert [q.question_id for q in questions] == ["0a1b2c3d", "9f8e7d6c_abs"]
    counts = lme_counts(questions)
    assert (counts.questions, counts.abstention, counts.sessions, counts.turns, counts.user_turns) == (
        2,
        1,
        5,
        8,
        5,
    )
    assert counts.types["knowledge-update"] == 1 and counts.types["multi-session"] == 1
    assert (counts.evidence_turns, counts.evidence_user_turns) == (2, 2)


@pytest.mark.parametrize("as_zip", [False, True])
def test_a_wrong_digest_or_a_truncated_file_is_refused_naming_the_file(tmp_path, repo, as_zip):
    good = encoded(UPDATE)
    _, manifest = write_copy(tmp_path / "reference", [UPDATE])
    changed = good.replace(b"basement", b"BASEMENT")  # same size, another digest
    path, _ = write_copy(tmp_path / "digest", [(UPDATE, changed)], as_zip=as_zip)
    with pytest.raises(ValueError, match=r"3_0a1b2c3d\.json has SHA-256 .*the manifest says .*refusing it"):
        longmemeval_copy(local=path, root=repo, manifest=manifest)
    with pytest.raises(ValueError, match=r"3_0a1b2c3d\.json has SHA-256"):
        load_longmemeval(path, "oracle", manifest)
    path, _ = write_copy(tmp_path / "short", [(UPDATE, good[:-40])], as_zip=as_zip)
    with pytest.raises(
        ValueError, match=rf"3_0a1b2c3d\.json has {len(good) - 40} bytes, the manifest says {len(good)}"
    ):
        longmemeval_copy(local=path, root=repo, manifest=manifest)
    path, _ = write_copy(tmp_path / "none", [ABSTAIN], as_zip=as_zip)
    with pytest.raises(ValueError, match=r"3_0a1b2c3d\.json'? is missing"):
        longmemeval_copy(local=path, root=repo, manifest=manifest)


def test_a_garbled_file_matching_its_manifest_fails_the_schema_with_the_file_named(tmp_path):
    path, manifest = write_copy(tmp_path / "given", [(UPDATE, encoded(UPDATE)[:-40]), ABSTAIN])
    with pytest.raises(
        ValueError, match=r"not in the LongMemEval format \(1 problem\(s\)\): 3_0a1b2c3d: not JSON"
    ):
        load_longmemeval(path, "oracle", manifest)


def test_the_environment_variable_names_a_copy_and_a_bad_name_is_an_error(tmp_path, repo, monkeypatch):
    path, manifest = write_copy(tmp_path / "given", [UPDATE], as_zip=True)
    monkeypatch.setenv(LME_ENV, str(path))
    assert longmemeval_copy(root=repo, manifest=manifest) == path.resolve()
    monkeypatch.setenv(LME_ENV, str(tmp_path / "absent.zip"))
    with pytest.raises(ValueError, match=r"\$FORGETTING_LONGMEMEVAL names .*does not exist; refusing it"):
        longmemeval_copy(root=repo, manifest=manifest)
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    monkeypatch.setenv(LME_ENV, str(tmp_path / "junk.zip"))
    with pytest.raises(ValueError, match="not a readable zip"):
        longmemeval_copy(root=repo, manifest=manifest)


def test_no_copy_is_one_line_saying_what_was_tried(repo):
    _, manifest = write_copy(repo.parent / "reference", [UPDATE])
    with pytest.raises(DataUnavailable) as error:
        longmemeval_copy(root=repo, manifest=manifest)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(
        "no copy of LongMemEval (1 files): tried $FORGETTING_LONGMEMEVAL (unset), cache "
    )
    assert "(1 of 1 files absent)" in message
    assert "URLError" in message and file_url("3_0a1b2c3d.json") in message
    assert f"local copy {repo / SHARED_COPY} (absent)" in message
    assert not (repo / CACHE_DIR / "3_0a1b2c3d.json").exists()


def test_downloads_are_checked_cached_and_then_used_without_the_network(repo, monkeypatch):
    _, manifest = write_copy(repo.parent / "reference", [UPDATE, ABSTAIN])
    served = {file_url(name_of(d)): encoded(d) for d in (UPDATE, ABSTAIN)}
    calls = []

    def fake_urlopen(url, timeout=None):
        calls.append(url)
        return io.BytesIO(served[url])

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    folder = longmemeval_copy("oracle", root=repo, manifest=manifest)
    assert folder == (repo / CACHE_DIR).resolve() and sorted(calls) == sorted(served)
    assert len(load_longmemeval(folder, "oracle", manifest)) == 2

    def no_network(url, timeout=None):
        raise AssertionError("the cache must be used without the network")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    assert longmemeval_copy("oracle", root=repo, manifest=manifest) == folder
    monkeypatch.setenv(OFFLINE_ENV, "1")
    assert longmemeval_copy("oracle", root=repo, manifest=manifest) == folder

    # a damaged cached file is passed over and downloaded again
    monkeypatch.delenv(OFFLINE_ENV)
    (folder / name_of(UPDATE)).write_bytes(b"{}")
    calls.clear()
    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    assert longmemeval_copy("oracle", root=repo, manifest=manifest) == folder
    assert calls == [file_url(name_of(UPDATE))]


def test_a_wrong_download_is_refused_and_leaves_nothing(repo, monkeypatch):
    _, manifest = write_copy(repo.parent / "reference", [UPDATE])
    monkeypatch.setattr(
        urllib.request, "urlopen", lambda url, timeout=None: io.BytesIO(b"<html>rate limited</html>")
    )
    with pytest.raises(ValueError, match=r"3_0a1b2c3d\.json has 25 bytes, the manifest says"):
        longmemeval_copy(root=repo, manifest=manifest)
    assert list((repo / CACHE_DIR).iterdir()) == []


def test_bad_arguments_are_reported_together(repo):
    with pytest.raises(ValueError) as error:
        longmemeval_copy("m", local=3, download="yes", timeout=0, root=repo)
    message = str(error.value)
    for expected in [
        "download must be",
        "setting must be one of ['oracle', 's'] or None, got 'm'",
        "local must be a path",
        "timeout must be seconds",
    ]:
        assert expected in message


def test_the_pipeline_registers_longmemeval():
    assert "longmemeval" in pipeline_data.DATA_SETS
    assert pipeline_data.unavailable() is DataUnavailable


# --- replay events ------------------------------------------------------------------------------


def test_a_history_becomes_the_event_stream_every_policy_replays():
    question, _ = parse_question(name_of(UPDATE), encoded(UPDATE))
    events = question_events(question)
    assert [(e.turn, e.session, e.stored) for e in events] == [
        (0, 1, "S1:1"),
        (1, 1, "S1:2"),
        (2, 2, "S2:1"),
        (3, 2, "S2:2"),
        (4, 3, "S3:1"),
        (5, 3, "S3:2"),
    ]
    assert [e.time for e in events] == [t.time for t in question.turns]
    users = question_events(question, roles=[Role.USER], recalled=[[], [], ["S1:1"]])
    assert [(e.turn, e.stored, e.recalled) for e in users] == [
        (0, "S1:1", ()),
        (2, "S2:1", ()),
        (4, "S3:1", ("S1:1",)),
    ]
    assert replay(KeepAll(), events).held == tuple(e.stored for e in events)
    # a day clock from the session dates: the balcony turns (10 May) are 10 days old by 20 May
    days = replay(Ebbinghaus(baseline_stability=2.0, clock=DecayClock.DAYS), events)
    assert days.dropped_at("S1:1") == 4 and days.dropped_at("S3:1") is None
    assert replay(Window(window_size=2), users).held == ("S2:1", "S3:1")
    with pytest.raises(ValueError, match="recalled must hold one sequence per event"):
        question_events(question, recalled=[[]])
    with pytest.raises(ValueError, match="roles must hold only"):
        question_events(question, roles=["system"])


# --- the real files -----------------------------------------------------------------------------

REAL = Path(REAL_ENV) if REAL_ENV else ROOT / SHARED_COPY


@pytest.fixture(scope="module")
def real():
    if not REAL.exists():
        pytest.skip(f"no LongMemEval copy at ${LME_ENV} or {ROOT / SHARED_COPY}")
    path = longmemeval_copy(local=REAL)
    return {setting: load_longmemeval(path, setting) for setting in Setting}


def test_the_real_oracle_setting_has_the_counts_its_readme_states(real):
    found = lme_counts(real[Setting.ORACLE])
    # /work/shared/data/longmemeval/README.md
    assert (found.questions, found.sessions, found.turns, found.abstention) == (500, 948, 10960, 30)
    assert found.types == {
        "single-session-user": 70,
        "single-session-assistant": 56,
        "single-session-preference": 30,
        "multi-session": 133,
        "knowledge-update": 78,
        "temporal-reasoning": 133,
    }
    # Counted by this loader (regression pins): 940 distinct session ids, 5,479 user turns,
    # 896 evidence turns of which 54 are the assistant's (51 in single-session-assistant).
    assert (found.distinct_sessions, found.user_turns, found.evidence_turns, found.evidence_user_turns) == (
        940,
        5479,
        896,
        842,
    )


def test_the_real_s_knowledge_updates_have_the_counts_its_readme_states(real):
    questions = real[Setting.S]
    found = lme_counts(questions)
    # README: 78 questions, 3,580 distinct sessions, 36,857 turns, 18,297 of them the user's;
    # those are counts over distinct session ids. Over every history (a shared session counted
    # per question): 3,706 sessions, 38,089 turns, 18,907 user turns.
    assert found.types["knowledge-update"] == found.questions == 78
    assert (found.distinct_sessions, found.distinct_turns, found.distinct_user_turns) == (3580, 36857, 18297)
    assert (found.sessions, found.turns, found.user_turns, found.abstention) == (3706, 38089, 18907, 6)
    assert found.evidence_turns == found.evidence_user_turns == 144


def test_real_sessions_are_in_date_order(real):
    for questions in real.values():
        for question in questions:
            times = [s.time for s in question.sessions]
            assert times == sorted(times)
            assert [t.index for t in question.turns] == list(range(len(question.turns)))


def test_the_real_knowledge_updates_as_the_data_says(real):
    """The README's claim -- every evidence turn a user turn, in two answer sessions, the older
    one stating the old value -- checked: what holds and the exceptions, pinned."""
    for setting in Setting:
        updates = [q for q in real[setting] if q.question_type is QuestionType.KNOWLEDGE_UPDATE]
        assert len(updates) == 78
        assert all(t.role is Role.USER for q in updates for t in q.evidence)
        assert all(len(q.answer_session_ids) == 2 for q in updates)
        with_evidence = {q.question_id: {t.session for t in q.evidence} for q in updates}
        both = [
            q
            for q in updates
            if len({q.sessions[n - 1].session_id for n in with_evidence[q.question_id]}) == 2
        ]
        none = sorted(q.question_id for q in updates if not q.evidence)
        one = sorted(q.question_id for q in updates if q.evidence and q not in both)
        assert len(both) == 70
        assert none == [
            "031748ae_abs",
            "0ddfec37_abs",
            "2133c1b5_abs",
            "2698e78f_abs",
            "6aeb4375_abs",
            "f685340e_abs",
        ]
        assert one == ["22d2cb42", "eace081b"]  # evidence only in the newer (`_2`) answer session
        for q in updates:  # where there is evidence, the newest answer session holds some
            if q.evidence:
                assert q.answer_sessions[-1].number in with_evidence[q.question_id]
        # the answer sessions, listed `_1` then `_2`, are in date order but in one S-setting file
        listed_later_first = sorted(
            q.question_id
            for q in updates
            if [s.session_id for s in q.answer_sessions] != list(q.answer_session_ids)
        )
        assert listed_later_first == ([] if setting is Setting.ORACLE else ["618f13b2"])


def test_the_real_stale_value_comes_after_the_update_in_one_s_history(real):
    """In the S file of 618f13b2 the old value ("four times", ``answer_caf5b52e_1``) is dated
    22:16 and the update ("six times", ``answer_caf5b52e_2``) 17:45 of the same day: replayed in
    date order, the stale value is the newer memory (in the oracle file it is the older)."""
    (oracle,) = [q for q in real[Setting.ORACLE] if q.question_id == "618f13b2"]
    (s,) = [q for q in real[Setting.S] if q.question_id == "618f13b2"]
    assert [x.session_id for x in oracle.answer_sessions] == ["answer_caf5b52e_1", "answer_caf5b52e_2"]
    assert [x.session_id for x in s.answer_sessions] == ["answer_caf5b52e_2", "answer_caf5b52e_1"]
    assert any("six times" in t.content for t in s.answer_sessions[0].turns if t.has_answer)
    assert any("four times" in t.content for t in s.answer_sessions[1].turns if t.has_answer)


def test_some_real_sessions_are_dated_after_their_question(real):
    """Kept as written (the loader drops nothing): sessions dated after the question's date."""
    for setting, questions, sessions, updates in [
        (Setting.ORACLE, 43, 65, ["2133c1b5", "7a87bd0c", "e61a7584"]),
        (Setting.S, 16, 58, ["2133c1b5"]),
    ]:
        late = [q for q in real[setting] if q.question_date < q.sessions[-1].time]
        assert len(late) == questions
        assert sum(x.time > q.question_date for q in real[setting] for x in q.sessions) == sessions
        assert [
            q.question_id
            for q in late
            if q.question_type is QuestionType.KNOWLEDGE_UPDATE
            and any(x.time > q.question_date for x in q.answer_sessions)
        ] == updates
