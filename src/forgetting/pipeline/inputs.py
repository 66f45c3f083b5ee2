"""What a user hands ``forgetting run``, read with bounds: parameters files, YAML texts, ``-p`` words.

Parameters are small, so what reads them is too: a ``-f`` file must be a regular file of at
most :data:`MAX_YAML_BYTES` of UTF-8 text, a ``-y`` text no longer, and all of them together
no more; YAML may nest :data:`MAX_YAML_DEPTH` deep and its aliases may not expand it past
:data:`MAX_YAML_NODES` values (no "billion laughs"), nor refer to a value that holds them.
Anything else is refused in one short line naming the file (or quoting the ``-y`` text, cut by
:func:`~forgetting._validate.shown`), in milliseconds, before any kernel starts. Within
the bounds the values are papermill's: its ``NoDatesSafeLoader`` (dates stay strings) and
its ``-p`` reading (:func:`papermill_value`).

>>> yaml_mapping("a: [1, 2]\\nwhen: 2020-01-01", "-y")
{'a': [1, 2], 'when': '2020-01-01'}
>>> yaml_mapping("a: &x [1]\\nb: *x", "-y")
{'a': [1], 'b': [1]}
>>> papermill_value("-inf"), papermill_value("0x10"), papermill_value("1_000")
(-inf, '0x10', 1000)
"""

from __future__ import annotations

import argparse
import errno
import functools
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn, cast

import yaml

from .._validate import shown
from ..safeio import NotRegularFile, open_regular
from .chapters import spec

__all__ = [
    "MAX_ERROR_CHARS",
    "MAX_YAML_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "VALUE_OPTIONS",
    "chapter_word",
    "OptionValueParser",
    "papermill_value",
    "protect_values",
    "read_parameters",
    "read_text_file",
    "unprotect",
    "yaml_mapping",
]

#: The most a parameters file, a ``-y`` text, or all of them together may hold (1 MiB).
MAX_YAML_BYTES = 1 << 20
#: The deepest nesting of lists and mappings a parameters text may have.
MAX_YAML_DEPTH = 50
#: The most values (scalars, lists, mappings) a parameters text may stand for, each alias counting
#: as every value it names: far more than any chapter's lists hold, few enough to read in a second.
MAX_YAML_NODES = 10_000
#: The options that take two words, NAME and VALUE, whatever they start with (papermill's ``-p``
#: and ``-r`` take ``-inf``, ``-1e-3`` or ``--`` as a value; argparse alone would read an option).
VALUE_OPTIONS = ("-p", "--parameter", "-r", "--parameter-raw")
#: The longest usage error the command line prints.
MAX_ERROR_CHARS = 300
_PROBLEM_CHARS = 120  # how much of a YAML parser's own sentence a message keeps
_GUARD = "\0"  # marks a protected word: no word of a real command line holds a NUL


def papermill_value(text: str) -> Any:
    """A ``-p`` value as papermill's command line reads it (``papermill.cli._resolve_type``):
    ``True``/``False``/``None``, else an int, else a float (``-inf`` and ``nan`` included), else the text."""
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


class _Refused(yaml.MarkedYAMLError):
    """A YAML text past one of the bounds (the message says which, the mark where)."""


def _refused(problem: str, mark: Any) -> _Refused:
    return _Refused(None, None, problem, mark)


