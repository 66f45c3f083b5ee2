"""The LoCoMo data layer: the zip's sources and checks, the schema, the records, and the real file.

Everything but the last test runs on a small invented fixture (``locomo_fixture.py``) written
into ``tmp_path``; the network is never used (``urllib.request.urlopen`` is replaced in every test).
"""

import io
import json
import os
import urllib.error
import urllib.request
import zipfile
from datetime import datetime
from pathlib import Path, PurePath

import pytest

from forgetting.conversations import (
    LOCOMO_ENV,
    LOCOMO_SHA256,
    LOCOMO_URL,
    DataUnavailable,
    counts,
    evidence_repairs,
    load_locomo,
    locomo_zip,
    parse_session_time,
    repaired_reference,
    resolve_evidence,
    verify_zip,
)
from forgetting.conversations.source import CACHE_DIR, OFFLINE_ENV, SHARED_COPY, file_sha256, repository_root
from locomo_fixture import FOLDER, MEMBERS, documents, write_fixture, write_zip

ROOT = Path(__file__).resolve().parents[1]
REAL_ENV = os.environ.get(LOCOMO_ENV)  # read before the autouse fixture unsets it


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No test sees the caller's $FORGETTING_LOCOMO or $FORGETTING_OFFLINE or reaches the network."""
    monkeypatch.delenv(LOCOMO_ENV, raising=False)
    monkeypatch.delenv(OFFLINE_ENV, raising=False)

    def no_network(url, timeout=None):
        raise urllib.error.URLError("network disabled in the tests")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)


@pytest.fixture
def fixture(tmp_path):
    return write_fixture(tmp_path / "given" / "locomo10.zip")


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    return root


def serve(monkeypatch, data, calls=None):
    def fake_urlopen(url, timeout=None):
        if calls is not None:
            calls.append((url, timeout))
        return io.BytesIO(data)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)


def load_fixture(fixture):
    return load_locomo(fixture.path, fixture.sha256, fixture.members)


def cache_files(repo):
    folder = repo / CACHE_DIR
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# --- the records ------------------------------------------------------------------------------


def test_fixture_counts(fixture):
    conversations = load_fixture(fixture)
    assert [c.name for c in conversations] == ["1", "2"]
    assert [c.speakers for c in conversations] == [("Ines", "Tomas"), ("Aiko", "Bram")]
    found = counts(conversations)
    assert (found.conversations, found.sessions, found.turns, found.images, found.captions) == (
        2,
        6,
        11,
        1,
        1,
    )
    assert found.questions == {1: 1, 2: 1, 3: 1, 4: 2, 5: 1}
    assert found.total_questions == 6
    assert (found.evidence, found.unresolved, found.repaired) == (7, 1, 0)


def test_turns_in_session_order_with_one_counter(fixture):
    second = load_fixture(fixture)[1]
    assert [s for s, _ in second.sessions] == [1, 2, 10]  # numeric, not the file's or text order
    assert [t.dia_id for t in second.turns] == ["D1:1", "D2:1", "D2:2", "D10:1"]
    assert [t.index for t in second.turns] == [0, 1, 2, 3]
    assert [t.session for t in second.turns] == [1, 2, 2, 10]
    first = load_fixture(fixture)[0]
    assert [t.index for t in first.turns] == list(range(7))


def test_session_times_and_a_date_without_a_session(fixture):
    first, second = load_fixture(fixture)
    assert first.sessions == (
        (1, datetime(2021, 3, 3, 9, 5)),
        (2, datetime(2021, 3, 17, 0, 40)),  # 12:40 am is just after midnight
        (3, datetime(2021, 4, 2, 18, 15)),
    )  # session_4_date_time names no session and is not kept
    assert second.sessions[0] == (1, datetime(2022, 1, 1, 12, 0))  # 12:00 pm is noon
    assert all(turn.time == dict(first.sessions)[turn.session] for turn in first.turns)


