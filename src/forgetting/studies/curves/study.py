"""Does the curve's shape change the decay engine's conclusions? Each comparison as one function.

Both engines run the same seeded sessions. The power-law engine
(:class:`~forgetting.curves.power_engine.PowerLawEngine`) has *matched grace periods*: its ``S0``
is chosen (:func:`~forgetting.curves.families.matched_power_stability`) so that a plain item
crosses ``theta`` at the same continuous time ``S0 ln(1/theta)`` as under the exponential.
Both crossing times are linear in ``S`` and both engines multiply ``S`` by the same factor on
each recall, so matched items stay matched after any number of recalls: at the matching
threshold the two engines can differ only where float rounding moves a boundary by one turn.
Away from it (the frontier sweeps ``theta`` with ``S0`` fixed) the curves' tails part, and the
decisions with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..._validate import require_int
from ...curves.families import equivalent_exponential_threshold, power_eviction_delay
from ...curves.power_engine import PowerLawEngine
from ...decay.curves import DEFAULT_BASELINE_STABILITY, DEFAULT_EVICTION_THRESHOLD, stability_after_recalls
from ...decay.engines import Engine
from ..decay import batch
from ..decay.policies import EngineKind
from ..decay.sessions import SessionConfig, generate_session
from ..decay.simulation import Trace, simulate
from ..decay.study import DecayPolicy, run_seeds, summarize_runs

__all__ = [
    "PowerPolicy",
    "CurvePolicy",
    "run_curve_seeds",
    "curve_headline",
    "curve_noise_sweep",
    "curve_frontier",
    "differing_sessions",
    "fact_fates",
    "equivalent_exponential",
    "relabelling_check",
    "matched_differing_count",
    "headline_pair",
    "noise_max_frr_gap",
    "grace_at",
    "relabelling_summary",
]


@dataclass(frozen=True)
class PowerPolicy:
    """The power-law engine, matched to the exponential at ``match_threshold``.

    Attributes
    ----------
    decay : float
        ``d``, the power law's decay exponent.
    eviction_threshold : float, default 0.20
        ``theta`` the engine evicts at.
    match_threshold : float, default 0.20
        ``theta`` at which a plain item's crossing equals the exponential's at ``S0``.
    exponential_stability : float, default 8.0
        The exponential engine's ``S0`` being matched.
    """

    decay: float
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD
    match_threshold: float = DEFAULT_EVICTION_THRESHOLD
    exponential_stability: float = DEFAULT_BASELINE_STABILITY
    kind: ClassVar[EngineKind] = EngineKind.POWER

    def engine(self) -> PowerLawEngine:
        """A fresh matched :class:`~forgetting.curves.power_engine.PowerLawEngine`."""
        return PowerLawEngine.matched(
            decay=self.decay,
            eviction_threshold=self.eviction_threshold,
            exponential_stability=self.exponential_stability,
            match_threshold=self.match_threshold,
        )

    @property
    def label(self) -> str:
        """Name for tables and legends, e.g. ``power law (d = 0.5, θ = 0.20)``."""
        return f"power law (d = {self.decay:g}, θ = {self.eviction_threshold:.2f})"

    @property
    def grace_turns(self) -> int:
        """Turns after its last touch at which an unreinforced item is evicted."""
        delay = power_eviction_delay(self.engine().baseline_stability, self.eviction_threshold, self.decay)
        assert delay is not None  # S0 is finite, so the delay is too
        return delay

    def eviction_delays(self, max_recalls: int) -> tuple[int | None, ...]:
        """Eviction delay after ``0 .. max_recalls`` recalls, as the engine computes it: the power
        law's delay at the stability its recalls reach (the same multiplications,
        :func:`~forgetting.decay.curves.stability_after_recalls`)."""
        s0 = self.engine().baseline_stability
        return tuple(
            power_eviction_delay(stability_after_recalls(k, s0), self.eviction_threshold, self.decay)
            for k in range(max_recalls + 1)
        )


CurvePolicy = DecayPolicy | PowerPolicy
"""An engine of either curve."""


def _trace(policy: CurvePolicy, config: SessionConfig) -> Trace:
    engine: Engine = policy.engine()
    return simulate(engine, generate_session(config))


def run_curve_seeds(policy: CurvePolicy, config: SessionConfig, n_seeds: int) -> list[dict[str, Any]]:
    """Per-session metrics (:func:`~forgetting.studies.decay.metrics.session_summary`) for seeds
    ``0..n_seeds-1``, from the batch simulator (:mod:`~forgetting.studies.decay.batch`): both engines are
    schedules whose eviction delay depends only on an item's recall count
    (``policy.eviction_delays``), which is what the batch replays."""
    return run_seeds(policy, config, n_seeds)


def _policies(decays: Sequence[float], threshold: float, match: float) -> list[CurvePolicy]:
    return [DecayPolicy(threshold), *(PowerPolicy(d, threshold, match) for d in decays)]


def _curve_columns(policy: CurvePolicy) -> dict[str, Any]:
    if isinstance(policy, PowerPolicy):
        return {"curve": "power", "decay": policy.decay, "grace_turns": policy.grace_turns}
    return {"curve": "exponential", "decay": float("nan"), "grace_turns": policy.grace_turns}


def curve_headline(
    config: SessionConfig,
    n_seeds: int,
    decays: Sequence[float],
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
) -> list[dict[str, Any]]:
    """One summary row (:func:`~forgetting.studies.decay.study.summarize_runs`) per curve: the
    exponential, then each ``d``."""
    return [
        {**_curve_columns(p), **summarize_runs(run_curve_seeds(p, config, n_seeds))}
        for p in _policies(decays, eviction_threshold, eviction_threshold)
    ]


def curve_noise_sweep(
    config: SessionConfig,
    noise_levels: Sequence[int],
    n_seeds: int,
    decays: Sequence[float],
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
) -> list[dict[str, Any]]:
    """Terminal FRR mean and sd of every curve at every noise level (a table, never a fitted slope)."""
    rows = []
    for noise in noise_levels:
        noisy = config.replace(noise_per_turn=noise)
        for policy in _policies(decays, eviction_threshold, eviction_threshold):
            summary = summarize_runs(run_curve_seeds(policy, noisy, n_seeds))
            rows.append(
                {"noise_per_turn": noise, **_curve_columns(policy), "frr_mean": summary["frr_mean"],
                 "frr_sd": summary["frr_sd"], "footprint_reduction_mean": summary["footprint_reduction_mean"]}
            )  # fmt: skip
    return rows


def curve_frontier(
    config: SessionConfig,
    n_seeds: int,
    thresholds: Sequence[float],
    decays: Sequence[float],
    match_threshold: float = DEFAULT_EVICTION_THRESHOLD,
) -> list[dict[str, Any]]:
    """Terminal FRR against footprint as ``theta`` is swept, ``S0`` held at its match at ``match_threshold``."""
    rows = []
    for threshold in thresholds:
        for policy in _policies(decays, threshold, match_threshold):
            summary = summarize_runs(run_curve_seeds(policy, config, n_seeds))
            rows.append(
                {"threshold": threshold, **_curve_columns(policy), "terminal_frr_mean": summary["frr_mean"],
                 "terminal_frr_sd": summary["frr_sd"], "footprint_reduction_mean": summary["footprint_reduction_mean"],
                 "footprint_reduction_sd": summary["footprint_reduction_sd"]}
            )  # fmt: skip
    return rows


def differing_sessions(
    config: SessionConfig, n_seeds: int, first: CurvePolicy, second: CurvePolicy
) -> list[dict[str, Any]]:
    """Seeds whose sessions end differently under two policies: terminal FRR, footprint, evictions.

    One row per seed where the set of (item, eviction turn) pairs differs, with both terminal
    FRRs and footprint reductions and the number of items evicted at different turns. From the
    batch simulator (as :func:`run_curve_seeds`): a fact's eviction turn is the session's, a noise
    item's the same in every session.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    delays = [policy.eviction_delays(config.recalls_per_foundational) for policy in (first, second)]
    rows = []
    for seeds, recall_turns in batch.seed_batches(config, n_seeds, "differing sessions"):
        a, b = (batch.replay_batch(policy_delays, config, recall_turns, seeds) for policy_delays in delays)
        noise_moved = int(np.count_nonzero(a.noise_evicted_turn != b.noise_evicted_turn))
        facts_moved = np.count_nonzero(a.fact_evicted_turn != b.fact_evicted_turn, axis=1).tolist()
        for seed, facts, one, two in zip(
            seeds, facts_moved, batch.session_summaries(a), batch.session_summaries(b)
        ):
            if moved := facts + noise_moved:
                rows.append(
                    {"seed": seed, "items_evicted_at_other_turns": moved,
                     "first_terminal_frr": one["terminal_frr"], "second_terminal_frr": two["terminal_frr"],
                     "first_footprint_reduction": one["footprint_reduction"],
                     "second_footprint_reduction": two["footprint_reduction"]}
                )  # fmt: skip
    return rows


