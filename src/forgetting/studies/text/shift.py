"""When did the paper's shift happen? Experiment 5 against the episode of the phase shift.

The paper gives the number of episodes and the stale memory's worth before and after the
shift (``data/published.yaml``), but no shift episode. With cumulative counters the end
value is an evidence-weighted average of the two phases
(:func:`~forgetting.studies.text.exp5.expected_worth`), so the published pair fixes how much
post-shift evidence there must have been relative to pre-shift evidence
(:func:`~forgetting.studies.text.exp5.evidence_ratio_needed`); with the retrieval rates of a world,
that ratio fixes the shift episode (:func:`inferred_shift_episode`). :func:`shift_sweep`
shows the whole curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..._validate import int_problem, raise_problems, real_problem
from ...worth import LOW_VALUE
from .corpus import AFTER, BEFORE, Corpus
from .exp5 import RealTextWorld, evidence_ratio_needed, exact_p_plus
from .retrieval import CorpusEmbeddings, retrieve
from .summary import seed_summaries, summary_mean_sd

__all__ = [
    "SWEEP_KEYS",
    "stale_rates",
    "inferred_shift_episode",
    "shift_sweep",
    "sweep_values",
    "low_value_up_to_a_shift",
]

#: Summary keys whose mean and sd over seeds each row of :func:`shift_sweep` reports.
SWEEP_KEYS = ("stale_mw_before", "stale_mw_after", "specialist_mw_mean", "hitchhiker_mw_mean")


def stale_rates(corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld) -> dict[str, float]:
    """Exact retrieval probability per episode and ``p+`` of the stale memory in each phase.

    Keys ``rate_before``, ``rate_after``, ``p_plus_before``, ``p_plus_after``
    (:func:`~forgetting.studies.text.exp5.exact_p_plus`; the world's task mix of each phase).
    """
    stale = corpus.index(corpus.ids_with_role("stale")[0])
    out = {}
    for phase, name in ((BEFORE, "before"), (AFTER, "after")):
        weights = corpus.type_weights(phase)
        if phase == AFTER and world.type_weights_after is not None:
            weights = np.asarray(world.type_weights_after, dtype=np.float64) / sum(world.type_weights_after)
        p_plus, rate = exact_p_plus(corpus, retrieve(corpus, vectors, phase, world.k, world.outcome), weights)
        out[f"rate_{name}"] = float(rate[stale])
        out[f"p_plus_{name}"] = float(p_plus[stale])
    return out


def inferred_shift_episode(
    start: float, target: float, rate_after: float, n_episodes: int, retrieval_ratio: float = 1.0
) -> int:
    """The shift episode at which a cumulative MW falls from ``start`` to ``target`` at the end.

    Post-shift evidence must be ``rho = (start - target) / (target - rate_after)`` times the
    pre-shift evidence (:func:`~forgetting.studies.text.exp5.evidence_ratio_needed`). With ``s``
    episodes before the shift, ``n - s`` after, and the stale memory retrieved
    ``retrieval_ratio`` times as often per episode after the shift as before,
    ``(n - s) retrieval_ratio = rho s``, so ``s = n / (1 + rho / retrieval_ratio)``, rounded to
    the nearest episode.

    Raises ``ValueError`` if ``target`` is not between ``rate_after`` and ``start`` (no shift
    episode reaches it), or for a bad ``n_episodes`` or ``retrieval_ratio``.
    """
    problems = [
        int_problem("n_episodes", n_episodes, 2),
        real_problem("retrieval_ratio", retrieval_ratio, 0.0, low_open=True),
    ]
    if not rate_after < target < start:
        problems.append(
            f"target must lie strictly between rate_after and start, got rate_after={rate_after!r}, "
            f"target={target!r}, start={start!r}"
        )
    raise_problems(problems)
    ratio = evidence_ratio_needed(start, target, rate_after)
    return round(n_episodes / (1.0 + ratio / retrieval_ratio))


def shift_sweep(
    corpus: Corpus,
    vectors: CorpusEmbeddings,
    world: RealTextWorld,
    shift_episodes: Sequence[int],
    n_seeds: int,
) -> list[dict[str, Any]]:
    """``world`` with each shift episode, over seeds ``0 .. n_seeds - 1``: one row per shift.

    Each row: ``shift_episode``, mean and sample sd over seeds of every :data:`SWEEP_KEYS`
    entry (``<key>_mean``, ``<key>_sd``), the number of seeds in which the stale memory ends
    low-value, and ``n_seeds``. Raises ``ValueError`` for a bad ``n_seeds`` or shift episode.
    """
    raise_problems([int_problem("n_seeds", n_seeds, 2)])
    rows = []
    for shift in shift_episodes:
        runs = seed_summaries(corpus, vectors, replace(world, shift_episode=shift), n_seeds)
        row: dict[str, Any] = {"shift_episode": int(shift)}
        for key in SWEEP_KEYS:
            row[f"{key}_mean"], row[f"{key}_sd"] = summary_mean_sd(runs, key)
        row["seeds_stale_low_value"] = sum(r["stale_class_after"] == LOW_VALUE for r in runs)
        row["n_seeds"] = n_seeds
        rows.append(row)
    return rows


def sweep_values(sweep: Sequence[dict[str, Any]]) -> dict[str, int | float | bool]:
    """The numbers the chapter states about a :func:`shift_sweep` (rows in increasing shift).

    The first and last shift with the stale memory's end value there (mean and sd), the last
    shift at which it is low-value in every seed (``-1`` if none), the range of its pre-shift
    value and of the specialists' end value over the sweep, and whether its end value rises
    strictly with the shift episode.
    """
    after_means = [row["stale_mw_after_mean"] for row in sweep]
    all_low = [row["shift_episode"] for row in sweep if row["seeds_stale_low_value"] == row["n_seeds"]]
    return {
        "sweep_first_shift": sweep[0]["shift_episode"],
        "sweep_last_shift": sweep[-1]["shift_episode"],
        "sweep_first_after": sweep[0]["stale_mw_after_mean"],
        "sweep_first_after_sd": sweep[0]["stale_mw_after_sd"],
        "sweep_last_after": sweep[-1]["stale_mw_after_mean"],
        "sweep_last_after_sd": sweep[-1]["stale_mw_after_sd"],
        "sweep_last_all_low": max(all_low) if all_low else -1,
        "sweep_before_low": min(row["stale_mw_before_mean"] for row in sweep),
        "sweep_before_high": max(row["stale_mw_before_mean"] for row in sweep),
        "sweep_specialist_low": min(row["specialist_mw_mean_mean"] for row in sweep),
        "sweep_specialist_high": max(row["specialist_mw_mean_mean"] for row in sweep),
        "sweep_after_increasing": bool(all(a < b for a, b in zip(after_means, after_means[1:]))),
    }


def low_value_up_to_a_shift(sweep: Sequence[dict[str, Any]]) -> bool:
    """True when the shifts at which the stale memory ends low-value in every seed are the
    sweep's first ones: "low-value in every seed up to episode ...", with no gap."""
    flags = [row["seeds_stale_low_value"] == row["n_seeds"] for row in sweep]
    return flags == sorted(flags, reverse=True)