class _Bounds(yaml.SafeLoader):
    """A loader that refuses, while it composes (before any value is built), nesting deeper than
    :data:`MAX_YAML_DEPTH`, more than :data:`MAX_YAML_NODES` values with every alias expanded, and
    an alias inside the value it names; and, while it builds a mapping (at any depth), a key
    written twice (YAML forbids it, PyYAML would keep the last one silently; a key equal to an
    earlier one in Python, ``1`` and ``1.0``, counts too). A merge (``<<: *m``) is not a duplicate:
    the mapping's own keys override the merged ones, as YAML says."""

    def __init__(self, stream: str, spent: int = 0) -> None:
        super().__init__(stream)
        self._depth = 0
        self._before = spent  # values of the texts read before this one (one budget for them all)
        self.values = spent  # values so far, an alias counting as every value of its target
        self._sizes: dict[int, int] = {}  # id of each finished node -> the values it stands for

    def _count(self, values: int, mark: Any) -> None:
        self.values += values
        if self.values > MAX_YAML_NODES:
            before = " with the parameters before it" if self._before else ""
            raise _refused(f"it stands for over {MAX_YAML_NODES:,} values{before}, aliases expanded", mark)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, list):  # as PyYAML keys a mapping by a list: its tuple
                    key = tuple(key)
                try:
                    earlier = first.setdefault(key, key_node.start_mark)
                except TypeError:  # an unhashable key: PyYAML's own error, below
                    break
                if earlier is not key_node.start_mark:
                    problem = f"duplicate key {shown(key)} (first at line {earlier.line + 1})"
                    raise _refused(problem, key_node.start_mark)
        return super().construct_mapping(node, deep)

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            target = self.anchors.get(event.anchor)
            if target is not None:  # an unknown alias is the parser's error
                if id(target) not in self._sizes:
                    problem = f"alias *{shown(event.anchor)} is inside the value it names"
                    raise _refused(problem, event.start_mark)
                self._count(self._sizes[id(target)], event.start_mark)
            return super().compose_node(parent, index)
        if self._depth >= MAX_YAML_DEPTH:
            raise _refused(f"nested more than {MAX_YAML_DEPTH} deep", event.start_mark)
        self._count(1, event.start_mark)
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        assert node is not None
        children: Iterable[yaml.Node] = ()
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = (part for pair in node.value for part in pair)
        self._sizes[id(node)] = 1 + sum(self._sizes[id(child)] for child in children)
        return node


def _cut(sentence: str) -> str:
    """A parser's own sentence on one line, at most ``_PROBLEM_CHARS`` long."""
    line = " ".join(sentence.split())
    return line if len(line) <= _PROBLEM_CHARS else line[: _PROBLEM_CHARS - 3] + "..."


@functools.cache
def _loader() -> type[yaml.SafeLoader]:
    from papermill.iorw import NoDatesSafeLoader  # papermill's own loader: dates stay strings

    return cast(type[yaml.SafeLoader], type("BoundedNoDatesLoader", (_Bounds, NoDatesSafeLoader), {}))


def yaml_mapping(text: str, where: str) -> dict[Any, Any]:
    """The mapping of parameter names to values that ``text`` holds (``{}`` for an empty text).

    ``ValueError`` starting with ``where`` (the file, or the ``-y`` text) for a text over
    :data:`MAX_YAML_BYTES`, YAML that is invalid or past the bounds, or anything but a mapping.
    """
    return _mapping(text, where, 0)[0]


def _mapping(text: str, where: str, spent: int) -> tuple[dict[Any, Any], int]:
    """:func:`yaml_mapping` after texts of ``spent`` values, and the values spent with this one."""
    if len(text) > MAX_YAML_BYTES:
        raise ValueError(f"{where} holds over {MAX_YAML_BYTES >> 20} MiB; parameters are a few values")
    loader = cast(_Bounds, _loader()(text, spent))  # type: ignore[call-arg]
    try:
        loaded = loader.get_single_data()
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = _cut(str(getattr(error, "problem", None) or error))
        verdict = "is refused" if isinstance(error, _Refused) else "is not valid YAML"
        raise ValueError(f"{where} {verdict}{at}: {problem}") from None
    except ValueError as error:  # e.g. an int of more digits than Python converts
        raise ValueError(f"{where} is not valid YAML: {_cut(str(error))}") from None
    finally:
        loader.dispose()
    if loaded is None:
        return {}, loader.values
    if not isinstance(loaded, dict):
        raise ValueError(
            f"{where} must be a YAML mapping of parameter names to values, got {type(loaded).__name__}"
        )
    return loaded, loader.values


def read_text_file(path: str | os.PathLike[str], what: str, limit: int = MAX_YAML_BYTES) -> str:
    """The UTF-8 text of the regular file ``path``, read without ever holding more than ``limit + 1`` bytes.

    ``ValueError`` naming ``what`` for a file that cannot be read, is not a regular file
    (``/dev/zero``, a FIFO, a folder), holds more than ``limit`` bytes, or is not UTF-8 text
    (a NUL byte or an invalid sequence, with its offset).
    """
    try:  # a folder, /dev/zero, a FIFO (not waited for) is refused before a byte is read
        opened = open_regular(path, what)
    except NotRegularFile:
        raise ValueError(f"{what} is not a regular file") from None
    except FileNotFoundError:
        raise ValueError(f"cannot read {what}: {os.strerror(errno.ENOENT)}") from None
    except OSError as error:
        raise ValueError(f"cannot read {what}: {error.strerror or error}") from None
    except ValueError as error:  # a NUL in the path (only from a caller, never a command line)
        raise ValueError(f"cannot read {what}: {error}") from None
    with opened as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as error:
            raise ValueError(f"cannot read {what}: {error.strerror or error}") from None
    if len(data) > limit:
        raise ValueError(f"{what} is over {limit:,} bytes; parameters are a few values")
    nul = data.find(b"\0")
    if nul >= 0:
        raise ValueError(f"{what} is binary (a NUL byte at offset {nul}), not YAML text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{what} is not UTF-8 text (invalid byte at offset {error.start})") from None


