"""Experiment 5's shift derivation from either start, and the stale memory's end value against k.

:func:`~forgetting.studies.text.shift.inferred_shift_episode` places the shift where a cumulative
Memory Worth falling from a start value ends at a target. The chapter's shift starts that fall
at the paper's pre-shift value; :func:`derived_shift` does the same from any start (the
paper's, or the world's own exact pre-shift ``p+``), and :func:`expected_end_value` gives the
end value a start, a shift and the world's rates imply. :func:`depth_sweep` repeats the
world, its rates, both derivations and the simulated end value at each retrieval depth ``k``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..._validate import int_problem, raise_problems, real_problem
from ...worth import LOW_VALUE
from .corpus import Corpus
from .exp5 import RealTextWorld
from .retrieval import CorpusEmbeddings
from .shift import inferred_shift_episode, stale_rates
from .summary import seed_summaries, summary_mean_sd

__all__ = [
    "DEPTH_KEYS",
    "derived_shift",
    "expected_end_value",
    "depth_sweep",
    "retrieved_rows",
    "depth_values",
]

#: Summary keys whose mean and sd over seeds each row of :func:`depth_sweep` reports.
DEPTH_KEYS = ("stale_mw_before", "stale_mw_after")


def _rates_problems(rates: dict[str, float]) -> list[str | None]:
    return [
        real_problem("rates['rate_before']", rates.get("rate_before"), 0.0, 1.0, low_open=True),
        real_problem("rates['rate_after']", rates.get("rate_after"), 0.0, 1.0, low_open=True),
        real_problem("rates['p_plus_after']", rates.get("p_plus_after"), 0.0, 1.0),
    ]


def derived_shift(start: float, target: float, rates: dict[str, float], n_episodes: int) -> int | None:
    """The shift episode at which the stale memory's expected MW falls from ``start`` to ``target``.

    :func:`~forgetting.studies.text.shift.inferred_shift_episode` with the world's post-shift success
    rate ``rates["p_plus_after"]`` and retrieval ratio ``rates["rate_after"] / rates["rate_before"]``
    (:func:`~forgetting.studies.text.shift.stale_rates`): ``s = n / (1 + rho / (r_a / r_b))`` with
    ``rho = (start - target) / (target - p_a)``. ``None`` when no shift reaches ``target``
    (``target`` not strictly between ``p_a`` and ``start``). Raises ``ValueError`` for rates
    outside ``(0, 1]`` (a memory never retrieved has no shift) or a bad ``n_episodes``.
    """
    raise_problems(
        [
            *_rates_problems(rates),
            real_problem("start", start, 0.0, 1.0),
            real_problem("target", target, 0.0, 1.0),
        ]
    )
    if not rates["p_plus_after"] < target < start:
        return None
    return inferred_shift_episode(
        start, target, rates["p_plus_after"], n_episodes, rates["rate_after"] / rates["rate_before"]
    )


def expected_end_value(start: float, rates: dict[str, float], shift_episode: int, n_episodes: int) -> float:
    """Expected end MW of the stale memory: ``(s r_b start + (n - s) r_a p_a) / (s r_b + (n - s) r_a)``.

    ``s`` episodes before the shift at success rate ``start`` and retrieval rate
    ``r_b = rates["rate_before"]``, ``n - s`` after at ``p_a = rates["p_plus_after"]`` and
    ``r_a = rates["rate_after"]``: the ratio of the expected counters, as in
    :func:`~forgetting.studies.text.exp5.expected_worth` (which uses the world's own ``p+`` as
    ``start``). Raises ``ValueError`` unless ``1 <= shift_episode < n_episodes`` and the rates
    lie in ``(0, 1]``.
    """
    raise_problems(
        [
            *_rates_problems(rates),
            real_problem("start", start, 0.0, 1.0),
            int_problem("n_episodes", n_episodes, 2),
            int_problem(
                "shift_episode", shift_episode, 1, n_episodes - 1 if isinstance(n_episodes, int) else None
            ),
        ]
    )
    before = shift_episode * rates["rate_before"]
    after = (n_episodes - shift_episode) * rates["rate_after"]
    return (before * start + after * rates["p_plus_after"]) / (before + after)


def depth_sweep(
    corpus: Corpus,
    vectors: CorpusEmbeddings,
    world: RealTextWorld,
    ks: Sequence[int],
    n_seeds: int,
    paper_start: float,
    target: float,
) -> list[dict[str, Any]]:
    """``world`` at each retrieval depth in ``ks`` (shift, task mix and outcome rule unchanged).

    One row per ``k``: the stale memory's exact retrieval rates and ``p+`` of each phase
    (:func:`~forgetting.studies.text.shift.stale_rates`); the shift :func:`derived_shift` gives from
    ``paper_start`` and from the world's own pre-shift ``p+`` (``None`` where the stale memory
    is never retrieved or ``target`` is out of reach); the :func:`expected_end_value` from
    the own start at ``world.shift_episode``; and over seeds
    ``0 .. n_seeds - 1`` the mean and sample sd of :data:`DEPTH_KEYS` and the number of seeds
    in which the stale memory ends low-value. Where the stale memory is never retrieved, its
    ``p+`` and expected end are ``None`` (undefined). Raises ``ValueError`` for a bad ``n_seeds`` or ``k``.
    """
    raise_problems([int_problem("n_seeds", n_seeds, 2), *(int_problem("k", k, 1) for k in ks)])
    rows = []
    for k in ks:
        variant = replace(world, k=int(k))
        rates = stale_rates(corpus, vectors, variant)
        retrieved = rates["rate_before"] > 0 and rates["rate_after"] > 0
        row: dict[str, Any] = {"k": int(k)}
        for key in ("rate_before", "rate_after", "p_plus_before", "p_plus_after"):
            row[f"stale_{key}"] = rates[key] if retrieved or key.startswith("rate") else None
        n = world.n_episodes
        row["shift_from_paper_start"] = derived_shift(paper_start, target, rates, n) if retrieved else None
        own = rates["p_plus_before"]
        row["shift_from_own_start"] = derived_shift(own, target, rates, n) if retrieved else None
        row["expected_end"] = expected_end_value(own, rates, world.shift_episode, n) if retrieved else None
        runs = seed_summaries(corpus, vectors, variant, n_seeds)
        for key in DEPTH_KEYS:
            row[f"{key}_mean"], row[f"{key}_sd"] = summary_mean_sd(runs, key)
        row["seeds_stale_low_value"] = sum(r["stale_class_after"] == LOW_VALUE for r in runs)
        row["n_seeds"] = n_seeds
        rows.append(row)
    return rows


def retrieved_rows(depth_rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of a :func:`depth_sweep` at which the stale memory is retrieved in both phases."""
    return [row for row in depth_rows if row["stale_rate_before"] > 0 and row["stale_rate_after"] > 0]


