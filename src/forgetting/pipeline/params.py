"""A chapter's parameters and constraints: :class:`Param`, :class:`Rule`, :class:`ChapterSpec`.

:mod:`.chapters` holds the registry of the book's chapters built from them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import is_real, shown
from ..safeio import NotRegularFile, open_regular

__all__ = ["LISTED_NAMES", "ChapterSpec", "Param", "Rule", "from_zero"]

LISTED_NAMES = 5  # unknown parameter names a message quotes before it says how many more there are


@dataclass(frozen=True)
class Param:
    """One chapter parameter: its default, type, allowed range and quick (smoke) value.

    A ``"file"`` parameter is a word naming the data the published run reads (its default) or the
    path of a file the user supplies: an existing regular file whose name ends in one of
    ``suffixes``, which ``check`` (if given) reads and refuses with a ``ValueError`` naming every
    problem, all before any kernel starts. A path is handed on absolute (the kernel runs in
    ``book/``). ``recorded_at_default=False`` leaves the parameter out of a run's record while it
    has its default, so that adding it kept the published records byte for byte.
    """

    name: str
    default: Any
    kind: str  # "int", "float", "bool", "int-list", "float-list", "file"
    low: float | None = None
    high: float | None = None
    quick: Any = None
    help: str = ""
    suffixes: tuple[str, ...] = ()
    check: Callable[[Path], object] | None = None
    recorded_at_default: bool = True

    @property
    def allowed(self) -> str:
        if self.kind == "file":
            return f"{self.default} or the path of a {' or '.join(self.suffixes)} file"
        bounds = [f"{op} {end}" for op, end in ((">=", self.low), ("<=", self.high)) if end is not None]
        what = {
            "int": "an int",
            "float": "a number",
            "bool": "True or False",
            "int-list": "a non-empty list of ints",
            "float-list": "a non-empty list of numbers",
        }[self.kind]
        return what + (" " + " and ".join(bounds) if bounds else "")

    def validate(self, value: Any) -> Any:
        """Return ``value`` (ints accepted for floats, lists normalised, a file's path made
        absolute) or raise ``ValueError``."""

        def fail() -> ValueError:
            listed = self.kind.endswith("-list") and isinstance(value, str)
            hint = f" (lists go in YAML: -y '{self.name}: [...]')" if listed else ""
            if self.kind == "file" and not isinstance(value, str):
                hint = f" (a path that -p reads as a number or True goes with -r {self.name} PATH)"
            refused = f"parameter {self.name}={shown(value)} is not allowed"
            return ValueError(f"{refused}: expected {self.allowed}{hint}")

        if self.kind == "file":
            return self._file(value, fail)
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise fail()
            return value
        if self.kind.endswith("-list"):
            if not isinstance(value, (list, tuple)) or not value:
                raise fail()
            scalar = Param(self.name, None, self.kind[:-5], self.low, self.high)
            try:
                return [scalar.validate(v) for v in value]
            except ValueError:
                raise fail() from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail()
        if (self.kind == "int" and not isinstance(value, int)) or (
            self.kind == "float" and not is_real(value)
        ):
            raise fail()  # a number is finite: not nan, not inf, not an int too large for a float
        value = float(value) if self.kind == "float" else value
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise fail()
        return value

    def _file(self, value: Any, fail: Callable[[], ValueError]) -> Any:
        """A ``"file"`` parameter's value checked: the default as it is, else an absolute path."""
        if value == self.default:
            return value
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            raise fail()
        refused = f"parameter {self.name}={shown(value)} is not allowed"
        path = Path(os.path.abspath(value))
        if path.suffix.lower() not in self.suffixes:
            ends = " or ".join(self.suffixes)
            raise ValueError(f"{refused}: expected {self.allowed}; its name does not end in {ends}")
        try:
            open_regular(path, "the path").close()  # a folder or a FIFO: refused unread
        except FileNotFoundError:
            raise ValueError(f"{refused}: no file {path}") from None
        except NotRegularFile as error:
            raise ValueError(f"{refused}: {path} is {error.kind}, not a regular file") from None
        except OSError as error:
            raise ValueError(f"{refused}: cannot read {path} ({error.strerror or error})") from None
        except ValueError as error:
            raise ValueError(f"{refused}: {error}") from None
        if self.check is not None:
            try:
                self.check(path)
            except (ValueError, OSError) as error:
                raise ValueError(f"{refused}: {error}") from None
        return str(path)


