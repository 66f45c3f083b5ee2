"""Governance that uses both signals: decay for the working set, outcomes for deprecation.

The decay engine (:mod:`forgetting.decay`) keeps whatever is recalled. When the world changes
and a new fact *B* ("deploy with tool Y") contradicts a foundational fact *A* ("deploy with
tool X"), tasks keep retrieving both, so the engine reinforces both and keeps both -- the
limit its own source states. Memory Worth (:mod:`forgetting.worth`) watches outcomes instead:
a memory that keeps travelling with failures drifts to ``low-value`` and can be deprecated.

* :mod:`.world` -- the world, its outcome model, the noise's retrieval cost and one seeded
  session;
* :mod:`.policies` -- the policies played on a session (the three of the first part, the
  newest-fact baseline, discounted worth, deprecation on an effect interval or a sequential
  test); :mod:`.runs` -- what a policy did in one session;
* :mod:`.batch` -- the policies played on many sessions at once, held to :mod:`.policies` run
  for run, and :func:`~.batch.run_governance_seeds`, every policy over a range of seeds;
* :mod:`forgetting.worth.evidence` (re-exported here) -- the effect interval and the
  sequential test the ``effect`` and ``sequential`` policies deprecate on;
* :mod:`.differences` -- per-session differences between policies, sweeps of one rule;
* :mod:`.intervals` -- 95 % intervals over sessions (Wilson for shares, bootstrap for means);
* :mod:`.summary` -- estimates over sessions, the cost split, the digest, the chapter's tables;
* :mod:`.narrative` -- the chapter's counts and clauses from the settings and the traced session.
"""

from ...worth.evidence import DEFAULT_ALPHA, DEFAULT_EFFECT_Z, EffectArms, HarmTest, harmful, retrieval_chance
from .batch import run_governance_seeds
from .differences import (
    SESSION_MEASURES,
    TARGET_SHARE,
    difference_table,
    discount_floor,
    lost_estimate,
    meeting_text,
    meets_target,
    null_level_rows,
    paired_difference,
    rule_sweep,
    rule_sweep_table,
    rule_sweep_values,
    session_value,
    target_text,
)
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
    SEQUENTIAL,
    FactState,
    GovernancePolicy,
    GovernanceRun,
    NeverEvicting,
    decay_fact_states,
    run_governance,
)
from .summary import (
    MEASURE_DIGITS,
    MEASURES,
    POLICY_LABELS,
    CostGroup,
    co_retrieval_sweep,
    cost_split,
    cost_split_table,
    crowding_summary,
    describe_decay_fates,
    governance_digest,
    late_window,
    loss_order,
    policy_table,
    same_removals,
    summarize_governance,
    sweep_table,
    world_sweep,
)
from .world import (
    JITTER,
    STALE,
    TRUE,
    GovernanceOutcome,
    GovernanceSession,
    GovernanceWorld,
    crowded_out,
    crowding_probability,
    generate_governance_session,
    null_world,
    omission_world,
)

__all__ = [
    "ALL_POLICIES",
    "DEFAULT_EFFECT_Z",
    "DEFAULT_ALPHA",
    "HarmTest",
    "retrieval_chance",
    "SEQUENTIAL",
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
    "GovernancePolicy",
    "GovernanceRun",
    "NeverEvicting",
    "GovernanceSession",
    "GovernanceWorld",
    "CostGroup",
    "Estimate",
    "bootstrap_interval",
    "cost_split",
    "cost_split_table",
    "crowding_summary",
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
    "crowded_out",
    "crowding_probability",
    "null_world",
    "omission_world",
    "null_level_rows",
    "TARGET_SHARE",
    "meets_target",
    "lost_estimate",
    "meeting_text",
    "target_text",
    "discount_floor",
    "rule_sweep_values",
    "governance_digest",
    "late_window",
    "policy_table",
    "run_governance",
    "run_governance_seeds",
    "summarize_governance",
    "sweep_table",
    "world_sweep",
]