def test_image_turn_caption_and_memory_text(fixture):
    first = load_fixture(fixture)[0]
    image = first.turn_by_id["D2:1"]
    assert image.text == "Look what I built this weekend."
    assert image.caption == "a photo of a wooden shelf with plants"
    assert (
        image.memory_text
        == "Look what I built this weekend. and shared a photo of a wooden shelf with plants."
    )
    plain = first.turn_by_id["D2:2"]
    assert plain.caption is None and plain.memory_text == plain.text


def test_a_caption_without_an_image_is_not_embedded(tmp_path):
    """The stated choice for a caption-only turn (a ``blip_caption``, no ``img_url``): it is
    counted as a caption, not an image, and its retrieval and memory texts leave the caption out, as
    LoCoMo's own code does (it appends ``[shares ...]`` only for a non-empty image list)."""

    def caption_only(docs):
        turn = docs[MEMBERS[0]]["session_2"][1]
        turn["blip_caption"] = "a photo of tomatoes"
        docs[MEMBERS[0]]["session_3"][0]["img_url"] = []  # an empty list: no image either
        docs[MEMBERS[0]]["session_3"][0]["blip_caption"] = "a photo of a red tomato"

    made = write_fixture(tmp_path / "c.zip", caption_only)
    first = load_locomo(made.path, made.sha256, made.members)[0]
    image, only, empty = (first.turn_by_id[i] for i in ("D2:1", "D2:2", "D3:1"))
    assert (image.image, only.image, empty.image) == (True, False, False)
    assert image.retrieval_text.endswith('"\n[shares a photo of a wooden shelf with plants]\n')
    assert only.caption == "a photo of tomatoes" and "[shares" not in only.retrieval_text
    assert (only.memory_text, empty.memory_text) == (only.text, empty.text)  # nor stored with it
    assert image.memory_text.endswith(" and shared a photo of a wooden shelf with plants.")
    assert "[shares" not in empty.retrieval_text and empty.retrieval_text.endswith(
        'said, "The first tomato is red."\n'
    )
    found = counts([first])
    assert (found.images, found.captions) == (1, 3)


def test_malformed_evidence_references_are_repaired_only_when_asked_and_listed(tmp_path):
    def malformed(docs):
        docs[MEMBERS[0]]["qa"][0]["evidence"] = ["D1:01", "D:3:2", "D1:1 D1:3", "D2:1; D3:1", "D1:2"]
        docs[MEMBERS[0]]["qa"][2]["evidence"] = ["D9:9", "D", "D1:9 D1:1", "D1:1x"]

    made = write_fixture(tmp_path / "m.zip", malformed)
    first = load_locomo(made.path, made.sha256, made.members)[0]
    as_written = resolve_evidence(first, first.questions[0])
    assert [t.dia_id for t in as_written.turns] == ["D1:2"]
    assert as_written.unknown == ("D1:01", "D:3:2", "D1:1 D1:3", "D2:1; D3:1") and as_written.repaired == ()
    repaired = resolve_evidence(first, first.questions[0], repair=True)
    assert [t.dia_id for t in repaired.turns] == ["D1:1", "D3:2", "D1:1", "D1:3", "D2:1", "D3:1", "D1:2"]
    assert repaired.unknown == () and repaired.repaired == as_written.unknown
    # no repair: a turn that does not exist, no id at all, one of the ids missing, anything else in it
    kept = resolve_evidence(first, first.questions[2], repair=True)
    assert kept.unknown == ("D9:9", "D", "D1:9 D1:1", "D1:1x") and kept.repaired == ()
    assert repaired_reference(first, "D1:1") is None  # names a turn as written: nothing to repair
    assert [(r.question, r.written, r.read) for r in evidence_repairs([first])] == [
        (0, "D1:01", ("D1:1",)),
        (0, "D:3:2", ("D3:2",)),
        (0, "D1:1 D1:3", ("D1:1", "D1:3")),
        (0, "D2:1; D3:1", ("D2:1", "D3:1")),
    ]
    found = counts([first])
    assert (found.unresolved, found.repaired) == (8, 4)