def fact_fates(config: SessionConfig, policies: Sequence[CurvePolicy]) -> list[dict[str, Any]]:
    """For one session: each foundational fact's recall turns and its eviction turn under each policy.

    ``None`` as eviction turn means the fact is present at the last turn.
    """
    session = generate_session(config)
    traces = [_trace(policy, config) for policy in policies]
    return [
        {"fact": fact, "recall_turns": ", ".join(map(str, session.recall_turns(fact))),
         **{policy.label: trace.evicted_turn.get(fact) for policy, trace in zip(policies, traces)}}
        for fact in session.foundational_ids
    ]  # fmt: skip


def equivalent_exponential(policy: PowerPolicy) -> DecayPolicy:
    """The exponential engine (same ``S0``) that evicts exactly when ``policy``'s power law does.

    Its threshold is :func:`~forgetting.curves.families.equivalent_exponential_threshold`;
    ``ValueError`` when that threshold underflows to 0 (a crossing thousands of ``S0`` away).
    """
    engine = policy.engine()
    threshold = equivalent_exponential_threshold(
        engine.baseline_stability, policy.eviction_threshold, policy.decay, policy.exponential_stability
    )
    if not threshold > 0.0:
        raise ValueError(
            f"policy {policy.label} has no exponential equivalent: its threshold underflows to 0"
        )
    return DecayPolicy(threshold, policy.exponential_stability)


