"""The decay engine on the wall clock: the article's first draft, and why it broke.

The decay-engine article says its first draft measured time since a touch in seconds
(``time.time()``) instead of turns, that this broke, and never says how. This module
rebuilds that draft so the book can show it. :class:`WallClockEngine` is
:class:`~forgetting.decay.engines.EbbinghausEngine` with one change: the ``t`` of
``R = exp(-t / S)`` is the seconds a clock reports between the last touch and now, and
``S`` is in seconds. A turn's duration is whatever the agent's work took, so the same
session gives different evictions on every run and on every machine.

The clock is an argument, ``clock(turn) -> seconds``. The book passes a
:class:`VirtualClock`: per-turn latencies drawn from a seeded log-normal distribution, so
the chapter itself reruns byte for byte while each *rerun seed* plays one run of the
first draft. The tests also pass a real clock (``lambda turn: time.perf_counter()``, through
:func:`clock_runs`), the draft as it was; nothing published is read from a real clock.
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._validate import (
    bool_problem,
    is_real,
    raise_problems,
    real_problem,
    require_int,
    require_real,
    seed_problem,
    shown,
)
from ...decay.curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    decay_problems,
    reinforced_stability,
    unchecked_retention,
)
from ...decay.engines import _REQUIRED, MemoryItem, WorkingSet, _check_mem_id, _check_turn
from ...hashing import digest
from .. import stats
from . import metrics
from .sessions import SessionConfig, generate_session
from .simulation import simulate
from .wallclock_batch import clock_rows

__all__ = [
    "DEFAULT_MEDIAN_LATENCY",
    "DEFAULT_LATENCY_SIGMA",
    "REAL_CLOCK_RERUNS",
    "Clock",
    "LatencyModel",
    "VirtualClock",
    "WallClockEngine",
    "clock_runs",
    "wallclock_runs",
    "latency_quantile",
    "rerun_spread",
    "rerun_table",
    "robustness_grid",
    "grid_summary",
    "grid_series",
]

DEFAULT_MEDIAN_LATENCY = 1.0
"""Median seconds per turn: with it, ``S0 = 8`` seconds means what ``S0 = 8`` turns means."""
DEFAULT_LATENCY_SIGMA = 0.5
"""Log-normal shape of a turn's latency: a turn is usually near the median, sometimes far above."""

REAL_CLOCK_RERUNS = 5
"""Reruns of the draft on the real ``time.perf_counter()`` in the book's claims test of it
(``tests/test_claims_decay_postmortems.py``); the page names the count from here. No result is
published from a real clock."""

Clock = Callable[[int], float]
"""``clock(turn)``: seconds at the moment the engine is called during ``turn`` (non-decreasing)."""


@dataclass(frozen=True)
class LatencyModel:
    """How long a turn takes: ``median_seconds * exp(sigma * Z) / speed``, ``Z ~ N(0, 1)``.

    Attributes
    ----------
    median_seconds : float, default 1.0
        Median latency of a turn on the reference machine.
    sigma : float, default 0.5
        Log-normal shape (0 gives every turn the median).
    speed : float, default 1.0
        Machine speed relative to the reference: every latency is divided by it.
    """

    median_seconds: float = DEFAULT_MEDIAN_LATENCY
    sigma: float = DEFAULT_LATENCY_SIGMA
    speed: float = 1.0

    def __post_init__(self) -> None:
        raise_problems(
            [
                real_problem("median_seconds", self.median_seconds, 0.0, low_open=True),
                real_problem("sigma", self.sigma, 0.0, 10.0),
                real_problem("speed", self.speed, 0.0, low_open=True),
            ],
            "invalid LatencyModel: ",
        )


def latency_quantile(latency: LatencyModel, probability: float) -> float:
    """Seconds a turn exceeds with probability ``1 - probability``: ``median * exp(sigma * z_p) / speed``.

    >>> round(latency_quantile(LatencyModel(sigma=1.0), 0.9), 2)
    3.6
    """
    require_real("probability", probability, 0.0, 1.0, low_open=True, high_open=True)
    z = statistics.NormalDist().inv_cdf(probability)
    return latency.median_seconds * math.exp(latency.sigma * z) / latency.speed