def test_questions_answers_and_unresolved_evidence(fixture):
    first = load_fixture(fixture)[0]
    by_category = {q.category: q for q in first.questions}
    assert by_category[3].answer == "2"  # an int answer kept as its text
    assert by_category[5].answer is None and by_category[5].adversarial_answer == "Cherry tomatoes"
    assert by_category[1].adversarial_answer is None
    evidence = resolve_evidence(first, by_category[3])
    assert [t.dia_id for t in evidence.turns] == ["D3:2"]
    assert evidence.unknown == ("D9:9",)
    second = load_fixture(fixture)[1]
    assert resolve_evidence(second, second.questions[0]) == ((), (), ())
    with pytest.raises(
        ValueError, match="question must belong to conversation '2', got one of conversation '1'"
    ):
        resolve_evidence(second, by_category[3])


def test_session_dates_are_parsed_without_the_locale():
    assert parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert parse_session_time("12:05 am on 1 June, 2023") == datetime(2023, 6, 1, 0, 5)
    for bad in (
        "13:00 pm on 8 May, 2023",
        "1:56 pm on 8 Mai, 2023",
        "1:56 PM on 8 May, 2023",
        "8 May 2023",
        5,
    ):
        with pytest.raises(ValueError, match="must look like '1:56 pm on 8 May, 2023'"):
            parse_session_time(bad)
    with pytest.raises(ValueError, match="must name a real date"):
        parse_session_time("1:56 pm on 30 February, 2023")


# --- refused copies -----------------------------------------------------------------------------


def test_wrong_digest_is_refused_naming_the_file_and_both_digests(fixture):
    pattern = rf"{fixture.path}: SHA-256 is {fixture.sha256[:16]}\.\.\., expected {LOCOMO_SHA256[:16]}\.\.\."
    with pytest.raises(ValueError, match=pattern):
        verify_zip(fixture.path, members=fixture.members)
    with pytest.raises(ValueError, match=pattern):
        load_locomo(fixture.path, members=fixture.members)
    with pytest.raises(ValueError, match=pattern):
        locomo_zip(local=fixture.path, members=fixture.members)


def test_truncated_zip_is_refused(tmp_path, fixture):
    cut = tmp_path / "cut.zip"
    cut.write_bytes(fixture.path.read_bytes()[:-200])
    with pytest.raises(ValueError, match=f"{cut}: SHA-256 is"):
        locomo_zip(local=cut, sha256=fixture.sha256, members=MEMBERS)
    own = file_sha256(cut)  # the cut file's own digest: the zip check decides
    for call in (lambda: verify_zip(cut, own, MEMBERS), lambda: load_locomo(cut, own, MEMBERS)):
        with pytest.raises(ValueError, match=f"{cut}: not a readable zip .*; refusing it"):
            call()


def test_missing_member_is_refused(tmp_path):
    half = write_zip(tmp_path / "half.zip", {MEMBERS[0]: json.dumps(documents()[MEMBERS[0]]).encode()})
    pattern = rf"{half.path}: 1 member\(s\) missing, first '{MEMBERS[1]}'; refusing it"
    with pytest.raises(ValueError, match=pattern):
        locomo_zip(local=half.path, sha256=half.sha256, members=MEMBERS)
    with pytest.raises(ValueError, match=pattern):
        load_locomo(half.path, half.sha256, MEMBERS)


def test_damaged_member_is_refused(tmp_path):
    files = {name: json.dumps(doc).encode() for name, doc in documents().items()}
    stored = write_zip(tmp_path / "stored.zip", files, compression=zipfile.ZIP_STORED)
    stored.path.write_bytes(stored.path.read_bytes().replace(b"tomatoes", b"tomatoeZ", 1))
    own = file_sha256(stored.path)
    with pytest.raises(ValueError, match=rf"{stored.path}: member '{MEMBERS[0]}' is damaged \(bad CRC\)"):
        verify_zip(stored.path, own, MEMBERS)


