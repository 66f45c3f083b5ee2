"""Rows of the Experiment 5 chapter's tables: lists of plain dicts, one per row.

Each function returns what one table shows; the chapter writes it (CSV) and displays it.
Cosines shown are rounded to :data:`~forgetting.text.similarity.COSINE_DECIMALS` places.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..._validate import bool_problem, raise_problems
from ...text.similarity import rounded_cosines
from ...worth import LOW_VALUE, WORTH_CLASSES
from .corpus import AFTER, BEFORE, ROLES, Corpus
from .exp5 import RealTextRun, RealTextWorld
from .retrieval import CorpusEmbeddings
from .summary import seed_summaries, summary_mean_sd

__all__ = [
    "role_order",
    "memory_rows",
    "query_rows",
    "comparison_rows",
    "taxonomy_table",
    "taxonomy_counts",
    "evidence_by_query",
    "stale_evidence_rows",
    "memory_similarity",
    "hitchhiker_table",
    "VARIANT_NAMES",
    "variant_worlds",
    "variants",
    "variants_table",
]

#: Summary keys shown per variant world, in column order.
VARIANT_KEYS = (
    "stale_mw_before",
    "stale_mw_after",
    "stale_p_plus_after",
    "corrected_mw_after",
    "specialist_mw_mean",
    "hitchhiker_mw_mean",
)


def role_order(corpus: Corpus) -> list[int]:
    """Memory indices grouped by role (in :data:`~forgetting.studies.text.corpus.ROLES` order),
    file order within a role."""
    return sorted(range(len(corpus.memories)), key=lambda i: (ROLES.index(corpus.memories[i].role), i))


def _phases_text(tags: Sequence[str]) -> str:
    return "both" if len(tags) == 2 else tags[0]


def memory_rows(corpus: Corpus) -> list[dict[str, Any]]:
    """The corpus's memories in :func:`role_order`: id, role, phases in store and true, text."""
    return [
        {
            "memory": m.id,
            "role": m.role,
            "in store": _phases_text(m.phases),
            "true": _phases_text(m.valid),
            "text": m.text,
        }
        for m in (corpus.memories[i] for i in role_order(corpus))
    ]


def query_rows(corpus: Corpus) -> list[dict[str, Any]]:
    """The corpus's queries in file order: id, type, text and the memories needed in each phase."""
    return [
        {
            "query": q.id,
            "type": q.type,
            "text": q.text,
            "needs before": ", ".join(q.needs[BEFORE]),
            "needs after": ", ".join(q.needs[AFTER]),
        }
        for q in corpus.queries
    ]


#: The comparison table's rows: label and :func:`~forgetting.studies.text.summary.summarise` key.
COMPARISON_ROWS = (
    ("stale MW just before the shift", "stale_mw_before"),
    ("stale MW at the end", "stale_mw_after"),
    ("specialist MW, mean", "specialist_mw_mean"),
    ("hitchhiker MW, mean (with evidence)", "hitchhiker_mw_mean"),
    ("corrected memory MW at the end", "corrected_mw_after"),
)


def comparison_rows(
    summary: Mapping[str, Any], seed_runs: Sequence[dict[str, Any]], seed: int, paper: Mapping[str, float]
) -> list[dict[str, Any]]:
    """The paper's values next to this run's (``seed``) and the mean and sd over ``seed_runs``.

    ``paper`` maps summary keys to published values; a key it lacks shows ``nan`` (not
    reported).
    """
    rows = []
    for label, key in COMPARISON_ROWS:
        mean, sd = summary_mean_sd(seed_runs, key)
        rows.append(
            {
                "quantity": label,
                "paper": paper.get(key, float("nan")),
                f"this chapter (seed {seed})": summary[key],
                f"mean over {len(seed_runs)} seeds": mean,
                "sd": sd,
            }
        )
    return rows