class VirtualClock:
    """A deterministic stand-in for the wall clock: seconds elapsed at the end of each turn.

    Turn ``k`` lasts a latency drawn from ``latency`` by ``random.Random(seed)``, rounded to
    whole milliseconds so that elapsed times are exact sums; ``clock(turn)`` is the total
    of turns ``1..turn`` in seconds (``0.0`` for turn 0). The same seed gives the same
    times; another seed is another run of the same session. A seed is a ``str`` or an int
    ``>= 0`` (``random.Random(-s)`` is ``random.Random(s)``, so negatives are refused).

    >>> clock = VirtualClock("0/0", LatencyModel(sigma=0.0))
    >>> clock(0), clock(3)
    (0.0, 3.0)
    """

    def __init__(self, seed: str | int, latency: LatencyModel = LatencyModel()) -> None:
        if not isinstance(seed, str) and seed_problem("seed", seed):
            raise ValueError(f"seed must be a str or an int >= 0, got {shown(seed)}")
        self.latency = latency
        # a str seed is hashed with SHA-512: same on every platform
        self._rng = random.Random(seed if isinstance(seed, str) else int(seed))
        self._milliseconds = [0]  # elapsed at the end of turn k, index k

    def __call__(self, turn: int) -> float:
        if type(turn) is not int or turn < 0:  # the check, off the common path
            require_int("turn", turn, minimum=0)
        model = self.latency
        while len(self._milliseconds) <= turn:
            seconds = model.median_seconds * math.exp(model.sigma * self._rng.gauss(0.0, 1.0)) / model.speed
            self._milliseconds.append(self._milliseconds[-1] + max(1, round(seconds * 1000)))
        return self._milliseconds[turn] / 1000


