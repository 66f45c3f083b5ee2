"""Conversations of one's own: the loader on good and bad files, the ``data`` parameter that
hands them to the real-conversation chapter, and (book tier) the chapter run on the small
invented file ``tests/data/own-conversation.json``, which publishes nothing.

The fixture is written for the tests (one conversation, two sessions, 13 turns, five questions
of categories 1-4); nothing in it is taken from LoCoMo.
"""

import copy
import hashlib
import json
import math
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, copy_book
from forgetting.conversations import source
from forgetting.conversations.user_file import MAX_UNZIPPED, choose, load_user_file
from forgetting.pipeline import cli
from forgetting.pipeline.chapter import Chapter
from forgetting.pipeline.chapters import spec
from forgetting.studies.conversations import study
from forgetting.studies.conversations.presentation import budget_view

OWN = ROOT / "tests" / "data" / "own-conversation.json"
SPEC = spec("real-conversations")
FORGETTING = str(Path(sys.executable).parent / "forgetting")


def samples():
    return json.loads(OWN.read_text(encoding="utf-8"))


def write_json(path, document):
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def member_document(sample):
    """A sample as one conversation file of a zip (as locomo10.zip stores them): ``qa`` beside the speakers."""
    return {**sample["conversation"], "qa": sample["qa"]}


def write_members(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data if isinstance(data, bytes) else json.dumps(data))
    return path


def problems(path):
    with pytest.raises(ValueError) as error:
        load_user_file(path)
    message = str(error.value)
    assert "\n" not in message
    return message


# --- good files -------------------------------------------------------------------------------


def test_the_fixture_loads_as_one_conversation_with_its_questions():
    (conversation,) = load_user_file(OWN)
    assert conversation.name == "allotment"
    assert conversation.speakers == ("Maren", "Joss")
    assert [n for n, _ in conversation.sessions] == [1, 2]
    assert len(conversation.turns) == 13 and len(conversation.questions) == 5
    assert {q.category for q in conversation.questions} == {1, 2, 3, 4}
    assert conversation.turns[6].caption == "a photo of a weedy garden plot next to a canal"


def test_a_zip_of_conversation_files_is_read_in_the_natural_order_of_their_names(tmp_path):
    one = member_document(samples()[0])
    two = copy.deepcopy(one)
    two["speaker_b"] = "Ilse"
    for turns in (v for k, v in two.items() if k.startswith("session_") and isinstance(v, list)):
        for turn in turns:
            turn["speaker"] = "Ilse" if turn["speaker"] == "Joss" else turn["speaker"]
    path = write_members(
        tmp_path / "mine.zip",
        {
            "chats/10.json": two,
            "chats/2.json": one,
            "chats/notes.txt": b"not read",
            "__MACOSX/._2.json": b"\0",
        },
    )
    conversations = load_user_file(path)
    assert [c.name for c in conversations] == ["2", "10"]
    assert conversations[1].speakers == ("Maren", "Ilse")


def test_choose_takes_positions_or_every_conversation():
    both = load_user_file(OWN) * 2
    assert choose(both, None) == both and choose(both, [1]) == [both[1]]
    with pytest.raises(ValueError, match=r"holds 2 conversation\(s\), positions 0 to 1; \[2\] name none"):
        choose(both, [0, 2])


# --- bad files: every problem at once, with where it is -------------------------------------------


def test_schema_problems_are_named_at_once_with_the_sample_and_the_field(tmp_path):
    document = samples()
    conversation, qa = document[0]["conversation"], document[0]["qa"]
    del conversation["session_2"][2]["dia_id"]
    conversation["session_1"][1]["speaker"] = "Jos"
    conversation["session_2_date_time"] = "9:30 am on 22 Juin, 2024"
    qa[0]["category"] = 9
    del qa[1]["evidence"]
    document[0]["notes"] = "?"
    document.append({"sample_id": "allotment", "qa": []})
    message = problems(write_json(tmp_path / "bad.json", document))
    for part in (
        f"{tmp_path / 'bad.json'}: not in the LoCoMo format (7 problem(s))",
        "sample 0: unknown field 'notes'",
        "sample 0, conversation: session_2_date_time: a session date must look like",
        "sample 0, conversation: session_1[1].speaker must be 'Maren' or 'Joss', got 'Jos'",
        "sample 0, conversation: session_2[2]: 'dia_id' missing",
        "sample 0: qa[0].category must be an int from 1 to 5, got 9",
        "sample 0: qa[1]: 'evidence' missing",
        "sample 1: 'conversation' missing",
    ):
        assert part in message, part
    assert "speaker_a" not in message  # a missing conversation is said once, not field by field