def test_refused_download_caches_nothing(monkeypatch, repo, fixture):
    good = fixture.path.read_bytes()
    for served in (good[:-200], b"<html>a proxy's page</html>"):  # a cut download, a wrong one
        serve(monkeypatch, served)
        with pytest.raises(ValueError, match=f"{LOCOMO_URL}: SHA-256 is"):
            locomo_zip(root=repo, sha256=fixture.sha256, members=MEMBERS)
        assert cache_files(repo) == []  # no cached file, no temporary file left


def test_schema_problems_are_listed_at_once_with_file_and_field(tmp_path):
    def edit(docs):
        one, two = docs[MEMBERS[0]], docs[MEMBERS[1]]
        one["session_1"][1]["speaker"] = "Tom"
        one["session_1"][2]["dia_id"] = "D1:1"
        del one["session_2"][1]["text"]
        one["session_3_date_time"] = "6:15 pm on 2 Apr, 2021"
        one["qa"][0]["category"] = 7
        one["qa"][1]["adversarial_answer"] = "Never"
        del one["qa"][4]["adversarial_answer"]
        one["qa"][3]["evidence"] = "D2:1"
        one["session_5_notes"] = "?"
        del two["session_10_date_time"]
        two["session_2_date_time"] = "1:00 pm on 1 January, 2021"  # before session 1

    broken = write_fixture(tmp_path / "broken.zip", edit)
    with pytest.raises(ValueError) as error:
        load_locomo(broken.path, broken.sha256, MEMBERS)
    message = str(error.value)
    one, two = MEMBERS
    for part in (
        f"{broken.path}: not in the LoCoMo format (11 problem(s))",
        f"{one}: session_1[1].speaker must be 'Ines' or 'Tomas', got 'Tom'",
        f"{one}: session_1[2].dia_id must be unique in the conversation, got 'D1:1'",
        f"{one}: session_2[1]: 'text' missing",
        f"{one}: session_3_date_time: a session date must look like",
        f"{one}: qa[0].category must be an int from 1 to 5, got 7",
        f"{one}: qa[1] (category 2) has an adversarial_answer (only category 5 may)",
        f"{one}: qa[4] (category 5) has no adversarial_answer",
        f"{one}: qa[3].evidence must be a list of dia_id strings, got 'D2:1'",
        f"{one}: unknown field 'session_5_notes'",
        f"{two}: session_10 has no session_10_date_time",
        f"{two}: session_2_date_time (2021-01-01 13:00) is before session_1's (2022-01-01 12:00); "
        "session times must not decrease",
    ):
        assert part in message
    assert "\n" not in message


def test_malformed_json_and_duplicate_keys_are_refused(tmp_path):
    good = json.dumps(documents()[MEMBERS[1]]).encode()
    twice = good.replace(b'"speaker_b": "Bram"', b'"speaker_b": "Bram", "speaker_b": "Bob"')
    broken = write_zip(tmp_path / "broken.zip", {MEMBERS[0]: b"{not json", MEMBERS[1]: twice})
    with pytest.raises(ValueError) as error:
        load_locomo(broken.path, broken.sha256, MEMBERS)
    assert f"{MEMBERS[0]}: not UTF-8 JSON" in str(error.value)
    assert f"{MEMBERS[1]}: not UTF-8 JSON (key 'speaker_b' given twice in one object)" in str(error.value)


def test_a_long_list_of_problems_is_cut(tmp_path):
    def edit(docs):
        docs[MEMBERS[0]]["qa"] = [{"question": "", "category": 0, "evidence": None}] * 30

    broken = write_fixture(tmp_path / "broken.zip", edit)
    with pytest.raises(ValueError, match=r"\(90 problem\(s\)\).*; and 70 more$"):
        load_locomo(broken.path, broken.sha256, MEMBERS)


# --- where the zip comes from --------------------------------------------------------------------


