"""The real-conversation chapter's computation in one call: the data, the sweeps, the budgets.

:func:`run` loads the chosen conversations, embeds them (:mod:`.embeddings`), replays every
policy of :func:`~.sweep.policy_grid` with retrieval-driven recall at each retrieval setting
(:mod:`.sweep`), and returns the values the chapter glues and the tables it shows, as plain
numbers and rows (so that a page built without the data can show the published ones instead).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ...conversations.records import counts
from ..executor import Executor, on_every_core
from .benchmark import ADVERSARIAL, question_index
from .embeddings import fragile_pairs
from .prepared import Prepared, prepare
from .question_study import TABLES as QUESTION_TABLES
from .question_study import question_results
from .readings import (
    PASS_FAMILIES,
    family_list,
    image_values,
    recommendation_rows,
    recommendation_values,
    reference_values,
    repair_rows,
    retrieval_values,
    scored_counts,
    signal_values,
    sweep_values,
    worth_sweep_values,
)
from .sweep import BANK_VARIANTS, best_within, policy_grid, run_sweep

__all__ = [
    "PASS_FAMILIES",
    "TABLES",
    "Prepared",
    "chapter_results",
    "dataset_rows",
    "family_list",
    "headline_values",
    "image_counts",
    "prepare",
    "run_benchmark",
    "small_data",
]


def dataset_rows(prepared: Prepared) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The counts the chapter glues (all conversations pooled) and one row per conversation."""
    rows: list[dict[str, Any]] = []
    for conversation, tokens, vectors in zip(prepared.conversations, prepared.tokens, prepared.vectors):
        found = counts([conversation])
        index = question_index(conversation)
        first, last = conversation.sessions[0][1], conversation.sessions[-1][1]
        rows.append(
            {
                "conversation": conversation.name,
                "sessions": found.sessions,
                "turns": found.turns,
                "image turns": found.images,
                "caption-only turns": found.captions - found.images,
                "days": (last.date() - first.date()).days,
                "tokens": int(tokens.sum()),
                "questions 1-4": sum(found.questions[c] for c in found.questions if c != ADVERSARIAL),
                "questions 5": found.questions[ADVERSARIAL],
                "evidence ids naming no turn": found.unresolved,
                "evidence ids repaired": found.repaired,
                "questions not scored": index.unresolved + index.no_evidence,
                "fragile cosines": sum(fragile_pairs(vectors)),
            }
        )
    total = counts(prepared.conversations)
    values: dict[str, Any] = {
        "n_conversations": total.conversations,
        "n_sessions": total.sessions,
        "n_turns": total.turns,
        "n_images": total.images,
        "n_captions": total.captions,
        "n_caption_only": total.captions - total.images,
        "n_questions": total.total_questions,
        "n_questions_main": sum(r["questions 1-4"] for r in rows),
        "n_questions_adversarial": sum(r["questions 5"] for r in rows),
        "n_evidence": total.evidence,
        "n_unresolved": total.unresolved,
        "n_repaired": total.repaired,
        "n_unrepaired": total.unresolved - total.repaired,
        "n_not_scored": sum(r["questions not scored"] for r in rows),
        "n_fragile": sum(r["fragile cosines"] for r in rows),
        "n_tokens": sum(r["tokens"] for r in rows),
        "days_min": min(r["days"] for r in rows),
        "days_max": max(r["days"] for r in rows),
        "model_sha256": prepared.model_sha256,
    }
    for category in sorted(total.questions):
        values[f"n_questions_cat{category}"] = total.questions[category]
    return values, rows


def grid_from(params: Mapping[str, Any], bank_pass: str, yourmemory_pass: str) -> list[Any]:
    """:func:`~.sweep.policy_grid` with the chapter's parameters and one pass schedule per rule."""
    return policy_grid(
        params["stabilities_turns"], params["stabilities_days"], params["windows"], params["capacities"],
        params["bank_strengths"], params["importances"], params["eviction_threshold"], bank_pass, yourmemory_pass,
        params["seed"], params["replicates"],
    )  # fmt: skip


def full_grid(params: Mapping[str, Any]) -> list[Any]:
    """Every family at every value, the field rules (every variant) at every pass schedule (their
    families renamed ``<family>, pass per <schedule>``)."""
    base = grid_from(params, "session", "turn")
    grid = [s for s in base if not is_field_rule(s.family)]
    for schedule in PASS_FAMILIES:
        for setting in grid_from(params, schedule, schedule):
            if is_field_rule(setting.family):
                grid.append(replace(setting, family=f"{setting.family}, pass per {schedule}"))
    return grid


