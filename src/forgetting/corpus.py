"""The Experiment 5 text corpus: memories, task types and queries, validated on load.

The corpus (``data/exp5/corpus.yaml``, described in ``data/exp5/README.md``) is the project
memory of a coding assistant that works on a small web service. It has four parts:

* ``phases`` -- always ``[before, after]``: the two halves of the run, split by the *shift*;
* ``types`` -- task types, each with a sampling weight per phase;
* ``memories`` -- sentences in the store, each with a ``role`` (general, specialist, stale,
  corrected, hitchhiker, unrelated), the phases in which it is in the store (``phases``) and
  the phases in which it is true (``valid``);
* ``queries`` -- phrasings of tasks, each of one type, with the ids of the memories the task
  needs in each phase (``needs``; a plain list means "the same in both phases").

:func:`load_corpus` reads a YAML (or JSON) file and checks everything before returning a
frozen :class:`Corpus`. A malformed file raises a :class:`CorpusError` (a ``ValueError``) whose
message names the file, the entry and the reason, e.g. ``corpus.yaml: queries[3] (id
'tests-write'): needs unknown memory id 'spec-fixturez'``. Every field is type-checked, so no
malformed entry gets through as a bare ``TypeError``; a mapping that gives a key twice is
refused (``corpus.yaml: line 12: duplicate key 'text' (first at line 11)``) instead of letting
the last value win silently.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import yaml

__all__ = [
    "PHASES", "BEFORE", "AFTER", "ROLES", "CORPUS_VERSION",
    "CorpusError", "Memory", "TaskType", "Query", "Corpus",
    "default_corpus_path", "load_corpus", "parse_corpus",
]

BEFORE = "before"
AFTER = "after"
PHASES = (BEFORE, AFTER)
"""Phase tags, in time order: the shift separates them."""
ROLES = ("general", "specialist", "stale", "corrected", "hitchhiker", "unrelated")
"""Memory roles, in the order used for grouping in tables and figures."""
CORPUS_VERSION = 1

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


@dataclass(frozen=True)
class Memory:
    """One sentence in the store."""

    id: str
    role: str
    text: str
    phases: tuple[str, ...]      # phases in which it is in the store
    valid: tuple[str, ...]       # phases in which it is true (subset of ``phases``)
    resembles: str | None = None  # hitchhikers: the useful memory they are worded like

    def available(self, phase: str) -> bool:
        return phase in self.phases

    def true_in(self, phase: str) -> bool:
        return phase in self.valid


@dataclass(frozen=True)
class TaskType:
    """A kind of task and how often it is drawn in each phase (weights, not yet normalised)."""

    id: str
    description: str
    weight: Mapping[str, float]


@dataclass(frozen=True)
class Query:
    """One phrasing of a task, with the memories the task needs in each phase."""

    id: str
    type: str
    text: str
    needs: Mapping[str, tuple[str, ...]]

    def needed_ever(self) -> tuple[str, ...]:
        """Every memory this task needs in some phase, in order of first mention."""
        return tuple(dict.fromkeys(m for phase in PHASES for m in self.needs[phase]))


@dataclass(frozen=True)
class Corpus:
    """A validated corpus. ``sha256`` is the digest of the file's bytes."""

    name: str
    path: str
    sha256: str
    memories: tuple[Memory, ...]
    types: tuple[TaskType, ...]
    queries: tuple[Query, ...]

    @property
    def memory_ids(self) -> list[str]:
        return [m.id for m in self.memories]

    @property
    def query_ids(self) -> list[str]:
        return [q.id for q in self.queries]

    @property
    def roles(self) -> np.ndarray:
        return np.array([m.role for m in self.memories])

    def index(self, memory_id: str) -> int:
        """Position of a memory in :attr:`memories` (and in every per-memory array)."""
        for i, memory in enumerate(self.memories):
            if memory.id == memory_id:
                return i
        raise KeyError(f"no memory {memory_id!r} in corpus {self.name!r}")

    def memory(self, memory_id: str) -> Memory:
        return self.memories[self.index(memory_id)]

    def ids_with_role(self, role: str) -> list[str]:
        return [m.id for m in self.memories if m.role == role]

    def available(self, phase: str) -> np.ndarray:
        """Boolean mask over memories: in the store during ``phase``."""
        return np.array([m.available(phase) for m in self.memories])

    def type_weights(self, phase: str) -> np.ndarray:
        """Sampling probabilities of the task types in ``phase`` (normalised to sum to 1)."""
        weights = np.array([t.weight[phase] for t in self.types], dtype=np.float64)
        return weights / weights.sum()

    def queries_of(self, type_id: str) -> list[int]:
        """Indices of the queries of a task type, in file order."""
        return [i for i, q in enumerate(self.queries) if q.type == type_id]


def default_corpus_path() -> Path:
    """``data/exp5/corpus.yaml`` of the repository this package is installed from."""
    path = Path(__file__).resolve().parents[2] / "data" / "exp5" / "corpus.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: pass the corpus path explicitly "
                                "(the package is not installed from a checkout of the repository)")
    return path


