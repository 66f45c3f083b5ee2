"""forgetting.studies.text.corpus_file: the shipped file loads, the path is required, and every
malformed case fails clearly."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from forgetting.studies.text.corpus import AFTER, BEFORE
from forgetting.studies.text.corpus_file import REPOSITORY_CORPUS, load_corpus

CORPUS_PATH = Path(__file__).resolve().parents[1] / REPOSITORY_CORPUS


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return yaml.safe_load(CORPUS_PATH.read_text(encoding="utf-8"))


def write(tmp_path: Path, data: Any, name: str = "bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_json_with_the_same_structure_loads(tmp_path, raw):
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    assert load_corpus(path).memory_ids == load_corpus(CORPUS_PATH).memory_ids


def test_list_needs_mean_both_phases(tmp_path, raw):
    corpus = load_corpus(write(tmp_path, raw, "ok.yaml"))
    query = corpus.queries[0]
    assert query.needs[BEFORE] == query.needs[AFTER]


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _delete(path: tuple[Any, ...]) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return edit


def _duplicate_memory_id(data):
    data["memories"][1]["id"] = data["memories"][0]["id"]


def _duplicate_query_id(data):
    data["queries"][1]["id"] = data["queries"][0]["id"]


def _duplicate_type_id(data):
    data["types"][1]["id"] = data["types"][0]["id"]


def _duplicate_text(data):
    data["memories"][1]["text"] = data["memories"][0]["text"]


def _stale_everywhere(data):
    for memory in data["memories"]:
        if memory["role"] == "stale":
            del memory["valid"]


def _wrong_but_not_stale(data):
    data["memories"][0]["valid"] = ["before"]


def _no_stale(data):
    for memory in data["memories"]:
        if memory["role"] == "stale":
            memory["role"] = "general"
            del memory["valid"]


def _type_without_query(data):
    data["types"].append({"id": "docs", "description": "documentation", "weight": {"before": 1, "after": 1}})


def _needs_removed_memory(data):
    # fix-kubernetes is only in the store after the shift
    data["queries"][0]["needs"] = {"before": ["fix-kubernetes"], "after": ["gen-check"]}


def _needs_wrong_memory(data):
    data["queries"][0]["needs"] = {"before": ["gen-check"], "after": ["stale-heroku"]}


def _hitchhiker_without_anchor(data):
    for memory in data["memories"]:
        if memory["role"] == "hitchhiker":
            del memory["resembles"]
            return


def _valid_outside(data):
    data["memories"][0]["phases"] = ["before"]
    data["memories"][0]["valid"] = ["before", "after"]


def _zero_weights(data):
    for task in data["types"]:
        task["weight"]["after"] = 0


CASES = [
    # (label, edit, expected fragments of the message)
    ("not a mapping", lambda d: d.clear() or d.update({"x": 1}), ["top level", "missing field"]),
    ("unknown top field", _set(("extra",), 1), ["top level", "unknown field", "extra"]),
    ("wrong version", _set(("version",), 2), ["version", "must be 1"]),
    ("bad phases", _set(("phases",), ["before", "later"]), ["phases", "before", "after"]),
    ("empty memories", _set(("memories",), []), ["memories", "non-empty list"]),
    (
        "memory missing text",
        _delete(("memories", 0, "text")),
        ["memories[0] (id 'gen-check')", "missing field", "text"],
    ),
    (
        "memory unknown field",
        _set(("memories", 0, "colour"), "red"),
        ["memories[0]", "unknown field", "colour"],
    ),
    ("memory bad id", _set(("memories", 0, "id"), "Gen Check"), ["memories[0]", "id must be"]),
    ("memory id not a string", _set(("memories", 0, "id"), 7), ["memories[0]", "id must be"]),
    ("duplicate memory id", _duplicate_memory_id, ["memories[1] (id 'gen-check')", "duplicate memory id"]),
    ("duplicate text", _duplicate_text, ["memories[1]", "same text as memory 'gen-check'"]),
    ("empty text", _set(("memories", 0, "text"), "  "), ["memories[0]", "text must be a non-empty string"]),
    ("bad role", _set(("memories", 0, "role"), "trivia"), ["memories[0]", "role must be one of", "trivia"]),
    (
        "bad phase tag",
        _set(("memories", 0, "phases"), ["before", "during"]),
        ["memories[0]", "invalid phase tag", "during"],
    ),
    (
        "repeated phase",
        _set(("memories", 0, "phases"), ["before", "before"]),
        ["memories[0]", "repeats a phase"],
    ),
    ("valid outside phases", _valid_outside, ["memories[0]", "subset of phases"]),
    ("stale but always valid", _stale_everywhere, ["id 'stale-heroku'", "stale memory must be wrong"]),
    ("wrong but not stale", _wrong_but_not_stale, ["memories[0]", "only a memory with role 'stale'"]),
    ("no stale memory", _no_stale, ["memories", "no memory has role 'stale'"]),
    ("hitchhiker without resembles", _hitchhiker_without_anchor, ["hitchhiker must name", "resembles"]),
    (
        "resembles unknown",
        _set(("memories", 0, "resembles"), "nope"),
        ["memories[0]", "resembles unknown memory id 'nope'"],
    ),
    (
        "type bad weight",
        _set(("types", 0, "weight"), {"before": 1}),
        ["types[0] (id 'tests')", "weight must map"],
    ),
    (
        "type negative weight",
        _set(("types", 0, "weight"), {"before": -1, "after": 1}),
        ["types[0]", "weight[before]", ">= 0"],
    ),
    (
        "type bool weight",
        _set(("types", 0, "weight"), {"before": True, "after": 1}),
        ["types[0]", "weight[before]"],
    ),
    ("weights sum to zero", _zero_weights, ["types", "phase 'after'", "sum to 0"]),
    ("duplicate type id", _duplicate_type_id, ["types[1]", "duplicate type id"]),
    ("type without query", _type_without_query, ["id 'docs'", "has no query"]),
    (
        "query unknown type",
        _set(("queries", 0, "type"), "docs"),
        ["queries[0] (id 'tests-run')", "unknown type 'docs'"],
    ),
    (
        "query unknown memory",
        _set(("queries", 0, "needs"), ["gen-check", "spec-fixturez"]),
        ["queries[0] (id 'tests-run')", "needs unknown memory id 'spec-fixturez'"],
    ),
    (
        "query bad phase tag",
        _set(("queries", 0, "needs"), {"before": ["gen-check"], "later": ["gen-check"]}),
        ["queries[0]", "invalid phase tag", "later"],
    ),
    (
        "query phase missing",
        _set(("queries", 0, "needs"), {"before": ["gen-check"]}),
        ["queries[0]", "no list for phase", "after"],
    ),
    (
        "query empty needs",
        _set(("queries", 0, "needs"), []),
        ["queries[0]", "needs[before] must be a non-empty list"],
    ),
    (
        "query repeated need",
        _set(("queries", 0, "needs"), ["gen-check", "gen-check"]),
        ["queries[0]", "repeats a memory id"],
    ),
    (
        "query needs not a list",
        _set(("queries", 0, "needs"), "gen-check"),
        ["queries[0]", "needs must be a list"],
    ),
    (
        "needs memory not in store",
        _needs_removed_memory,
        ["queries[0]", "'fix-kubernetes' in phase 'before'", "not in the store"],
    ),
    (
        "needs memory that is wrong",
        _needs_wrong_memory,
        ["queries[0]", "'stale-heroku' in phase 'after'", "wrong"],
    ),
    ("duplicate query id", _duplicate_query_id, ["queries[1]", "duplicate query id"]),
]


@pytest.mark.parametrize("label, edit, fragments", CASES, ids=[c[0] for c in CASES])
def test_malformed_corpus_fails_naming_file_entry_and_reason(tmp_path, raw, label, edit, fragments):
    data = copy.deepcopy(raw)
    edit(data)
    path = write(tmp_path, data)
    with pytest.raises(ValueError, match=r"^bad\.yaml: ") as error:
        load_corpus(path)
    message = str(error.value)
    assert message.startswith("bad.yaml: "), message
    for fragment in fragments:
        assert fragment in message, f"{label}: {fragment!r} not in {message!r}"


def test_unparseable_file_names_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("memories: [unclosed\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^broken\.yaml: not valid UTF-8 YAML/JSON"):
        load_corpus(path)


def test_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"^latin\.yaml: not valid UTF-8"):
        load_corpus(path)


NESTED = [
    (
        "needs nested list",
        _set(("queries", 0, "needs"), [["gen-check"]]),
        ["queries[0]", "needs[before]", "memory id"],
    ),
    (
        "needs phase nested",
        _set(("queries", 0, "needs"), {"before": [["gen-check"]], "after": ["gen-check"]}),
        ["queries[0]", "needs[before]"],
    ),
    ("needs a number", _set(("queries", 0, "needs"), [7]), ["queries[0]", "needs[before]"]),
    ("query type a list", _set(("queries", 0, "type"), ["tests"]), ["queries[0]", "type"]),
    ("query type a mapping", _set(("queries", 0, "type"), {"tests": 1}), ["queries[0]", "type"]),
    ("role a list", _set(("memories", 0, "role"), ["general"]), ["memories[0]", "role"]),
    ("phases nested", _set(("memories", 0, "phases"), [["before"], "after"]), ["memories[0]", "phases"]),
    ("resembles a list", _set(("memories", 0, "resembles"), ["gen-env"]), ["memories[0]", "resembles"]),
    ("weight a list", _set(("types", 0, "weight"), [1, 2]), ["types[0]", "weight"]),
    ("version a list", _set(("version",), [1]), ["version"]),
]


@pytest.mark.parametrize("label, edit, fragments", NESTED, ids=[c[0] for c in NESTED])
def test_wrong_types_give_the_clear_error_not_a_type_error(tmp_path, raw, label, edit, fragments):
    data = copy.deepcopy(raw)
    edit(data)
    with pytest.raises(ValueError, match=r"^bad\.yaml: ") as error:
        load_corpus(write(tmp_path, data))
    message = str(error.value)
    assert message.startswith("bad.yaml: "), message
    for fragment in fragments:
        assert fragment in message, f"{label}: {fragment!r} not in {message!r}"


@pytest.mark.parametrize(
    "text, key, line",
    [
        ("version: 1\nname: a\nname: b\n", "name", 3),
        ("version: 1\nmemories:\n  - id: a\n    role: general\n    id: b\n", "id", 5),
        ('{"version": 1, "version": 1}\n', "version", 1),
    ],
)
def test_duplicate_mapping_keys_are_refused_naming_file_key_and_line(tmp_path, text, key, line):
    path = tmp_path / "dup.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^dup\.yaml: line {line}: duplicate key '{key}'"):
        load_corpus(path)


def test_yaml_merge_keys_are_not_duplicates(tmp_path, raw):
    text = write(tmp_path, raw, "ok.yaml").read_text(encoding="utf-8")
    merged = text.replace("types:\n", "defaults: &w {weight: {before: 1, after: 1}}\ntypes:\n", 1)
    path = tmp_path / "merged.yaml"
    path.write_text(merged.replace("- id: tests\n", "- <<: *w\n  id: tests\n", 1), encoding="utf-8")
    with pytest.raises(
        ValueError, match="unknown field.*defaults"
    ):  # merges parse; the extra field is refused
        load_corpus(path)


def test_the_corpus_path_is_a_required_argument():
    with pytest.raises(TypeError, match="path"):
        load_corpus()  # type: ignore[call-arg]


def test_loading_does_not_depend_on_where_the_package_is(tmp_path, monkeypatch):
    # a copy of the corpus far from any checkout loads the same, from any working directory
    copied = tmp_path / "elsewhere" / "corpus.yaml"
    copied.parent.mkdir()
    copied.write_bytes(CORPUS_PATH.read_bytes())
    monkeypatch.chdir(tmp_path)
    corpus = load_corpus(copied)
    assert corpus.sha256 == load_corpus(CORPUS_PATH).sha256 and corpus.path == str(copied)
    import forgetting.studies.text.corpus_file as module

    assert "__file__" not in Path(module.__file__).read_text(encoding="utf-8")


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        load_corpus(tmp_path / "nope.yaml")