def relabelling_check(
    config: SessionConfig,
    n_seeds: int,
    thresholds: Sequence[float],
    decays: Sequence[float],
    match_threshold: float = DEFAULT_EVICTION_THRESHOLD,
) -> list[dict[str, Any]]:
    """Each power-law setting of the frontier beside its :func:`equivalent_exponential`, simulated.

    One row per (``theta``, ``d``): the equivalent exponential threshold and the number of seeds
    whose sessions end differently under the two (``None`` for both when the equivalent
    threshold underflows and only the formula speaks).
    """
    rows = []
    for threshold in thresholds:
        for decay in decays:
            policy = PowerPolicy(decay, threshold, match_threshold)
            try:
                twin = equivalent_exponential(policy)
            except ValueError:
                rows.append({"threshold": threshold, "decay": decay, "grace_turns": policy.grace_turns,
                             "equivalent_threshold": None, "sessions_differing": None})  # fmt: skip
                continue
            rows.append(
                {"threshold": threshold, "decay": decay, "grace_turns": policy.grace_turns,
                 "equivalent_threshold": twin.eviction_threshold,
                 "sessions_differing": len(differing_sessions(config, n_seeds, twin, policy))}
            )  # fmt: skip
    return rows


def matched_differing_count(
    config: SessionConfig,
    n_seeds: int,
    decays: Sequence[float],
    eviction_threshold: float,
    baseline_stability: float,
) -> int:
    """Sessions, summed over ``decays``, where the matched power law evicts any item at another turn.

    Each ``d`` compares :class:`PowerPolicy` ``(d, theta, theta, S0)`` with the exponential at
    ``(theta, S0)`` on seeds ``0 .. n_seeds - 1`` (:func:`differing_sessions`).
    """
    exponential = DecayPolicy(eviction_threshold, baseline_stability)
    return sum(
        len(differing_sessions(config, n_seeds, exponential,
                               PowerPolicy(d, eviction_threshold, eviction_threshold, baseline_stability)))
        for d in decays
    )  # fmt: skip


def headline_pair(rows: Sequence[dict[str, Any]], decay: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The exponential's row and the power law's row at ``decay`` of :func:`curve_headline`'s table."""
    exponential = [r for r in rows if r["curve"] == "exponential"]
    power = [r for r in rows if r["curve"] == "power" and r["decay"] == decay]
    if len(exponential) != 1 or len(power) != 1:
        raise ValueError(f"rows must hold one exponential row and one power row at decay {decay!r}")
    return exponential[0], power[0]


def noise_max_frr_gap(rows: Sequence[dict[str, Any]]) -> float:
    """``max |FRR_power - FRR_exponential|`` over :func:`curve_noise_sweep` rows at equal noise levels."""
    exponential = {r["noise_per_turn"]: r["frr_mean"] for r in rows if r["curve"] == "exponential"}
    gaps = [abs(r["frr_mean"] - exponential[r["noise_per_turn"]]) for r in rows if r["curve"] == "power"]
    if not gaps:
        raise ValueError("rows must hold power-law rows beside exponential ones at the same noise levels")
    return float(max(gaps))


def grace_at(rows: Sequence[dict[str, Any]], threshold: float, decay: float) -> tuple[Any, Any]:
    """Grace turns of the exponential and of the power law at ``decay``, at ``threshold`` of :func:`curve_frontier`."""
    at = [r for r in rows if r["threshold"] == threshold]
    exponential, power = headline_pair(at, decay)
    return exponential["grace_turns"], power["grace_turns"]


def relabelling_summary(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Of :func:`relabelling_check` rows: settings simulated, settings whose ``theta'`` underflows,
    and the sessions differing summed over the simulated ones."""
    simulated = [r["sessions_differing"] for r in rows if r["sessions_differing"] is not None]
    return {"simulated": len(simulated), "underflow": len(rows) - len(simulated),
            "sessions_differing": int(sum(simulated))}  # fmt: skip
