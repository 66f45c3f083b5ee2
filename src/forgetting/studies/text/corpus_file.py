"""Reading and validating an Experiment 5 corpus file.

:func:`load_corpus` reads a YAML (or JSON) file and checks everything before returning a
frozen :class:`~forgetting.studies.text.corpus.Corpus`. A malformed file raises a
:class:`CorpusError` (a ``ValueError``) whose message names the file, the entry and the
reason, e.g. ``corpus.yaml: queries[3] (id 'tests-write'): needs unknown memory id
'spec-fixturez'``. Every field is type-checked, so no malformed entry gets through as a bare
``TypeError``; a mapping that gives a key twice is refused (``corpus.yaml: line 12: duplicate
key 'text' (first at line 11)``) instead of letting the last value win silently.

Where the corpus is: the path is a required argument. The library does not assume it is
installed from a checkout of the repository; the chapter passes the repository's file,
``<root>/`` :data:`REPOSITORY_CORPUS` (``data/exp5/corpus.yaml``, described in
``data/exp5/README.md``).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from pathlib import Path
from typing import Any

import yaml

from ...safeio import open_regular
from .corpus import CORPUS_VERSION, PHASES, ROLES, Corpus, Memory, Query, TaskType

__all__ = ["REPOSITORY_CORPUS", "CorpusError", "load_corpus", "parse_corpus"]

#: Where the repository keeps the Experiment 5 corpus, relative to its root.
REPOSITORY_CORPUS = Path("data") / "exp5" / "corpus.yaml"

_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_TOP_KEYS = {"version", "name", "phases", "types", "memories", "queries"}
_MEMORY_KEYS = {"id", "role", "text", "phases", "valid", "resembles"}
_TYPE_KEYS = {"id", "description", "weight"}
_QUERY_KEYS = {"id", "type", "text", "needs"}


class CorpusError(ValueError):
    """A malformed corpus file; the message names the file, the entry and the reason."""


class _DuplicateKeyError(yaml.YAMLError):
    def __init__(self, key: Any, line: int, first_line: int) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key, self.line, self.first_line = key, line, first_line


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping giving the same key twice (merges ``<<`` aside)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in first_line:
                    raise _DuplicateKeyError(key, line, first_line[key])
                first_line[key] = line
            except TypeError:  # unhashable key: SafeLoader reports it below
                pass
        return super().construct_mapping(node, deep)


def load_corpus(path: str | os.PathLike[str]) -> Corpus:
    """Read and validate a corpus file (YAML or JSON).

    Parameters
    ----------
    path : path
        The corpus file, e.g. ``root / REPOSITORY_CORPUS`` for a checkout at ``root``.

    Returns
    -------
    Corpus
        With ``sha256`` the digest of the file's bytes and ``path`` the path given.

    Raises
    ------
    CorpusError
        The file is not UTF-8 YAML/JSON, gives a key twice, or breaks the schema.
    FileNotFoundError
        No file at ``path``.
    """
    path = Path(path)
    with open_regular(path) as handle:  # a FIFO or a device is refused, not waited on or read forever
        raw = handle.read()
    try:
        data = yaml.load(raw.decode("utf-8"), Loader=_UniqueKeyLoader)
    except _DuplicateKeyError as error:
        raise CorpusError(
            f"{path.name}: line {error.line}: duplicate key {error.key!r} (first at line "
            f"{error.first_line}); a mapping must give each key once"
        ) from None
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise CorpusError(f"{path.name}: not valid UTF-8 YAML/JSON: {error}") from None
    return parse_corpus(data, source=path.name, path=str(path), sha256=hashlib.sha256(raw).hexdigest())


def parse_corpus(data: Any, source: str = "<corpus>", path: str = "", sha256: str = "") -> Corpus:
    """Validate already-parsed corpus data (a mapping) and build a :class:`~forgetting.studies.text.corpus.Corpus`.

    ``source`` names the data in error messages; ``path`` and ``sha256`` are stored as given.

    Raises
    ------
    CorpusError
        The first problem found, naming ``source``, the entry and the reason.
    """
    return _Parser(source).corpus(data, path, sha256)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, reason: str) -> CorpusError:
        return CorpusError(f"{self.source}: {where}: {reason}")

    # --- pieces -------------------------------------------------------------------------------
    def keys(self, entry: Any, where: str, required: set[str], allowed: set[str]) -> dict[str, Any]:
        if not isinstance(entry, dict):
            raise self.fail(where, f"must be a mapping, got {type(entry).__name__}")
        missing = sorted(required - set(entry))
        if missing:
            raise self.fail(where, f"missing field(s) {missing}")
        unknown = sorted(str(k) for k in set(entry) - allowed)
        if unknown:
            raise self.fail(where, f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")
        return entry

    def ident(self, value: Any, where: str, field: str = "id") -> str:
        if not isinstance(value, str) or not _ID.match(value):
            raise self.fail(
                where,
                f"{field} must be a string of lower-case letters, digits, '-' "
                f"or '_' (starting with a letter or digit), got {value!r}",
            )
        return value

    def text(self, value: Any, where: str, field: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"{field} must be a non-empty string, got {value!r}")
        return value

    def phase_list(self, value: Any, where: str, field: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(
                where, f"{field} must be a non-empty list of phases {list(PHASES)}, got {value!r}"
            )
        bad = [v for v in value if v not in PHASES]
        if bad:
            raise self.fail(where, f"{field} has invalid phase tag(s) {bad!r}; phases are {list(PHASES)}")
        if len(set(value)) != len(value):
            raise self.fail(where, f"{field} repeats a phase: {value!r}")
        return tuple(p for p in PHASES if p in value)

    @staticmethod
    def label(kind: str, position: int, entry: Any) -> str:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            return f"{kind}[{position}] (id {entry['id']!r})"
        return f"{kind}[{position}]"

    # --- sections -----------------------------------------------------------------------------
    def corpus(self, data: Any, path: str, sha256: str) -> Corpus:
        top = self.keys(data, "top level", _TOP_KEYS, _TOP_KEYS)
        if type(top["version"]) is not int or top["version"] != CORPUS_VERSION:
            raise self.fail("version", f"must be {CORPUS_VERSION}, got {top['version']!r}")
        name = self.text(top["name"], "name", "name")
        if top["phases"] != list(PHASES):
            raise self.fail("phases", f"must be exactly {list(PHASES)}, got {top['phases']!r}")
        for section in ("types", "memories", "queries"):
            if not isinstance(top[section], list) or not top[section]:
                raise self.fail(section, f"must be a non-empty list, got {top[section]!r}")
        memories = self.memories(top["memories"])
        types = self.types(top["types"])
        queries = self.queries(top["queries"], memories, types)
        return Corpus(name=name, path=path, sha256=sha256, memories=memories, types=types, queries=queries)

    def memories(self, entries: list[Any]) -> tuple[Memory, ...]:
        out: list[Memory] = []
        seen_ids: dict[str, int] = {}
        seen_texts: dict[str, str] = {}
        for position, entry in enumerate(entries):
            where = self.label("memories", position, entry)
            self.keys(entry, where, {"id", "role", "text"}, _MEMORY_KEYS)
            mem_id = self.ident(entry["id"], where)
            if mem_id in seen_ids:
                raise self.fail(
                    where, f"duplicate memory id {mem_id!r} (first at memories[{seen_ids[mem_id]}])"
                )
            seen_ids[mem_id] = position
            role = entry["role"]
            if role not in ROLES:
                raise self.fail(where, f"role must be one of {list(ROLES)}, got {role!r}")
            text = self.text(entry["text"], where, "text")
            if text in seen_texts:
                raise self.fail(
                    where, f"same text as memory {seen_texts[text]!r} (retrieval could not tell them apart)"
                )
            seen_texts[text] = mem_id
            phases = self.phase_list(entry.get("phases", list(PHASES)), where, "phases")
            valid = self.phase_list(entry.get("valid", list(phases)), where, "valid")
            if not set(valid) <= set(phases):
                raise self.fail(where, f"valid {list(valid)} must be a subset of phases {list(phases)}")
            if role == "stale" and valid == phases:
                raise self.fail(
                    where,
                    "a stale memory must be wrong in some phase in which it is in "
                    "the store (valid must be a strict subset of phases)",
                )
            if role != "stale" and valid != phases:
                raise self.fail(
                    where,
                    f"only a memory with role 'stale' may be wrong while it is in the "
                    f"store (valid {list(valid)} differs from phases {list(phases)})",
                )
            resembles = entry.get("resembles")
            if role == "hitchhiker" and resembles is None:
                raise self.fail(where, "a hitchhiker must name the memory it resembles (field 'resembles')")
            if resembles is not None:
                self.ident(resembles, where, "resembles")
            out.append(Memory(mem_id, role, text, phases, valid, resembles))
        for position, memory in enumerate(out):
            if memory.resembles is not None:
                where = self.label("memories", position, entries[position])
                if memory.resembles not in seen_ids:
                    raise self.fail(where, f"resembles unknown memory id {memory.resembles!r}")
                if memory.resembles == memory.id:
                    raise self.fail(where, "a memory cannot resemble itself")
        if not any(m.role == "stale" for m in out):
            raise self.fail("memories", "no memory has role 'stale' (the experiment needs one)")
        return tuple(out)

    def types(self, entries: list[Any]) -> tuple[TaskType, ...]:
        out: list[TaskType] = []
        seen: set[str] = set()
        for position, entry in enumerate(entries):
            where = self.label("types", position, entry)
            self.keys(entry, where, _TYPE_KEYS, _TYPE_KEYS)
            type_id = self.ident(entry["id"], where)
            if type_id in seen:
                raise self.fail(where, f"duplicate type id {type_id!r}")
            seen.add(type_id)
            description = self.text(entry["description"], where, "description")
            weight = entry["weight"]
            if not isinstance(weight, dict) or set(weight) != set(PHASES):
                raise self.fail(
                    where, f"weight must map exactly the phases {list(PHASES)} to numbers, got {weight!r}"
                )
            for phase in PHASES:
                value = weight[phase]
                if (
                    isinstance(value, bool)
                    or not isinstance(value, (int, float))
                    or not math.isfinite(value)
                    or value < 0
                ):
                    raise self.fail(where, f"weight[{phase}] must be a finite number >= 0, got {value!r}")
            out.append(TaskType(type_id, description, {p: float(weight[p]) for p in PHASES}))
        for phase in PHASES:
            if sum(t.weight[phase] for t in out) <= 0:
                raise self.fail("types", f"the weights of phase {phase!r} sum to 0")
        return tuple(out)

    def queries(
        self, entries: list[Any], memories: tuple[Memory, ...], types: tuple[TaskType, ...]
    ) -> tuple[Query, ...]:
        by_id = {m.id: m for m in memories}
        type_ids = [t.id for t in types]
        out: list[Query] = []
        seen: set[str] = set()
        for position, entry in enumerate(entries):
            where = self.label("queries", position, entry)
            self.keys(entry, where, _QUERY_KEYS, _QUERY_KEYS)
            query_id = self.ident(entry["id"], where)
            if query_id in seen:
                raise self.fail(where, f"duplicate query id {query_id!r}")
            seen.add(query_id)
            if self.ident(entry["type"], where, "type") not in type_ids:
                raise self.fail(where, f"unknown type {entry['type']!r}; types: {type_ids}")
            text = self.text(entry["text"], where, "text")
            raw = entry["needs"]
            if isinstance(raw, list):
                raw = {phase: raw for phase in PHASES}
            if not isinstance(raw, dict):
                raise self.fail(
                    where,
                    f"needs must be a list of memory ids or a mapping "
                    f"{{before: [...], after: [...]}}, got {raw!r}",
                )
            bad = [k for k in raw if k not in PHASES]
            if bad:
                raise self.fail(where, f"needs has invalid phase tag(s) {bad!r}; phases are {list(PHASES)}")
            missing = [p for p in PHASES if p not in raw]
            if missing:
                raise self.fail(where, f"needs gives no list for phase(s) {missing}")
            needs: dict[str, tuple[str, ...]] = {}
            for phase in PHASES:
                ids = raw[phase]
                if not isinstance(ids, list) or not ids or not all(isinstance(m, str) for m in ids):
                    raise self.fail(
                        where, f"needs[{phase}] must be a non-empty list of memory ids (strings), got {ids!r}"
                    )
                if len(set(ids)) != len(ids):
                    raise self.fail(where, f"needs[{phase}] repeats a memory id: {ids!r}")
                for mem_id in ids:
                    if mem_id not in by_id:
                        raise self.fail(where, f"needs unknown memory id {mem_id!r}")
                    memory = by_id[mem_id]
                    if not memory.available(phase):
                        raise self.fail(
                            where, f"needs memory {mem_id!r} in phase {phase!r}, when it is not in the store"
                        )
                    if not memory.true_in(phase):
                        raise self.fail(
                            where, f"needs memory {mem_id!r} in phase {phase!r}, when it is wrong"
                        )
                needs[phase] = tuple(ids)
            out.append(Query(query_id, entry["type"], text, needs))
        for task in types:
            if not any(q.type == task.id for q in out):
                raise self.fail(f"types (id {task.id!r})", "has no query")
        return tuple(out)