def test_two_samples_with_one_name_are_refused(tmp_path):
    message = problems(write_json(tmp_path / "twice.json", samples() * 2))
    assert "sample 1: its name 'allotment' is the name of sample 0 too" in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{oops", "the file: not UTF-8 JSON"),
        (b"\xff\xfe", "the file: not UTF-8 JSON"),
        (json.dumps({"conversation": {}, "qa": []}).encode(), "got an object (one sample? put it in a list"),
        (b"[]", "holds no conversation"),
        (b"[1]", "sample 0 must be an object with conversation and qa, got 1"),
        (
            json.dumps([{"conversation": {"speaker_a": "A", "speaker_b": "B", "qa": []}}]).encode(),
            "sample 0: 'qa' missing",
        ),  # fmt: skip
    ],
)
def test_a_file_that_is_not_a_list_of_samples_says_what_it_holds(tmp_path, content, expected):
    path = tmp_path / "mine.json"
    path.write_bytes(content)
    assert expected in problems(path)


def test_a_path_that_is_not_a_json_or_zip_file_is_refused_before_it_is_read(tmp_path):
    (tmp_path / "notes.txt").write_text("[]")
    with pytest.raises(
        ValueError, match=r"must be a \.json file laid out as LoCoMo's .*got a name ending in '\.txt'"
    ):
        load_user_file(tmp_path / "notes.txt")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_user_file(tmp_path / "missing.json")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(ValueError, match="which is a folder, not a regular file"):
        load_user_file(tmp_path / "folder.json")


def test_zip_problems_name_the_member(tmp_path, monkeypatch):
    broken = member_document(samples()[0])
    del broken["speaker_b"]
    path = write_members(tmp_path / "mine.zip", {"a/1.json": broken, "a/2.json": b"[]", "b/1.json": b"{"})
    message = problems(path)
    assert "a/1.json: 'speaker_b' missing" in message
    assert "a/2.json: must hold a JSON object, got a list" in message
    assert "b/1.json: not UTF-8 JSON" in message
    assert "holds no .json member" in problems(write_members(tmp_path / "none.zip", {"a.txt": b"x"}))
    (tmp_path / "text.zip").write_text("not a zip")
    assert "not a readable zip" in problems(tmp_path / "text.zip")
    monkeypatch.setattr("forgetting.conversations.user_file.MAX_UNZIPPED", 10)
    assert "unzipped, over the limit of 10" in problems(
        write_members(tmp_path / "big.zip", {"1.json": broken})
    )
    assert MAX_UNZIPPED >= 4 * source.MAX_BYTES


# --- the chapter's data parameter ---------------------------------------------------------------


def test_the_data_parameter_takes_a_file_of_ones_own_and_hands_it_on_absolute(monkeypatch):
    monkeypatch.chdir(ROOT / "tests")
    clean = SPEC.validate({"data": "data/own-conversation.json"})
    assert clean == {"data": str(OWN)}
    assert SPEC.validate({"data": "locomo"}) == {"data": "locomo"}
    assert SPEC.validate({"data": str(OWN), "conversations": [0]})["conversations"] == [0]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"data": "missing.json"}, r"parameter data='missing.json' is not allowed: no file .*missing\.json"),
        (
            {"data": "README.md"},
            r"expected locomo or the path of a \.json or \.zip file; its name does not end in",
        ),
        ({"data": 2024}, r"data=2024 is not allowed: .*goes with -r data PATH"),
        ({"data": "book"}, r"its name does not end in \.json or \.zip"),
        (
            {"data": str(OWN), "conversations": [0, 1]},
            r"break the rule conversations are positions in the data",
        ),
        ({"conversations": [10]}, r"conversations=\[10\], data='locomo' break the rule"),
    ],
)
def test_a_bad_data_parameter_is_refused_before_any_kernel(monkeypatch, overrides, expected):
    monkeypatch.chdir(ROOT)
    with pytest.raises(ValueError, match=expected):
        SPEC.validate(overrides)


def test_a_file_with_schema_problems_is_refused_as_a_parameter(tmp_path):
    document = samples()
    del document[0]["conversation"]["session_1"][0]["text"]
    path = write_json(tmp_path / "bad.json", document)
    with pytest.raises(ValueError, match=r"data=.* is not allowed: .*bad\.json: not in the LoCoMo format .*"
                       r"sample 0, conversation: session_1\[0\]: 'text' missing"):  # fmt: skip
        SPEC.validate({"data": str(path)})


def test_a_run_with_its_own_data_is_never_at_published_parameters_and_records_the_file():
    params = {**SPEC.defaults, "data": str(OWN)}
    chapter = Chapter(SPEC, params, root=ROOT)
    assert chapter.published is False
    assert chapter.record()["parameters"]["data"] == str(OWN)
    assert "-p data " in chapter.command
    published = Chapter(SPEC, dict(SPEC.defaults), root=ROOT)
    assert published.published is True and "data" not in published.record()["parameters"]  # as published
    assert SPEC.recorded(SPEC.defaults) == {k: v for k, v in SPEC.defaults.items() if k != "data"}