def is_field_rule(family: str) -> bool:
    """Whether ``family`` is one of MemoryBank's or YourMemory's (any variant, any schedule)."""
    return family.startswith(("MemoryBank", "YourMemory"))


def retrieval_settings(params: Mapping[str, Any]) -> list[tuple[int, float]]:
    """The retrieval settings swept: every ``recall_k`` of ``recall_ks`` with no minimum (its
    first ``min_similarities`` entry), and every minimum with the headline ``recall_k``."""
    first = params["min_similarities"][0]
    settings = [(int(k), float(first)) for k in params["recall_ks"]]
    settings += [(int(params["recall_k"]), float(m)) for m in params["min_similarities"]]
    return list(dict.fromkeys(settings))


def run_benchmark(
    prepared: Prepared, params: Mapping[str, Any], executor: Executor
) -> dict[str, list[dict[str, Any]]]:
    """The frontier rows at every retrieval setting, and the budget tables of the headline one."""
    retrievals = retrieval_settings(params)
    rows = run_sweep(
        full_grid(params), prepared.conversations, prepared.vectors, prepared.tokens, retrievals,
        params["question_k"], on_every_core(executor, len(prepared.conversations)),
    )  # fmt: skip
    headline = [
        r
        for r in rows
        if r["recall_k"] == params["recall_k"] and r["min_similarity"] == params["min_similarity"]
    ]
    budgets = [row for b in params["budgets"] for row in best_within(headline, b)]
    retrieval_best = [
        {"recall_k": k, "min_similarity": m, **row}
        for k, m in retrievals
        for row in best_within(
            [r for r in rows if r["recall_k"] == k and r["min_similarity"] == m], params["headline_budget"]
        )
    ]
    return {"sweep": rows, "frontier": headline, "budgets": budgets, "retrieval": retrieval_best}


#: The tables the chapter shows, by name (each is ``data/results/real-conversations-<name>.csv``).
TABLES = ("dataset", "frontier", "budgets", "retrieval", "sweep", *QUESTION_TABLES, "recommend", "repairs")
#: The families whose rule never reads a recall: their rows cannot depend on the retrieval setting.
RECALL_BLIND = ("Keep everything", "FIFO", "Random eviction")
#: The budget-table families the prose reads, by the glued key's suffix.
HEADLINE_FAMILIES = {
    "decay_turns": "Ebbinghaus, turns",
    "decay_days": "Ebbinghaus, days",
    "window": "Recency window",
    "lru": "LRU",
    "fifo": "FIFO",
    "lfu": "LFU",
    "random": "Random eviction",
}
_MEASURES = (
    "evidence_kept",
    "hit_held",
    "hit_all",
    "recall_held",
    "recall_all",
    "every_held",
    "every_all",
    "turns_share",
    "tokens_share",
    "adv_evidence_kept",
    "adv_hit_held",
)


def _label(row: Mapping[str, Any]) -> str:
    return f"{row['family']}, {row['parameter']} = {float(row['value']):g}"


def recall_blind_rows_agree(rows: Sequence[Mapping[str, Any]]) -> bool:
    """True when every family of :data:`RECALL_BLIND` has the same measures at every retrieval
    setting (a measure that is NaN everywhere, e.g. with no adversarial question, agrees)."""
    for family in RECALL_BLIND:
        seen: dict[float, tuple[Any, ...]] = {}
        for row in rows:
            if row["family"] == family:
                measures = tuple("nan" if row[m] != row[m] else row[m] for m in _MEASURES)
                if seen.setdefault(float(row["value"]), measures) != measures:
                    return False
    return True


