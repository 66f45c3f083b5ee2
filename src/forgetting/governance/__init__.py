"""Governance that uses both signals: decay for the working set, outcomes for deprecation.

The decay engine (:mod:`forgetting.decay`) keeps whatever is recalled. When the world changes
and a new fact *B* ("deploy with tool Y") contradicts a foundational fact *A* ("deploy with
tool X"), tasks keep retrieving both, so the engine reinforces both and keeps both -- the
limit its own source states. Memory Worth (:mod:`forgetting.worth`) watches outcomes instead:
a memory that keeps travelling with failures drifts to ``low-value`` and can be deprecated.

* :mod:`.world` -- the world, its outcome model and one seeded session;
* :mod:`.policies` -- the policies played on a session (the three of the first part, the
  newest-fact baseline, discounted worth, deprecation on evidence);
* :mod:`.evidence` -- the effect interval the ``effect`` policy deprecates on;
* :mod:`.differences` -- per-session differences between policies, sweeps of one rule;
* :mod:`.intervals` -- 95 % intervals over sessions (Wilson for shares, bootstrap for means);
* :mod:`.summary` -- estimates over sessions, the cost split, the digest, the chapter's tables;
* :mod:`.narrative` -- the chapter's counts and clauses from the settings and the traced session.
"""

from .differences import (
    SESSION_MEASURES,
    difference_table,
    paired_difference,
    rule_sweep,
    rule_sweep_table,
    session_value,
)
from .evidence import DEFAULT_EFFECT_Z, EffectArms, harmful
from .intervals import (
    BOOTSTRAP_RESAMPLES,
    Estimate,
    bootstrap_interval,
    mean_estimate,
    share_estimate,
    wilson_interval,
)
from .narrative import (
    gap_schedule,
    jitter_percent,
    late_turns,
    list_text,
    pre_shift_counts,
    stale_fate,
    true_fate,
    worth_after_shift,
)
from .policies import (
    ALL_POLICIES,
    EVIDENCE_POLICIES,
    POLICIES,
    FactState,
    GovernanceRun,
    decay_fact_states,
    run_governance,
    run_governance_seeds,
)
from .summary import (
    MEASURE_DIGITS,
    MEASURES,
    POLICY_LABELS,
    CostGroup,
    co_retrieval_sweep,
    cost_split,
    cost_split_table,
    describe_decay_fates,
    governance_digest,
    late_window,
    loss_order,
    policy_table,
    same_removals,
    summarize_governance,
    sweep_table,
)
from .world import (
    JITTER,
    STALE,
    TRUE,
    GovernanceOutcome,
    GovernanceSession,
    GovernanceWorld,
    generate_governance_session,
)

__all__ = [
    "ALL_POLICIES",
    "DEFAULT_EFFECT_Z",
    "EVIDENCE_POLICIES",
    "SESSION_MEASURES",
    "EffectArms",
    "difference_table",
    "harmful",
    "paired_difference",
    "rule_sweep",
    "rule_sweep_table",
    "session_value",
    "BOOTSTRAP_RESAMPLES",
    "JITTER",
    "MEASURES",
    "MEASURE_DIGITS",
    "POLICIES",
    "POLICY_LABELS",
    "STALE",
    "TRUE",
    "FactState",
    "GovernanceOutcome",
    "GovernanceRun",
    "GovernanceSession",
    "GovernanceWorld",
    "CostGroup",
    "Estimate",
    "bootstrap_interval",
    "cost_split",
    "cost_split_table",
    "describe_decay_fates",
    "loss_order",
    "mean_estimate",
    "same_removals",
    "share_estimate",
    "wilson_interval",
    "gap_schedule",
    "jitter_percent",
    "late_turns",
    "list_text",
    "pre_shift_counts",
    "stale_fate",
    "true_fate",
    "worth_after_shift",
    "co_retrieval_sweep",
    "decay_fact_states",
    "generate_governance_session",
    "governance_digest",
    "late_window",
    "policy_table",
    "run_governance",
    "run_governance_seeds",
    "summarize_governance",
    "sweep_table",
]