class WallClockEngine(WorkingSet):
    """Ebbinghaus decay on a clock: evict when ``exp(-seconds since touch / S) < theta``.

    Parameters
    ----------
    clock : Clock
        ``clock(turn)`` in seconds, read at every call.
    eviction_threshold : float, default 0.20
        ``theta`` in (0, 1).
    baseline_stability : float, default 8.0
        ``S0 > 0``, in *seconds*; a recall reinforces it as in the turn engine.

    Satisfies :class:`~forgetting.decay.engines.Engine`. The first draft had no schedule (a clock
    gives no turn to file an item under) and read the rule for every present item at every step;
    ``step`` reads it for the items that can be due: younger than ``(1 - 1e-6) S ln(1/theta)``,
    less ``1e-9 * (1 + touch time + that age)`` seconds, an item's retention is above ``theta`` by a
    relative ``1e-9`` or more (``theta <= 0.999``; above, every item can be due), far beyond the
    rounding of ``exp``, so the same items are evicted.

    >>> engine = WallClockEngine(VirtualClock("0/0", LatencyModel(sigma=0.0)))
    >>> engine.register("fact", "the user is vegetarian", turn=1)
    >>> engine.step(13), engine.step(14)
    ([], ['fact'])
    """

    def __init__(
        self,
        clock: Clock,
        eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
        baseline_stability: float = DEFAULT_BASELINE_STABILITY,
    ) -> None:
        raise_problems(decay_problems(eviction_threshold, baseline_stability))
        self.clock = clock
        self.eviction_threshold = float(eviction_threshold)
        self.baseline_stability = float(baseline_stability)
        self._items: dict[Any, MemoryItem] = {}
        self._touched_at: dict[Any, float] = {}  # mem_id -> clock seconds of the last touch
        self._turn = 0
        self._sequence = 0
        self._log_threshold = math.log(1.0 / self.eviction_threshold)
        self._safe: dict[Any, float] = {}  # mem_id -> clock time before which it cannot be due
        self._watch: list[tuple[float, int, Any]] = []  # heap of (safe until, sequence, mem_id)
        self._candidates: dict[Any, None] = {}  # present items that can be due

    def _watch_item(self, mem_id: Any, item: MemoryItem, now: float) -> None:
        """File a touched item under the clock time before which it cannot be due (above)."""
        age, always = item.stability * self._log_threshold, self.eviction_threshold > 0.999
        safe = now + age * (1 - 1e-6) - 1e-9 * (1 + abs(now) + age) if math.isfinite(age) else math.inf
        self._safe[mem_id] = safe = -math.inf if always else safe
        self._candidates.pop(mem_id, None)
        heapq.heappush(self._watch, (safe, item.sequence, mem_id))

    def _now(self, turn: int) -> float:
        """The clock at ``turn``, in seconds: a finite real number, or ``ValueError``."""
        now = self.clock(turn)
        if not (type(now) is float and math.isfinite(now)) and not is_real(now):  # fast path first
            raise ValueError(
                f"the clock must read a finite real number of seconds, got {now!r} at turn {turn}"
            )
        return now

    @property
    def last_turn(self) -> int:
        """The turn of the latest accepted call (0 for a fresh engine); no call may go before it.

        :func:`~forgetting.studies.decay.simulation.simulate` reads it to refuse an engine that is not fresh.
        """
        return self._turn

    def register(
        self, mem_id: Hashable, content: str = "", turn: int = _REQUIRED, is_foundational: bool = False
    ) -> None:
        """Add an item touched now (``turn`` required, ``content`` a str, ``""`` if not given,
        ``is_foundational`` a bool); an id still present cannot be registered again. Ids and turns
        as the turn engines take them. Every argument is checked before the clock is read."""
        if type(turn) is not int or turn < self._turn:  # the checks, off the common path
            if turn is _REQUIRED:
                raise TypeError("register() missing 1 required argument: 'turn'")
            turn = _check_turn(turn, self._turn)
        if type(mem_id) is not str and type(mem_id) is not int:
            mem_id = _check_mem_id(mem_id)
        if type(content) is not str:
            raise ValueError(f"content must be a str (what the item holds), got {shown(content)}")
        if is_foundational is not False and is_foundational is not True:
            raise_problems([bool_problem("is_foundational", is_foundational)])
        if mem_id in self._items:
            raise ValueError(f"mem_id {mem_id!r} is already registered; ids must be unique while present")
        now = self._now(turn)
        self._turn = turn
        item = self._items[mem_id] = MemoryItem(
            mem_id, content, bool(is_foundational), turn, turn, 1, self.baseline_stability, self._sequence
        )
        self._touched_at[mem_id] = now
        self._sequence += 1
        self._watch_item(mem_id, item, now)

    def recall(self, mem_id: Hashable, turn: int) -> bool:
        """Touch and reinforce an item now; ``False`` (and no change) when it is not present."""
        if type(turn) is not int or turn < self._turn:
            turn = _check_turn(turn, self._turn)
        if type(mem_id) is not str and type(mem_id) is not int:
            mem_id = _check_mem_id(mem_id)
        now = self._now(turn)
        self._turn = turn
        item = self._items.get(mem_id)
        if item is None:
            return False
        item.touch_count += 1
        item.last_touched = turn
        item.stability = reinforced_stability(item.stability, item.touch_count)
        self._touched_at[mem_id] = now
        self._watch_item(mem_id, item, now)
        return True

    def step(self, turn: int) -> list[Any]:
        """Evict every item whose retention, read on the clock now, is below ``theta``."""
        if type(turn) is not int or turn < self._turn:
            turn = _check_turn(turn, self._turn)
        now = self._now(turn)
        self._turn = turn
        watch, safe, candidates = self._watch, self._safe, self._candidates
        while watch and watch[0][0] <= now:
            until, _, mem_id = heapq.heappop(watch)
            if safe.get(mem_id) == until:  # its latest entry (a touch leaves the older behind)
                candidates[mem_id] = None
        # Every t is the difference of two finite clock readings (_now) and every S a float > 0,
        # so this loop, the hot one, reads retention without checking them again.
        touched, threshold, items = self._touched_at, self.eviction_threshold, self._items
        due = [
            mem_id
            for mem_id in candidates
            if unchecked_retention(now - touched[mem_id], items[mem_id].stability) < threshold
        ]
        due.sort(key=lambda mem_id: items[mem_id].sequence)  # registration order
        for mem_id in due:
            del items[mem_id], touched[mem_id], safe[mem_id], candidates[mem_id]
        return due


