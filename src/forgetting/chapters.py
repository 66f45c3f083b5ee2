"""The book's chapters and their parameters: names, types, allowed ranges, published values.

Each chapter is a notebook ``book/<name>.ipynb`` whose cell tagged ``parameters``
holds exactly the defaults declared here (a test checks it). The defaults are the
*published* parameters: only a run at exactly these values may update
``data/results/<name>.json``. ``quick`` overrides give the smoke-test size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence


@dataclass(frozen=True)
class Param:
    """One chapter parameter: its default, type, allowed range and quick (smoke) value."""

    name: str
    default: Any
    kind: str  # "int", "float", "bool", "int-list", "float-list"
    low: float | None = None
    high: float | None = None
    quick: Any = None
    help: str = ""

    @property
    def allowed(self) -> str:
        bounds = []
        if self.low is not None:
            bounds.append(f">= {self.low}")
        if self.high is not None:
            bounds.append(f"<= {self.high}")
        what = {"int": "an int", "float": "a number", "bool": "True or False",
                "int-list": "a non-empty list of ints", "float-list": "a non-empty list of numbers"}[self.kind]
        return what + (" " + " and ".join(bounds) if bounds else "")

    def validate(self, value: Any) -> Any:
        """Return ``value`` (ints accepted for floats, lists normalised) or raise ``ValueError``."""
        def fail() -> ValueError:
            return ValueError(f"parameter {self.name}={value!r} is not allowed: expected {self.allowed}")

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
        if self.kind == "int":
            if not isinstance(value, int):
                raise fail()
        else:
            if not math.isfinite(value):
                raise fail()
            value = float(value)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise fail()
        return value


@dataclass(frozen=True)
class ChapterSpec:
    name: str
    title: str
    params: tuple[Param, ...]

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    @property
    def quick(self) -> dict[str, Any]:
        return {p.name: p.quick for p in self.params if p.quick is not None}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ValueError(f"unknown parameter {name!r} for chapter {self.name!r}; "
                         f"allowed: {[p.name for p in self.params]}")

    def validate(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Validate every value; unknown names and bad values all reported at once."""
        problems, clean = [], {}
        for name, value in values.items():
            try:
                clean[name] = self.param(name).validate(value)
            except ValueError as error:
                problems.append(str(error))
        if problems:
            raise ValueError(f"chapter {self.name}: " + "; ".join(problems))
        return clean


def _p(name: str, default: Any, kind: str, low: float | None = None, high: float | None = None,
       quick: Any = None, help: str = "") -> Param:
    return Param(name, default, kind, low, high, quick, help)


_THETA = dict(low=0.001, high=0.999)
CHAPTERS: dict[str, ChapterSpec] = {spec.name: spec for spec in [
    ChapterSpec("decay-retention", "Retention curves", (
        _p("baseline_stability", 8.0, "float", 0.01, 1e6, help="S0, stability of a new item (turns)"),
        _p("eviction_threshold", 0.20, "float", **_THETA, help="theta, evict when retention < theta"),
        _p("window_size", 15, "int", 1, 10_000, help="W of the recency window"),
        _p("reinforced_recalls", 4, "int", 0, 50, help="recalls of the reinforced item"),
        _p("max_turns", 150, "int", 2, 10_000, help="turns since the last touch on the x axis"),
    )),
    ChapterSpec("decay-headline", "Headline comparison", (
        _p("n_seeds", 50, "int", 2, 100_000, quick=5, help="sessions (seeds 0..n-1)"),
        _p("session_length", 150, "int", 1, 100_000, help="turns per session"),
        _p("num_foundational", 3, "int", 1, 1000, help="foundational facts per session"),
        _p("recalls_per_foundational", 4, "int", 0, 6, help="scheduled recalls per fact"),
        _p("noise_per_turn", 3, "int", 0, 1000, help="never-recalled items registered per turn"),
        _p("eviction_threshold", 0.20, "float", **_THETA),
        _p("window_size", 15, "int", 1, 10_000),
    )),
    ChapterSpec("decay-sweeps", "Noise, sensitivity and the failure case", (
        _p("n_seeds", 20, "int", 2, 100_000, quick=3),
        _p("session_length", 150, "int", 1, 100_000),
        _p("num_foundational", 3, "int", 1, 1000),
        _p("recalls_per_foundational", 4, "int", 0, 6),
        _p("noise_per_turn", 3, "int", 0, 1000, help="noise of the sensitivity sweep and failure case"),
        _p("noise_levels", [1, 5, 10, 20], "int-list", 0, 1000, quick=[1, 5]),
        _p("thresholds", [0.10, 0.20, 0.30], "float-list", **_THETA),
        _p("windows", [10, 15, 20, 30, 50], "int-list", 1, 10_000),
        _p("eviction_threshold", 0.20, "float", **_THETA),
        _p("window_size", 15, "int", 1, 10_000),
    )),
    ChapterSpec("decay-trace", "One session, step by step", (
        _p("seed", 0, "int", 0, 2**63 - 1),
        _p("session_length", 150, "int", 1, 100_000),
        _p("recalls_per_foundational", 4, "int", 0, 6),
        _p("noise_per_turn", 3, "int", 0, 1000),
        _p("checkpoint_turn", 30, "int", 1, 100_000),
        _p("eviction_threshold", 0.20, "float", **_THETA),
        _p("window_size", 15, "int", 1, 10_000),
    )),
    ChapterSpec("decay-postmortems", "Two bugs that almost lied", (
        _p("stabilities", [2.0, 4.0, 6.0, 8.0], "float-list", 0.01, 1e6),
        _p("eviction_threshold", 0.20, "float", **_THETA),
        _p("n_seeds", 50, "int", 2, 100_000, quick=5),
        _p("session_length", 150, "int", 1, 100_000),
        _p("num_foundational", 3, "int", 1, 1000),
        _p("recalls_per_foundational", 4, "int", 0, 6),
        _p("noise_per_turn", 3, "int", 0, 1000),
        _p("uniform_first_turn", 10, "int", 1, 100_000),
        _p("window_size", 15, "int", 1, 10_000),
    )),
    # --- Memory Worth chapters (theory, Experiments 1-4) ---
    # --- end of Memory Worth chapters ---
    # --- Experiment 5 (real text) ---
    # --- end of Experiment 5 ---
]}


def spec(name: str) -> ChapterSpec:
    """The chapter called ``name``; ``ValueError`` listing the chapters otherwise."""
    try:
        return CHAPTERS[name]
    except KeyError:
        raise ValueError(f"unknown chapter {name!r}; chapters: {list(CHAPTERS)}") from None


def chapter_names() -> Sequence[str]:
    return list(CHAPTERS)
