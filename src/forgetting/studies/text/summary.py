"""The headline numbers of one Experiment 5 run, and the same over seeds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..._validate import int_problem, raise_problems
from ...worth import UNCERTAIN
from ..stats import mean_sd
from .corpus import AFTER, BEFORE, Corpus
from .exp5 import RealTextRun, RealTextWorld, exact_p_plus, expected_worth, run_episodes
from .retrieval import CorpusEmbeddings

__all__ = ["summarise", "seed_summaries", "seed_summary", "summary_mean_sd"]


def _only(corpus: Corpus, role: str) -> int:
    ids = corpus.ids_with_role(role)
    if len(ids) != 1:
        raise ValueError(f"Experiment 5 needs exactly one memory with role {role!r}, corpus has {ids}")
    return corpus.index(ids[0])


def _mean_settled(worth: np.ndarray, classes: np.ndarray, mask: np.ndarray) -> tuple[float, int]:
    chosen = mask & (classes != UNCERTAIN)
    return (float(worth[chosen].mean()) if chosen.any() else float("nan")), int(chosen.sum())


def summarise(run: RealTextRun) -> dict[str, Any]:
    """The headline numbers of one run, as plain Python values.

    Keys: ``stale_mw_before`` / ``stale_mw_after`` (MW of the stale memory just before the
    shift and at the end), their classes and evidence, ``stale_low_value_episode`` (first
    episode, 1-based, after the shift at which the stale memory is low-value; -1 if never),
    ``stale_p_plus_before`` / ``_after`` (exact ``p+`` of each phase), ``stale_expected_after``
    (:func:`~forgetting.studies.text.exp5.expected_worth`), the corrected memory's MW and class, the
    success rate of each phase, and the role means. Role means (``specialist_mw_mean`` ...)
    average the final MW over the memories of that
    role that have enough evidence (not ``uncertain``); ``n_<role>`` says how many.
    """
    corpus, world = run.corpus, run.world
    stale, corrected = _only(corpus, "stale"), _only(corpus, "corrected")
    roles = corpus.roles
    before, end = run.last_before, run.n_episodes - 1
    worth_before, worth_end = run.worth(before), run.worth(end)
    classes_before, classes_end = run.classes(before), run.classes(end)
    trajectory = run.trajectory[:, stale]
    stale_evidence = run.successes[:, stale] + run.failures[:, stale]
    low = np.flatnonzero(
        (trajectory <= world.low_threshold)
        & (stale_evidence >= world.min_evidence)
        & (np.arange(run.n_episodes) >= world.shift_episode)
    )
    out: dict[str, Any] = {
        "episodes": run.n_episodes,
        "shift_episode": world.shift_episode,
        "stale_id": corpus.memory_ids[stale],
        "corrected_id": corpus.memory_ids[corrected],
        "stale_mw_before": float(worth_before[stale]),
        "stale_mw_after": float(worth_end[stale]),
        "stale_class_before": str(classes_before[stale]),
        "stale_class_after": str(classes_end[stale]),
        "stale_evidence_before": float(run.evidence(before)[stale]),
        "stale_evidence_after": float(run.evidence(end)[stale] - run.evidence(before)[stale]),
        "stale_low_value_episode": int(low[0]) + 1 if low.size else -1,
        "stale_p_plus_before": float(
            exact_p_plus(corpus, run.retrieval[BEFORE], run.type_weights[BEFORE])[0][stale]
        ),
        "stale_p_plus_after": float(
            exact_p_plus(corpus, run.retrieval[AFTER], run.type_weights[AFTER])[0][stale]
        ),
        "stale_expected_after": float(expected_worth(run)[stale]),
        "corrected_mw_after": float(worth_end[corrected]),
        "corrected_class_after": str(classes_end[corrected]),
        "success_rate_before": float(run.success[~run.after].mean()),
        "success_rate_after": float(run.success[run.after].mean()),
    }
    for role in ("specialist", "hitchhiker", "general"):
        mean, count = _mean_settled(worth_end, classes_end, roles == role)
        out[f"{role}_mw_mean"] = mean
        out[f"n_{role}"] = count
    return out


def seed_summaries(
    corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld, n_seeds: int
) -> list[dict[str, Any]]:
    """:func:`summarise` of ``world`` run with seeds ``0 .. n_seeds - 1``.

    Raises ``ValueError`` if ``n_seeds`` is not an int >= 1.
    """
    raise_problems([int_problem("n_seeds", n_seeds, 1)])
    return [summarise(run_episodes(corpus, vectors, replace(world, seed=seed))) for seed in range(n_seeds)]


def seed_summary(
    corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld, n_seeds: int, keys: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """Mean and sample sd of summary ``keys`` over seeds ``0 .. n_seeds - 1`` (``n_seeds >= 2``).

    Raises ``ValueError`` if ``n_seeds`` is not an int >= 2.
    """
    raise_problems([int_problem("n_seeds", n_seeds, 2)])
    summaries = seed_summaries(corpus, vectors, world, n_seeds)
    return {key: summary_mean_sd(summaries, key) for key in keys}


def summary_mean_sd(summaries: Sequence[dict[str, Any]], key: str) -> tuple[float, float]:
    """Mean and sample sd (``n - 1``) of ``key`` over per-seed :func:`summarise` dicts.

    :func:`forgetting.studies.stats.mean_sd` (numpy's pairwise sums), so a ``nan`` in any seed gives
    ``nan``.
    """
    return mean_sd(np.array([s[key] for s in summaries], dtype=float))