def headline_values(
    tables: Mapping[str, Sequence[Mapping[str, Any]]], params: Mapping[str, Any]
) -> dict[str, Any]:
    """The frontier's headline numbers the prose glues (from the tables, so a page built
    without the data reads the same numbers from the published tables)."""
    frontier = list(tables["frontier"])
    budget = params["headline_budget"]
    best = {row["family"]: row for row in tables["budgets"] if row["budget"] == budget}
    values: dict[str, Any] = {
        f"best_{key}": float(best[family]["evidence_kept"]) for key, family in HEADLINE_FAMILIES.items()
    }
    kept = [float(r["evidence_kept"]) for r in best.values() if r["evidence_kept"] == r["evidence_kept"]]
    top = max(kept) if kept else math.nan  # none within the budget: a file of one's own can be that small
    values["best_family_share"] = top
    winners = [f for f, r in best.items() if float(r["evidence_kept"]) == top]
    values["best_family"] = family_list(winners) if winners else _NONE_WITHIN
    hit_all = {float(r["hit_all"]) for r in frontier}
    if len(hit_all) != 1:
        raise ValueError(f"hit@k over the whole history must not depend on the policy, got {sorted(hit_all)}")
    values["hit_all"] = hit_all.pop()
    for measure in ("recall_all", "every_all"):  # LoCoMo's recall@k and all-evidence@k, nothing forgotten
        found = {float(r[measure]) for r in frontier}
        if len(found) != 1:
            raise ValueError(
                f"{measure} over the whole history must not depend on the policy, got {sorted(found)}"
            )
        values[measure] = found.pop()
    values["adv_hit_all"] = float(frontier[0]["adv_hit_all"])
    for key, rows in (
        ("best_hit_within", [r for r in frontier if float(r["turns_share"]) <= budget]),
        ("best_hit_forgetting", [r for r in frontier if float(r["turns_share"]) < 1.0]),
    ):
        if not rows:  # a small file of one's own: no setting within the budget, or none forgets a turn
            values[key] = math.nan
            values[f"{key}_label"] = _NONE_WITHIN if key == "best_hit_within" else "no setting forgets a turn"
            continue
        winner = min(rows, key=lambda r: (-float(r["hit_held"]), float(r["turns_share"]), _label(r)))
        values[key] = float(winner["hit_held"])
        values[f"{key}_label"] = _label(winner)
    values["recall_blind_same"] = recall_blind_rows_agree(tables["sweep"])
    lifts = {
        family: float(row["evidence_kept"]) / float(row["turns_share"])
        for family, row in best.items()
        if family != "Keep everything" and float(row.get("turns_share", "nan")) > 0  # NaN: none within
    }
    if lifts:
        low, high = min(lifts, key=lambda f: (lifts[f], f)), max(lifts, key=lambda f: (lifts[f], f))
        values.update(lift_min=lifts[low], lift_min_family=low, lift_max=lifts[high], lift_max_family=high)
    else:
        values.update(
            lift_min=math.nan, lift_min_family=_NONE_WITHIN, lift_max=math.nan, lift_max_family=_NONE_WITHIN
        )
    forgetting = [r for r in tables["sweep"] if float(r["turns_share"]) < 1.0]
    values["n_settings_forgetting"] = len(forgetting)
    values["n_settings_hit_above"] = sum(float(r["hit_held"]) > float(r["hit_all"]) for r in forgetting)
    values["n_settings_hit_equal"] = sum(float(r["hit_held"]) == float(r["hit_all"]) for r in forgetting)
    for measure in ("recall", "every"):  # LoCoMo's recall@k and all-evidence@k over what is held
        held, whole = f"{measure}_held", f"{measure}_all"
        values[f"n_settings_{measure}_above"] = sum(float(r[held]) > float(r[whole]) for r in forgetting)
        values[f"n_settings_{measure}_equal"] = sum(float(r[held]) == float(r[whole]) for r in forgetting)
    bank = [r for r in frontier if str(r["family"]).startswith("MemoryBank, pass per")]  # v0
    values["bank_max_share"] = max(float(r["turns_share"]) for r in bank)
    for key, family in zip(("bank_head", "bank_intent"), BANK_VARIANTS):  # 3869efc, pass per session
        row = next(r for r in frontier if r["family"] == f"{family}, pass per session")
        values[f"{key}_share"], values[f"{key}_kept"] = float(row["turns_share"]), float(row["evidence_kept"])
    return values


def kth_cosine_quantiles(prepared: Prepared, k: int) -> dict[str, float]:
    """Quantiles 10, 50 and 90 % of the ``k``-th highest rounded cosine of a turn to the earlier
    turns (over every turn with at least ``k`` earlier ones): what a minimum similarity cuts.
    NaN when no turn has ``k`` earlier ones (a short conversation of one's own)."""
    kth = [
        np.sort(v.turn_cosines[i, :i])[-k]
        for v in prepared.vectors
        for i in range(k, v.turn_cosines.shape[0])
    ]
    if not kth:
        return dict.fromkeys(("kth_cosine_q10", "kth_cosine_q50", "kth_cosine_q90"), math.nan)
    q10, q50, q90 = (float(np.quantile(kth, q, method="lower")) for q in (0.1, 0.5, 0.9))
    return {"kth_cosine_q10": q10, "kth_cosine_q50": q50, "kth_cosine_q90": q90}