def taxonomy_table(run: RealTextRun) -> list[dict[str, Any]]:
    """One row per memory: MW, evidence and class just before the shift and at the end."""
    before, end = run.last_before, run.n_episodes - 1
    rows = []
    for i in role_order(run.corpus):
        memory = run.corpus.memories[i]
        rows.append(
            {
                "memory": memory.id,
                "role": memory.role,
                "mw_before": float(run.worth(before)[i]),
                "evidence_before": float(run.evidence(before)[i]),
                "class_before": str(run.classes(before)[i]),
                "mw_after": float(run.worth(end)[i]),
                "evidence_after": float(run.evidence(end)[i]),
                "class_after": str(run.classes(end)[i]),
            }
        )
    return rows


def taxonomy_counts(run: RealTextRun) -> list[dict[str, Any]]:
    """Number of memories in each class, just before the shift and at the end."""
    rows = []
    for label, episode in (("before the shift", run.last_before), ("end", run.n_episodes - 1)):
        classes = run.classes(episode)
        rows.append({"when": label, **{c.value: int((classes == c).sum()) for c in WORTH_CLASSES}})
    return rows


def evidence_by_query(run: RealTextRun, memory_id: str, after: bool = True) -> list[dict[str, Any]]:
    """Where one memory's evidence comes from: per query, in one phase (default: after the shift).

    ``after`` is a bool (``ValueError`` otherwise: ``"no"`` would pick neither phase's episodes).
    """
    raise_problems([bool_problem("after", after)])
    corpus = run.corpus
    memory = corpus.index(memory_id)
    phase = AFTER if after else BEFORE
    retrieval = run.retrieval[phase]
    in_phase = run.after == after
    hit = np.any(run.retrieved == memory, axis=1) & in_phase
    rows = []
    for q, query in enumerate(corpus.queries):
        mask = hit & (run.query == q)
        if not mask.any():
            continue
        rank = int(np.flatnonzero(retrieval.top[q] == memory)[0]) + 1
        rows.append(
            {
                "query": query.id,
                "type": query.type,
                "rank": rank,
                "misled": bool(retrieval.misled[q]),
                "p_success": float(retrieval.p_success[q]),
                "episodes": int(mask.sum()),
                "successes": int(run.success[mask].sum()),
                "failures": int((~run.success[mask]).sum()),
            }
        )
    return rows


def stale_evidence_rows(run: RealTextRun, memory_id: str) -> list[dict[str, Any]]:
    """:func:`evidence_by_query` of one memory before the shift, then after it, with a ``phase`` column."""
    return [{"phase": BEFORE, **row} for row in evidence_by_query(run, memory_id, after=False)] + [
        {"phase": AFTER, **row} for row in evidence_by_query(run, memory_id, after=True)
    ]


def memory_similarity(corpus: Corpus, vectors: CorpusEmbeddings) -> tuple[np.ndarray, list[str], list[str]]:
    """Memory-memory cosine similarity rounded to :data:`COSINE_DECIMALS`, rows and columns
    grouped by role; with ids and roles (every entry is checked by :func:`robustness`)."""
    order = role_order(corpus)
    matrix = rounded_cosines(vectors.memories[order], vectors.memories[order])
    return matrix, [corpus.memory_ids[i] for i in order], [corpus.memories[i].role for i in order]


def _hitchhiker_pairs(corpus: Corpus) -> list[tuple[int, int]]:
    """(hitchhiker, memory it resembles) index pairs, in file order."""
    return [
        (i, corpus.index(m.resembles))
        for i, m in enumerate(corpus.memories)
        if m.role == "hitchhiker" and m.resembles is not None
    ]