@dataclass(frozen=True)
class Rule:
    """A constraint between parameters, checked before any kernel starts."""

    text: str  # what must hold, in the reader's words, e.g. "shift_episode < n_episodes"
    names: tuple[str, ...]  # the parameters it reads
    holds: Callable[..., bool]  # called with those parameters, in that order


@dataclass(frozen=True)
class ChapterSpec:
    name: str
    title: str
    params: tuple[Param, ...]
    rules: tuple[Rule, ...] = ()
    data: tuple[str, ...] = ()  # external data sets it needs, by their names in pipeline/data.py

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    @property
    def quick(self) -> dict[str, Any]:
        return {p.name: p.quick for p in self.params if p.quick is not None}

    def recorded(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` as a run's record keeps them: without a parameter that has its default and
        is not ``recorded_at_default`` (a record of the published parameters stays as it was)."""
        left_out = {
            p.name for p in self.params if not p.recorded_at_default and values.get(p.name) == p.default
        }
        return {name: value for name, value in values.items() if name not in left_out}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ValueError(self.unknown_problem([name]))

    def unknown_problem(self, names: Sequence[Any]) -> str:
        """The sentence refusing ``names``: the first :data:`LISTED_NAMES` quoted, then how many more."""
        listed = ", ".join(shown(n, 40) for n in names[:LISTED_NAMES])
        more = f" and {len(names) - LISTED_NAMES} more" if len(names) > LISTED_NAMES else ""
        return (
            f"unknown parameter{'s' * (len(names) > 1)} {listed}{more} for chapter {self.name!r}; "
            f"allowed: {[p.name for p in self.params]}"
        )

    def validate(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``values`` (a subset of the parameters) alone and against the cross-parameter
        rules, completed with the defaults; every problem is reported at once."""
        known = {p.name: p for p in self.params}
        unknown = [name for name in values if name not in known]
        problems, clean = [self.unknown_problem(unknown)] if unknown else [], {}
        for name, value in ((n, v) for n, v in values.items() if n in known):
            try:
                clean[name] = known[name].validate(value)
            except ValueError as error:
                problems.append(str(error))
        if not problems:
            full = {**self.defaults, **clean}
            for rule in self.rules:
                if not rule.holds(*(full[n] for n in rule.names)):
                    quoted = ", ".join(f"{n}={shown(full[n])}" for n in rule.names)
                    problems.append(f"parameters {quoted} break the rule {rule.text}")
        if problems:
            raise ValueError(f"chapter {self.name}: " + "; ".join(problems))
        return clean


def command_value(value: Any) -> str:
    """``value`` as the command line takes it back: a list as YAML/JSON (``[1, 5]``, for
    ``-y``), a float by ``repr`` (every digit), anything else by ``str`` (``True``, not
    JSON's ``true``, which ``-p`` would read as a string)."""
    if isinstance(value, list):
        return json.dumps(value)
    return repr(value) if isinstance(value, float) else str(value)


def parameter_table(chapter: ChapterSpec) -> str:
    """``chapter``'s parameters as ``forgetting params`` prints them: name, published default,
    quick (smoke) value, allowed values and meaning, one per line, then its cross-parameter rules.
    Values are shown as the command line takes them (``-p``, or ``-y`` for lists)."""
    rows = [("parameter", "default", "quick", "allowed", "meaning")]
    for p in chapter.params:
        quick = "-" if p.quick is None else command_value(p.quick)
        rows.append((p.name, command_value(p.default), quick, p.allowed, p.help))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [f"{chapter.name}: {chapter.title}", ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4] for row in rows]
    if chapter.rules:
        lines += ["", "rules: " + "; ".join(rule.text for rule in chapter.rules)]
    if chapter.data:
        lines += ["", "data: " + ", ".join(chapter.data)]
    return "\n".join(line.rstrip() for line in lines)


def from_zero(name: str, below_one: str = "") -> Rule:
    """``name`` starts at 0 and strictly increases, with at least two values (the prose reads both
    ends); with ``below_one`` (the reason), it also ends below 1."""
    end = f" and ends below 1 ({below_one})" if below_one else ""
    return Rule(
        f"{name} starts at 0 and strictly increases{end}, with at least two values (the prose reads both ends)",
        (name,),
        lambda vs: (
            vs[0] == 0.0 and list(vs) == sorted(set(vs)) and len(vs) >= 2 and (not below_one or vs[-1] < 1)
        ),
    )