def load_corpus(path: str | Path | None = None) -> Corpus:
    """Read and validate a corpus file (YAML or JSON); see the module docstring."""
    path = Path(path) if path is not None else default_corpus_path()
    raw = path.read_bytes()
    try:
        data = yaml.load(raw.decode("utf-8"), Loader=_UniqueKeyLoader)
    except _DuplicateKeyError as error:
        raise CorpusError(f"{path.name}: line {error.line}: duplicate key {error.key!r} (first at line "
                          f"{error.first_line}); a mapping must give each key once") from None
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise CorpusError(f"{path.name}: not valid UTF-8 YAML/JSON: {error}") from None
    return parse_corpus(data, source=path.name, path=str(path), sha256=hashlib.sha256(raw).hexdigest())


def parse_corpus(data: Any, source: str = "<corpus>", path: str = "", sha256: str = "") -> Corpus:
    """Validate already-parsed corpus data (a mapping) and build a :class:`Corpus`."""
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
            raise self.fail(where, f"{field} must be a string of lower-case letters, digits, '-' "
                                   f"or '_' (starting with a letter or digit), got {value!r}")
        return value

    def text(self, value: Any, where: str, field: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"{field} must be a non-empty string, got {value!r}")
        return value

    def phase_list(self, value: Any, where: str, field: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(where, f"{field} must be a non-empty list of phases {list(PHASES)}, "
                                   f"got {value!r}")
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
        return Corpus(name=name, path=path, sha256=sha256, memories=memories, types=types,
                      queries=queries)

    def memories(self, entries: list[Any]) -> tuple[Memory, ...]:
        out: list[Memory] = []
        seen_ids: dict[str, int] = {}
        seen_texts: dict[str, str] = {}
        for position, entry in enumerate(entries):
            where = self.label("memories", position, entry)
            self.keys(entry, where, {"id", "role", "text"}, _MEMORY_KEYS)
            mem_id = self.ident(entry["id"], where)
            if mem_id in seen_ids:
                raise self.fail(where, f"duplicate memory id {mem_id!r} (first at memories[{seen_ids[mem_id]}])")
            seen_ids[mem_id] = position
            role = entry["role"]
            if role not in ROLES:
                raise self.fail(where, f"role must be one of {list(ROLES)}, got {role!r}")
            text = self.text(entry["text"], where, "text")
            if text in seen_texts:
                raise self.fail(where, f"same text as memory {seen_texts[text]!r} (retrieval could not "
                                       "tell them apart)")
            seen_texts[text] = mem_id
            phases = self.phase_list(entry.get("phases", list(PHASES)), where, "phases")
            valid = self.phase_list(entry.get("valid", list(phases)), where, "valid")
            if not set(valid) <= set(phases):
                raise self.fail(where, f"valid {list(valid)} must be a subset of phases {list(phases)}")
            if role == "stale" and valid == phases:
                raise self.fail(where, "a stale memory must be wrong in some phase in which it is in "
                                       "the store (valid must be a strict subset of phases)")
            if role != "stale" and valid != phases:
                raise self.fail(where, f"only a memory with role 'stale' may be wrong while it is in the "
                                       f"store (valid {list(valid)} differs from phases {list(phases)})")
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
                raise self.fail(where, f"weight must map exactly the phases {list(PHASES)} to numbers, "
                                       f"got {weight!r}")
            for phase in PHASES:
                value = weight[phase]
                if isinstance(value, bool) or not isinstance(value, (int, float)) \
                        or not math.isfinite(value) or value < 0:
                    raise self.fail(where, f"weight[{phase}] must be a finite number >= 0, got {value!r}")
            out.append(TaskType(type_id, description, {p: float(weight[p]) for p in PHASES}))
        for phase in PHASES:
            if sum(t.weight[phase] for t in out) <= 0:
                raise self.fail("types", f"the weights of phase {phase!r} sum to 0")
        return tuple(out)

    def queries(self, entries: list[Any], memories: tuple[Memory, ...],
                types: tuple[TaskType, ...]) -> tuple[Query, ...]:
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
                raise self.fail(where, f"needs must be a list of memory ids or a mapping "
                                       f"{{before: [...], after: [...]}}, got {raw!r}")
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
                    raise self.fail(where, f"needs[{phase}] must be a non-empty list of memory ids "
                                           f"(strings), got {ids!r}")
                if len(set(ids)) != len(ids):
                    raise self.fail(where, f"needs[{phase}] repeats a memory id: {ids!r}")
                for mem_id in ids:
                    if mem_id not in by_id:
                        raise self.fail(where, f"needs unknown memory id {mem_id!r}")
                    memory = by_id[mem_id]
                    if not memory.available(phase):
                        raise self.fail(where, f"needs memory {mem_id!r} in phase {phase!r}, when it is "
                                               "not in the store")
                    if not memory.true_in(phase):
                        raise self.fail(where, f"needs memory {mem_id!r} in phase {phase!r}, when it is "
                                               "wrong")
                needs[phase] = tuple(ids)
            out.append(Query(query_id, entry["type"], text, needs))
        for task in types:
            if not any(q.type == task.id for q in out):
                raise self.fail(f"types (id {task.id!r})", "has no query")
        return tuple(out)