def hitchhiker_table(run: RealTextRun, vectors: CorpusEmbeddings) -> list[dict[str, Any]]:
    """Each hitchhiker next to the memory it resembles: similarity and final MW of both.

    The cosine is rounded to :data:`COSINE_DECIMALS` places (see the module docstring).
    """
    corpus = run.corpus
    worth, classes, evidence = run.worth(), run.classes(), run.evidence()
    similarity = rounded_cosines(vectors.memories, vectors.memories)
    rows = []
    for i, j in _hitchhiker_pairs(corpus):
        memory = corpus.memories[i]
        rows.append(
            {
                "hitchhiker": memory.id,
                "resembles": memory.resembles,
                "cosine": float(similarity[i, j]),
                "mw_hitchhiker": float(worth[i]),
                "evidence_hitchhiker": float(evidence[i]),
                "class_hitchhiker": str(classes[i]),
                "mw_resembled": float(worth[j]),
                "class_resembled": str(classes[j]),
            }
        )
    return rows


#: The names of :func:`variant_worlds`' entries, in their order: the chapter's world, the task
#: mix unchanged after the shift, the shift after 1/3 and after 1/6 of the episodes, ``k - 1``
#: and ``k + 1``, the other misleading rule.
VARIANT_NAMES = (
    "this_chapter",
    "same_mix",
    "shift_third",
    "shift_sixth",
    "k_lower",
    "k_higher",
    "other_rule",
)


def variant_worlds(corpus: Corpus, world: RealTextWorld) -> list[tuple[str, str, RealTextWorld]]:
    """The chapter's world and six variants, each changing one choice: name (one of
    :data:`VARIANT_NAMES`), label and world.

    Task mix unchanged after the shift (retrieval rates and all else as in ``world``); the shift
    after 1/3 and after 1/6 of the episodes; ``k - 1`` (at least 1) and ``k + 1``; the other
    misleading rule.
    """
    k, n_episodes, outcome = world.k, world.n_episodes, world.outcome
    before_mix = tuple(float(w) for w in corpus.type_weights(BEFORE))
    narrow = replace(outcome, stale_misleads_any_task=not outcome.stale_misleads_any_task)
    labelled = [
        ("this chapter", world),
        ("task mix unchanged after the shift", replace(world, type_weights_after=before_mix)),
        ("shift after 1/3 of the episodes", replace(world, shift_episode=n_episodes // 3)),
        ("shift after 1/6 of the episodes", replace(world, shift_episode=n_episodes // 6)),
        (f"k = {max(1, k - 1)}", replace(world, k=max(1, k - 1))),
        (f"k = {k + 1}", replace(world, k=k + 1)),
        (
            "misled only by the top memory the task bears on"
            if outcome.stale_misleads_any_task
            else "misled by any wrong memory retrieved",
            replace(world, outcome=narrow),
        ),
    ]
    return [(name, label, variant) for name, (label, variant) in zip(VARIANT_NAMES, labelled, strict=True)]


def variants(
    corpus: Corpus,
    vectors: CorpusEmbeddings,
    world: RealTextWorld,
    n_seeds: int,
    world_summaries: Sequence[dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """:func:`variants_table`'s rows by the names of :data:`VARIANT_NAMES`, in the table's order."""
    rows = {}
    for name, label, variant in variant_worlds(corpus, world):
        if variant == world and world_summaries is not None:
            runs = list(world_summaries)
        else:
            runs = seed_summaries(corpus, vectors, variant, n_seeds)
        row: dict[str, Any] = {"world": label}
        for key in VARIANT_KEYS:
            row[key] = summary_mean_sd(runs, key)[0]
        row["seeds stale low-value"] = sum(r["stale_class_after"] == LOW_VALUE for r in runs)
        rows[name] = row
    return rows


def variants_table(
    corpus: Corpus,
    vectors: CorpusEmbeddings,
    world: RealTextWorld,
    n_seeds: int,
    world_summaries: Sequence[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One row per :func:`variant_worlds` entry: the mean over seeds ``0 .. n_seeds - 1`` of
    :data:`VARIANT_KEYS` and the number of seeds in which the stale memory ends low-value.

    ``world_summaries``: the :func:`~forgetting.studies.text.summary.seed_summaries` of ``world``
    itself, if already computed (reused, not rerun).
    """
    return list(variants(corpus, vectors, world, n_seeds, world_summaries).values())