def test_explicit_path_beats_the_variable_and_the_cache(monkeypatch, tmp_path, repo, fixture):
    other = write_fixture(tmp_path / "other" / "locomo10.zip")
    cached = write_fixture(repo / CACHE_DIR / "locomo10.zip")
    monkeypatch.setenv(LOCOMO_ENV, str(other.path))
    given = {"root": repo, "sha256": fixture.sha256, "members": MEMBERS}
    assert locomo_zip(local=fixture.path, **given) == fixture.path.resolve()
    assert locomo_zip(**given) == other.path.resolve()  # the variable beats the cache
    monkeypatch.delenv(LOCOMO_ENV)
    assert locomo_zip(**given) == cached.path.resolve()


def test_a_named_copy_that_is_missing_is_not_passed_over(monkeypatch, tmp_path, repo, fixture):
    write_fixture(repo / CACHE_DIR / "locomo10.zip")
    nowhere = tmp_path / "nowhere.zip"
    with pytest.raises(
        ValueError, match=f"local names {nowhere}, which does not exist; refusing it"
    ) as error:
        locomo_zip(local=nowhere, root=repo, sha256=fixture.sha256, members=MEMBERS)
    assert not isinstance(error.value, DataUnavailable)  # a typo is an error, not "no copy configured"
    monkeypatch.setenv(LOCOMO_ENV, str(nowhere))
    monkeypatch.setenv(OFFLINE_ENV, "1")
    with pytest.raises(ValueError, match=rf"\${LOCOMO_ENV} names {nowhere}, which does not exist") as error:
        locomo_zip(root=repo, sha256=fixture.sha256, members=MEMBERS)
    assert not isinstance(error.value, DataUnavailable)


def test_a_named_copy_that_is_not_a_regular_file_is_refused(monkeypatch, tmp_path, repo, fixture):
    write_fixture(repo / CACHE_DIR / "locomo10.zip")
    given = {"root": repo, "sha256": fixture.sha256, "members": MEMBERS}
    for odd, kind in ((Path("/dev/null"), "a character device"), (tmp_path, "a folder")):
        with pytest.raises(
            ValueError, match=f"local names {odd}, which is {kind}, not a regular file"
        ) as error:
            locomo_zip(local=odd, **given)
        assert not isinstance(error.value, DataUnavailable)
        monkeypatch.setenv(LOCOMO_ENV, str(odd))
        with pytest.raises(ValueError, match=rf"\${LOCOMO_ENV} names {odd}, which is {kind}, not a regular"):
            locomo_zip(**given)
        monkeypatch.delenv(LOCOMO_ENV)


def test_a_device_or_folder_is_refused_before_it_is_read(tmp_path):
    for odd, kind in ((Path("/dev/null"), "a character device"), (tmp_path, "a folder")):
        for call in (verify_zip, load_locomo, file_sha256):
            with pytest.raises(ValueError, match=f"path names {odd}, which is {kind}, not a regular file"):
                call(odd)
    with pytest.raises(FileNotFoundError, match=f"path names {tmp_path / 'no.zip'}, which does not exist"):
        load_locomo(tmp_path / "no.zip")


_NEVER_WAIT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a regression reading /dev/zero fails fast
from forgetting.conversations import load_locomo, locomo_zip, verify_zip
for odd in sys.argv[1:]:
    for call in (verify_zip, load_locomo, lambda p: locomo_zip(local=p)):
        try:
            call(odd)
        except ValueError as error:
            print(error)