def clock_runs(
    config: SessionConfig,
    n_seeds: int,
    clock_for: Callable[[int], Clock],
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
    baseline_stability: float = DEFAULT_BASELINE_STABILITY,
) -> list[dict[str, Any]]:
    """Sessions ``0..n_seeds-1`` of ``config`` through :class:`WallClockEngine`, session ``seed``
    on the clock ``clock_for(seed)``. Rows as :func:`forgetting.studies.decay.study.run_session` returns
    them. The clock is the caller's: a :class:`VirtualClock` (:func:`wallclock_runs`) or a real one."""
    require_int("n_seeds", n_seeds, minimum=1)
    rows = []
    for seed in range(n_seeds):
        engine = WallClockEngine(clock_for(seed), eviction_threshold, baseline_stability)
        trace = simulate(engine, generate_session(config.replace(seed=seed)))
        rows.append({"seed": seed, **metrics.session_summary(trace)})
    return rows


def wallclock_runs(
    config: SessionConfig,
    n_seeds: int,
    rerun: int,
    latency: LatencyModel = LatencyModel(),
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
    baseline_stability: float = DEFAULT_BASELINE_STABILITY,
) -> list[dict[str, Any]]:
    """One run of the first draft over sessions ``0..n_seeds-1`` of ``config``: session ``seed`` on
    ``VirtualClock(f"{rerun}/{seed}", latency)`` (only turn durations differ between reruns). The
    rows :func:`clock_runs` gives on those clocks, without replaying events (:mod:`.wallclock_batch`).
    """
    require_int("rerun", rerun, minimum=0)
    return clock_rows(
        config,
        n_seeds,
        lambda seed: VirtualClock(f"{rerun}/{seed}", latency),
        eviction_threshold,
        baseline_stability,
    )


def rerun_spread(runs: Sequence[Sequence[dict[str, Any]]]) -> dict[str, float | int]:
    """What a rerun alarm sees over several runs of the same sessions.

    ``runs`` holds one list of per-session rows per rerun. Returns the lowest and highest
    mean terminal FRR (``frr_min``, ``frr_max``) and footprint reduction over reruns, and
    ``distinct_digests``: how many different digests the reruns' rows have (1 means every
    rerun gave the same bytes).
    """
    if not runs:
        raise ValueError("runs must hold at least one rerun, got none")
    frr = [stats.summarize([r["terminal_frr"] for r in rows]).mean for rows in runs]
    footprint = [stats.summarize([r["footprint_reduction"] for r in rows]).mean for rows in runs]
    return {
        "frr_min": min(frr),
        "frr_max": max(frr),
        "footprint_min": min(footprint),
        "footprint_max": max(footprint),
        "distinct_digests": len({digest(list(rows)) for rows in runs}),
    }