def depth_values(
    depth_rows: Sequence[dict[str, Any]], depths: Sequence[int], paper_after: float
) -> dict[str, int | float | str | bool]:
    """The numbers and words the chapter states about a :func:`depth_sweep` over ``depths``.

    The depths at which the stale memory is never retrieved (in words, ``"none"`` if there are
    none, and their count) and those at which it is; over the latter, the range of its mean end
    value, its largest distance from the expected end, the ranges of the shifts derived from the
    paper's start and from the world's own, and whether at every such depth the end value is
    below ``paper_after``, low-value in every seed, and the own-start shift later.
    """
    retrieved = retrieved_rows(depth_rows)
    never = [row["k"] for row in depth_rows if row not in retrieved]
    return {
        "depth_ks": ", ".join(str(value) for value in depths),
        "depth_never_retrieved": ", ".join(str(value) for value in never) if never else "none",
        "depth_n_never": len(never),
        "depth_retrieved_ks": ", ".join(str(row["k"]) for row in retrieved),
        "depth_end_low": min(row["stale_mw_after_mean"] for row in retrieved),
        "depth_end_high": max(row["stale_mw_after_mean"] for row in retrieved),
        "depth_expected_max_gap": max(
            abs(row["stale_mw_after_mean"] - row["expected_end"]) for row in retrieved
        ),
        "depth_paper_shift_low": min(row["shift_from_paper_start"] for row in retrieved),
        "depth_paper_shift_high": max(row["shift_from_paper_start"] for row in retrieved),
        "depth_own_shift_low": min(row["shift_from_own_start"] for row in retrieved),
        "depth_own_shift_high": max(row["shift_from_own_start"] for row in retrieved),
        "depth_all_below_paper": all(row["stale_mw_after_mean"] < paper_after for row in retrieved),
        "depth_all_low_value": all(row["seeds_stale_low_value"] == row["n_seeds"] for row in retrieved),
        "depth_own_later": all(
            row["shift_from_own_start"] > row["shift_from_paper_start"] for row in retrieved
        ),
    }