#: What a glued label says when no setting is within the budget (only a small file of one's own).
_NONE_WITHIN = "none within the budget"


def small_data(prepared: Prepared) -> dict[str, str]:
    """Why sections of the chapter cannot be computed on ``prepared``, in one line each, by
    section: ``"benchmark"`` (evidence kept and hit@k: no scored question of categories 1-4),
    ``"questions"`` (Memory Worth and credit: no conversation with two such questions, one to
    learn on and one to hold out), ``"questions_some"`` (some conversations left out of those
    sections, named). Empty for LoCoMo; a small file of one's own may be missing any of them."""
    scored = {c.name: int((question_index(c).category != ADVERSARIAL).sum()) for c in prepared.conversations}
    why: dict[str, str] = {}
    if not any(scored.values()):
        why["benchmark"] = (
            "no question of categories 1-4 has evidence that names a turn, so there is no evidence to keep "
            "and no hit to score"
        )
    few = [name for name, n in scored.items() if n < 2]
    if len(few) == len(scored):
        why["questions"] = (
            "no conversation has two scored questions of categories 1-4 (one to learn Memory Worth on, "
            "one to hold out)"
        )
    elif few:
        why["questions_some"] = (
            f"{len(few)} conversation(s) with fewer than two scored questions of categories 1-4 are left out "
            f"of the question sections: {', '.join(few)}"
        )
    return why


def image_counts(path: Any, own: bool, positions: Sequence[int] | None) -> dict[str, int]:
    """:func:`~.readings.image_values` of the chapter's file: LoCoMo's members at ``positions``,
    or a file of one's own (``own``) at ``positions`` of it (``None``: all)."""
    from ...conversations.source import LOCOMO_MEMBERS

    if own:
        return image_values(path, None, positions)
    members = list(LOCOMO_MEMBERS)
    return image_values(path, members, positions)


def chapter_results(
    prepared: Prepared, params: Mapping[str, Any], executor: Executor
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Everything the chapter glues and shows: ``(values, tables)``."""
    from ...text.similarity import COSINE_DECIMALS

    skipped = small_data(prepared)
    values, dataset = dataset_rows(prepared)
    values.update(scored_counts(prepared.conversations))
    values.update(reference_values(prepared.conversations))
    tables: dict[str, list[dict[str, Any]]] = {"dataset": dataset}
    repairs = repair_rows(prepared.conversations)
    if "benchmark" not in skipped:
        tables.update(run_benchmark(prepared, params, executor))
        values.update(headline_values(tables, params))
        values.update(sweep_values(tables["sweep"], params["recall_k"]))
        values.update(signal_values(tables["budgets"], params["headline_budget"]))
        values.update(retrieval_values(tables["retrieval"]))
    if "questions" not in skipped:
        worth_values, worth_tables = question_results(prepared, params)
        values.update(worth_values)
        tables.update(worth_tables)
        values.update(
            worth_sweep_values(tables["worth-sweep"], params["mw_min_evidence"], params["mw_low_threshold"])
        )
    if "benchmark" not in skipped:  # last: the published CSVs keep the order they had
        tables["recommend"] = recommendation_rows(
            tables["budgets"], tables["frontier"], values["n_evidence_scored"], values["n_questions_scored"]
        )
        values.update(recommendation_values(tables["recommend"], params["headline_budget"]))
    tables["repairs"] = repairs  # last: the published CSVs keep the order they had
    values["cosine_decimals"] = COSINE_DECIMALS
    values.update(kth_cosine_quantiles(prepared, params["recall_k"]))
    for name in (
        "recall_k",
        "min_similarity",
        "question_k",
        "eviction_threshold",
        "replicates",
        "headline_budget",
        "mw_train_share",
    ):
        values[name] = params[name]
    values["recall_ks_text"] = ", ".join(str(k) for k in params["recall_ks"])
    values["min_similarities_text"] = ", ".join(f"{m:g}" for m in params["min_similarities"])
    values["mw_low_threshold_param"] = params["mw_low_threshold"]
    values["mw_min_evidence_param"] = params["mw_min_evidence"]
    values["importance_min"] = min(params["importances"])
    values["importance_max"] = max(params["importances"])
    return values, tables