def test_params_shows_the_data_parameter_and_its_format(capsys):
    assert cli.main(["params", "real-conversations"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("data "))
    for part in (
        "locomo",
        ".json",
        ".zip",
        "data/locomo10.json",
        "session_N_date_time",
        "dia_id",
        "category",
    ):
        assert part in line, part


# --- the chapter's sections on small data: computed, or skipped with a reason, never a crash ------


def test_small_data_names_the_sections_a_file_is_too_small_for(tmp_path):
    def prepared(edit):
        document = samples()
        edit(document[0])
        return study.Prepared(load_user_file(write_json(tmp_path / "f.json", document)), [], [], "model")

    assert study.small_data(prepared(lambda sample: None)) == {}
    one = study.small_data(prepared(lambda sample: sample.update(qa=sample["qa"][:1])))
    assert list(one) == ["questions"] and "two scored questions" in one["questions"]
    none = study.small_data(prepared(lambda sample: sample.update(qa=[])))
    assert list(none) == ["benchmark", "questions"] and "no question of categories 1-4" in none["benchmark"]


def test_headline_values_say_none_within_a_budget_no_setting_reaches():
    def row(family, turns, evidence):
        return {"recall_k": 5, "min_similarity": 0.0, "family": family, "parameter": "p", "value": 1.0,
                "turns_share": turns, "evidence_kept": evidence, "hit_held": 1.0, "hit_all": 1.0,
                "recall_held": 1.0, "recall_all": 1.0, "every_held": 1.0, "every_all": 1.0,
                "tokens_share": turns, "adv_evidence_kept": math.nan, "adv_hit_held": math.nan,
                "adv_hit_all": math.nan}  # fmt: skip

    banks = ["MemoryBank", "MemoryBank 3869efc as written", "MemoryBank 3869efc, intent"]
    families = [
        *study.HEADLINE_FAMILIES.values(),
        "Keep everything",
        *(f"{b}, pass per session" for b in banks),
    ]
    frontier = [row(family, 1.0 if family == "Keep everything" else 0.8, 1.0) for family in families]
    budgets = [{"family": f, "budget": 0.5, "value": math.nan, "evidence_kept": math.nan} for f in families]
    tables = {
        "frontier": frontier,
        "budgets": budgets,
        "sweep": frontier + [{**r, "recall_k": 1} for r in frontier],
    }
    values = study.headline_values(tables, {"headline_budget": 0.5})
    assert math.isnan(values["best_family_share"]) and values["best_family"] == "none within the budget"
    assert math.isnan(values["lift_min"]) and values["best_hit_within_label"] == "none within the budget"
    assert values["best_hit_forgetting"] == 1.0  # settings that forget exist, outside the budget
    assert values["recall_blind_same"] is True  # NaN everywhere (no adversarial question) agrees
    assert budget_view(pd.DataFrame(budgets), 0.5).empty


# --- the chapter on the small file, through the command line ---------------------------------------


def tree_digests(root):
    """SHA-256 of every file of a scratch book but the run outputs and caches."""
    skip = {"_build", "_executed", ".cache"}
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not skip & set(path.relative_to(root).parts)
    }


@pytest.mark.book
def test_the_chapter_runs_on_a_small_file_into_its_run_folder_and_publishes_nothing(tmp_path):
    """One conversation, a handful of questions: every section runs or says why not, the outputs
    land in the run's folder, and nothing of the book (``data/results/`` included) changes; no
    LoCoMo copy is needed or looked for (none is reachable: offline, no variable)."""
    root = copy_book(tmp_path / "book")  # its own embedding cache: nothing shared is written
    before = tree_digests(root)
    env = {k: v for k, v in os.environ.items() if k != source.LOCOMO_ENV}
    env[source.OFFLINE_ENV] = "1"
    done = subprocess.run(
        [FORGETTING, "run", "real-conversations", "-p", "data", str(OWN)],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    out = root / "_build" / "runs" / "real-conversations"
    assert f"-> {out}" in done.stdout and "not rerun" not in done.stdout
    assert "published parameters" not in done.stdout  # never compared with the published files
    record = json.loads((out / "results" / "real-conversations.json").read_text())
    assert record["published_parameters"] is False and "rerun" not in record
    assert record["parameters"]["data"] == str(OWN)
    assert record["values"]["n_conversations"] == 1 and record["values"]["n_turns"] == 13
    assert record["values"]["n_questions_main"] == 5
    assert sorted(record["tables"]) == sorted(
        [
            "dataset",
            "frontier",
            "budgets",
            "retrieval",
            "sweep",
            "worth-splits",
            "worth-sweep",
            "credit",
            "recommend",
            "repairs",
        ]
    )
    for name in record["tables"]:
        assert (out / "results" / f"real-conversations-{name}.csv").is_file()
    assert {p.name for p in (out / "figures").glob("*.png")} == {
        f"real-conversations-{name}.png" for name in ("frontier", "hits", "worth-splits", "credit")
    }
    notebook = (out / "real-conversations.ipynb").read_text()
    assert "this cell's checks of LoCoMo's published numbers" in notebook
    assert tree_digests(root) == before  # data/results/, book/ and the rest as they were
    assert not (root / "_executed" / "site").exists()