"""


@pytest.mark.skipif(
    not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs mkfifo and /dev/zero"
)
def test_a_fifo_or_an_endless_device_is_refused_without_waiting_or_reading(tmp_path):
    """In a child process (a regression would block on the FIFO, or read /dev/zero for ever):
    the timeout only stops a hang; the test checks the messages."""
    import subprocess
    import sys

    fifo = tmp_path / "locomo10.zip"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-c", _NEVER_WAIT, str(fifo), "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines() == [
        *[f"path names {fifo}, which is a FIFO, not a regular file; refusing it"] * 2,
        f"local names {fifo}, which is a FIFO, not a regular file; refusing it",
        *["path names /dev/zero, which is a character device, not a regular file; refusing it"] * 2,
        "local names /dev/zero, which is a character device, not a regular file; refusing it",
    ]


def test_a_valid_cache_is_used_without_a_download(monkeypatch, repo, fixture):
    cached = write_fixture(repo / CACHE_DIR / "locomo10.zip")
    calls = []
    serve(monkeypatch, b"never read", calls)
    assert locomo_zip(root=repo, sha256=cached.sha256, members=MEMBERS) == cached.path.resolve()
    assert calls == []


def test_offline_forbids_the_download_and_says_so(monkeypatch, repo, fixture):
    calls = []
    serve(monkeypatch, fixture.path.read_bytes(), calls)
    monkeypatch.setenv(OFFLINE_ENV, "1")
    with pytest.raises(DataUnavailable, match=rf"no download \(\${OFFLINE_ENV}=1\)"):
        locomo_zip(root=repo, sha256=fixture.sha256, members=MEMBERS)
    assert calls == [] and cache_files(repo) == []
    monkeypatch.setenv(OFFLINE_ENV, "0")  # only "1" means offline
    assert (
        locomo_zip(root=repo, sha256=fixture.sha256, members=MEMBERS)
        == (repo / CACHE_DIR / "locomo10.zip").resolve()
    )


def test_download_goes_into_the_cache_atomically(monkeypatch, repo, fixture):
    calls = []
    serve(monkeypatch, fixture.path.read_bytes(), calls)
    path = locomo_zip(root=repo, sha256=fixture.sha256, members=MEMBERS)
    assert path == (repo / CACHE_DIR / "locomo10.zip").resolve()
    assert path.read_bytes() == fixture.path.read_bytes()
    assert cache_files(repo) == ["locomo10.zip"]
    assert calls == [(LOCOMO_URL, 5.0)]  # the pinned address, a short timeout


def test_a_refused_cache_is_replaced_by_a_download(monkeypatch, repo, fixture):
    stale = repo / CACHE_DIR / "locomo10.zip"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an older pin")
    serve(monkeypatch, fixture.path.read_bytes())
    assert (
        locomo_zip(root=repo, sha256=fixture.sha256, members=MEMBERS).read_bytes()
        == fixture.path.read_bytes()
    )


def test_a_failed_download_falls_back_to_the_copy_beside_the_project(repo, fixture):
    shared = write_fixture(repo / SHARED_COPY)
    path = locomo_zip(root=repo, sha256=fixture.sha256, members=MEMBERS)
    assert path == shared.path.resolve()
    assert cache_files(repo) == []  # nothing cached from a failed download


def test_download_false_tries_no_network(monkeypatch, repo, fixture):
    calls = []
    serve(monkeypatch, fixture.path.read_bytes(), calls)
    with pytest.raises(DataUnavailable, match=r"no copy of the LoCoMo zip: tried .*no download"):
        locomo_zip(root=repo, download=False, sha256=fixture.sha256, members=MEMBERS)
    assert calls == []


def test_no_data_at_all_says_so_in_one_line(tmp_path, repo):
    with pytest.raises(DataUnavailable) as error:
        locomo_zip(root=repo)
    message = str(error.value)
    assert isinstance(error.value, FileNotFoundError)
    assert "\n" not in message
    for part in (
        f"${LOCOMO_ENV} (unset)",
        f"cache {repo / CACHE_DIR / 'locomo10.zip'} (absent)",
        f"download {LOCOMO_URL} (URLError: <urlopen error network disabled in the tests>)",
        f"local copy {repo / SHARED_COPY} (absent)",
        f"set {LOCOMO_ENV} to a copy of locomo10.zip (sha256 {LOCOMO_SHA256[:16]}...) or download it from {LOCOMO_URL}",
    ):
        assert part in message


def test_bad_arguments_are_named_all_at_once(repo):
    with pytest.raises(ValueError) as error:
        locomo_zip(root=repo, download="yes", sha256="ABC", members="1.json", timeout=0, cache=3)
    message = str(error.value)
    for part in (
        "download must be a bool (True or False), got 'yes'",
        "cache must be a path or None, got 3",
        "sha256 must be 64 lowercase hexadecimal digits, got 'ABC'",
        "members must be a non-empty sequence of member names, got '1.json'",
        "timeout must be seconds in (0, 60], got 0",
    ):
        assert part in message


def test_load_locomo_checks_its_arguments(fixture):
    with pytest.raises(ValueError) as error:
        load_locomo(3, sha256=fixture.sha256.upper(), members=[])
    message = str(error.value)
    assert "path must be a path, got 3" in message
    assert "sha256 must be 64 lowercase hexadecimal digits" in message
    assert "members must be a non-empty sequence of member names, got []" in message


def test_the_repository_root_is_found_from_inside_it(tmp_path):
    assert repository_root(ROOT / "src" / "forgetting") == ROOT
    assert repository_root(tmp_path) is None
    assert FOLDER == "data/multimodal_dialog/locomo10_v2/"


# --- the real file -----------------------------------------------------------------------------

REAL = Path(REAL_ENV) if REAL_ENV else ROOT / SHARED_COPY


@pytest.mark.skipif(not REAL.is_file(), reason=f"no LoCoMo zip at ${LOCOMO_ENV} or {ROOT / SHARED_COPY}")
def test_the_real_file_has_the_counts_its_readme_states():
    conversations = load_locomo(locomo_zip(local=REAL))
    found = counts(conversations)
    # /work/shared/data/locomo/README.md (the local copy's description of the upstream file)
    assert (found.conversations, found.turns, found.total_questions) == (10, 5882, 1986)
    assert found.questions == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    assert found.evidence == 2815
    # Counted by this loader (regression pins, not the README's): 272 sessions, 910 turns with
    # an image (img_url) and 1,226 with a caption, 9 evidence strings naming no turn as written
    # (e.g. "D8:6; D9:17", "D30:05", "D10:19"), 6 of them repaired.
    assert (found.sessions, found.images, found.captions) == (272, 910, 1226)
    assert (found.unresolved, found.repaired) == (9, 6)
    assert [c.name for c in conversations] == ["26", "30", "41", "42", "43", "44", "47", "48", "49", "50"]


@pytest.mark.skipif(not REAL.is_file(), reason=f"no LoCoMo zip at ${LOCOMO_ENV} or {ROOT / SHARED_COPY}")
def test_the_real_files_repairs_against_its_raw_references():
    """Each repair read against the raw JSON, not the loader: the reference is in that question's
    evidence list as written, names no dia_id of the file, and its numbers are exactly those of
    the ids it is read as (leading zeros aside), each a dia_id of the file."""
    import re

    from forgetting.conversations.source import LOCOMO_MEMBERS

    path = locomo_zip(local=REAL)
    repairs = evidence_repairs(load_locomo(path))
    with zipfile.ZipFile(path) as archive:
        raw = {PurePath(m).stem: json.loads(archive.read(m)) for m in LOCOMO_MEMBERS}
    for repair in repairs:
        document = raw[repair.conversation]
        ids = {
            t["dia_id"] for key, turns in document.items() if re.fullmatch(r"session_\d+", key) for t in turns
        }
        assert repair.written in document["qa"][repair.question]["evidence"]
        assert repair.written not in ids and set(repair.read) <= ids
        numbers = [int(n) for n in re.findall(r"\d+", repair.written)]
        assert numbers == [int(n) for r in repair.read for n in re.findall(r"\d+", r)]
    assert [(r.conversation, r.question, r.written, r.read) for r in repairs] == [
        ("26", 37, "D8:6; D9:17", ("D8:6", "D9:17")),
        ("43", 18, "D:11:26", ("D11:26",)),
        ("49", 31, "D9:1 D4:4 D4:6", ("D9:1", "D4:4", "D4:6")),
        ("49", 38, "D22:1 D22:2 D9:10 D9:11", ("D22:1", "D22:2", "D9:10", "D9:11")),
        ("49", 46, "D21:18 D21:22 D11:15 D11:19", ("D21:18", "D21:22", "D11:15", "D11:19")),
        ("50", 69, "D30:05", ("D30:5",)),
    ]