def read_parameters(
    files: Sequence[str],
    texts: Sequence[str],
    pairs: Sequence[Sequence[str]],
    raw_pairs: Sequence[Sequence[str]],
) -> dict[Any, Any]:
    """``-f`` files, then ``-y`` texts, then ``-p`` pairs, then ``-r`` pairs, merged in papermill's order.

    The files and texts together hold at most :data:`MAX_YAML_BYTES` and
    :data:`MAX_YAML_NODES` values; ``ValueError`` naming the file or text that fails (see
    :func:`read_text_file` and :func:`yaml_mapping`).
    """
    merged: dict[Any, Any] = {}
    total = spent = 0

    def merge(where: str, text: str) -> None:
        nonlocal total, spent
        total += len(text)
        if len(text) <= MAX_YAML_BYTES < total:  # a text over the cap alone is refused as such below
            raise ValueError(
                f"{where}: the parameters files and -y texts hold over {MAX_YAML_BYTES >> 20} MiB together"
            )
        mapping, spent = _mapping(text, where, spent)
        merged.update(mapping)

    for path in files:
        where = f"parameters file {shown(str(path))}"
        merge(where, read_text_file(path, where))
    for text in texts:
        merge(f"-y {shown(text)}", text)
    for name, value in pairs:
        merged[name] = papermill_value(value)
    for name, value in raw_pairs:
        merged[name] = value
    return merged


def _takes_two_words(word: str) -> bool:
    """``word`` names one of :data:`VALUE_OPTIONS` (argparse accepts ``--parameter-r`` for ``--parameter-raw``)."""
    return word in VALUE_OPTIONS or (word.startswith("--parameter-") and "--parameter-raw".startswith(word))


def protect_values(words: Sequence[str]) -> list[str]:
    """``words`` with the NAME and VALUE after each of :data:`VALUE_OPTIONS` of the ``run`` command
    marked so that argparse takes them as they are, ``-inf`` or ``--`` included (a bare ``--``
    elsewhere ends the options)."""
    out = list(words)
    command = next((at for at, word in enumerate(out) if not word.startswith("-")), len(out))
    if out[command : command + 1] != ["run"]:
        return out
    index = command + 1
    while index < len(out) and out[index] != "--":
        if _takes_two_words(out[index]):
            for at in range(index + 1, min(index + 3, len(out))):
                if out[at].startswith("-"):
                    out[at] = _GUARD + out[at]
            index += 3
        else:
            index += 1
    return out


def unprotect(word: str) -> str:
    """A word of :func:`protect_values` as the user typed it."""
    return word[1:] if word.startswith(_GUARD + "-") else word


def chapter_word(text: str) -> str:
    """``text`` if it names a chapter, else ``argparse.ArgumentTypeError`` quoting it cut (an
    argparse ``choices`` error would quote all of it)."""
    try:
        return spec(text).name
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class OptionValueParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose :data:`VALUE_OPTIONS` take the next two words as they come,
    as papermill's command line does (``-p eviction_threshold -inf`` is a value, not an option),
    and whose usage errors are at most :data:`MAX_ERROR_CHARS` long (``unrecognized arguments:``
    quotes every word)."""

    def error(self, message: str) -> NoReturn:
        if len(message) > MAX_ERROR_CHARS:
            message = f"{message[: MAX_ERROR_CHARS - 3]}... ({len(message)} characters)"
        super().error(message)

    def parse_known_args(
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        words = protect_values(sys.argv[1:] if args is None else args)
        parsed, extra = super().parse_known_args(words, namespace)
        for name in ("parameter", "parameter_raw"):
            pairs = getattr(parsed, name, None)
            if isinstance(pairs, list):
                setattr(parsed, name, [[unprotect(word) for word in pair] for pair in pairs])
        return parsed, [unprotect(word) for word in extra]