def rerun_table(runs_by_engine: Mapping[str, Sequence[Sequence[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """One row per engine and rerun: mean and sd over seeds of FRR and footprint, and a digest.

    ``digest`` is the first 16 hex digits of the digest of that rerun's per-session rows.
    """
    rows = []
    for engine, runs in runs_by_engine.items():
        for rerun, sessions in enumerate(runs):
            frr = stats.summarize([r["terminal_frr"] for r in sessions])
            footprint = stats.summarize([r["footprint_reduction"] for r in sessions])
            rows.append(
                {
                    "engine": engine,
                    "rerun": rerun,
                    "frr_mean": frr.mean,
                    "frr_sd": frr.sd,
                    "footprint_reduction_mean": footprint.mean,
                    "footprint_reduction_sd": footprint.sd,
                    "digest": digest(list(sessions))[:16],
                }
            )
    return rows


def robustness_grid(
    config: SessionConfig,
    n_seeds: int,
    n_reruns: int,
    sigmas: Sequence[float],
    speeds: Sequence[float],
    median_seconds: float = DEFAULT_MEDIAN_LATENCY,
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
    baseline_stability: float = DEFAULT_BASELINE_STABILITY,
) -> list[dict[str, Any]]:
    """:func:`rerun_spread` of ``n_reruns`` reruns for every latency shape and machine speed.

    One row per ``(sigma, speed)``, sigma-major: whether the first draft's verdict hinges on
    the latency distribution the article never states.
    """
    require_int("n_reruns", n_reruns, minimum=1)
    rows = []
    for sigma in sigmas:
        for speed in speeds:
            latency = LatencyModel(median_seconds, sigma, speed)
            runs = [
                wallclock_runs(config, n_seeds, rerun, latency, eviction_threshold, baseline_stability)
                for rerun in range(n_reruns)
            ]
            rows.append({"sigma": sigma, "speed": speed, **rerun_spread(runs)})
    return rows


def grid_summary(grid: Sequence[Mapping[str, Any]], sigma: float) -> dict[str, Any]:
    """What the page says of a :func:`robustness_grid`: counts over its settings and its two ends.

    ``settings`` (rows), ``digests_differ`` / ``footprint_moves`` / ``frr_moves`` (settings whose
    reruns differ in digest, in mean footprint reduction, in mean FRR), ``frr_low`` / ``frr_high``
    (lowest ``frr_min`` and highest ``frr_max`` of the grid), and, at the shape ``sigma``, the
    slowest speed's ``slowest_frr_max`` and the fastest speed's ``fastest_footprint_max``, with
    ``slowest_factor`` (``1 / slowest speed``) and ``fastest_speed``. ``sigma`` must be a shape
    of the grid.
    """
    if not grid:
        raise ValueError("grid must hold at least one setting, got none")
    shape = [r for r in grid if r["sigma"] == sigma]
    if not shape:
        raise ValueError(
            f"sigma must be a shape of the grid ({sorted({r['sigma'] for r in grid})}), got {shown(sigma)}"
        )
    slowest = min(shape, key=lambda r: r["speed"])
    fastest = max(shape, key=lambda r: r["speed"])
    return {
        "settings": len(grid),
        "digests_differ": sum(r["distinct_digests"] > 1 for r in grid),
        "footprint_moves": sum(r["footprint_min"] < r["footprint_max"] for r in grid),
        "frr_moves": sum(r["frr_min"] < r["frr_max"] for r in grid),
        "frr_low": min(r["frr_min"] for r in grid),
        "frr_high": max(r["frr_max"] for r in grid),
        "slowest_factor": 1 / slowest["speed"],
        "slowest_frr_max": slowest["frr_max"],
        "fastest_speed": fastest["speed"],
        "fastest_footprint_max": fastest["footprint_max"],
    }


def grid_series(
    grid: Sequence[Mapping[str, Any]], sigmas: Sequence[float], spread: float = 0.04
) -> list[dict[str, Any]]:
    """What the robustness figure draws of a :func:`robustness_grid`: one series per shape in
    ``sigmas`` (in that order), its rows in the grid's order.

    Each series: ``sigma``; ``speeds``, each row's speed times ``1 + spread * (i - (n - 1) / 2)``
    for the ``i``-th of ``n`` shapes (so that the shapes' bars stand side by side on a log axis);
    and for ``frr`` and ``footprint`` the rows' ``<measure>_min``, ``<measure>_max`` and their
    midpoint ``<measure>_mid``. ``ValueError`` for a shape with no row in the grid.
    """
    series = []
    for index, sigma in enumerate(sigmas):
        rows = [r for r in grid if r["sigma"] == sigma]
        if not rows:
            raise ValueError(f"sigma {shown(sigma)} has no row in the grid")
        offset = 1 + spread * (index - (len(sigmas) - 1) / 2)
        entry: dict[str, Any] = {"sigma": sigma, "speeds": [r["speed"] * offset for r in rows]}
        for measure in ("frr", "footprint"):
            low, high = f"{measure}_min", f"{measure}_max"
            entry[low] = [r[low] for r in rows]
            entry[high] = [r[high] for r in rows]
            entry[f"{measure}_mid"] = [(r[low] + r[high]) / 2 for r in rows]
        series.append(entry)
    return series
