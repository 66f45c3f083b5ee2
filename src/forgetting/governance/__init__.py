"""Governance that uses both signals: decay for the working set, outcomes for deprecation.

The decay engine (:mod:`forgetting.decay`) keeps whatever is recalled. When the world changes
and a new fact *B* ("deploy with tool Y") contradicts a foundational fact *A* ("deploy with
tool X"), tasks keep retrieving both, so the engine reinforces both and keeps both -- the
limit its own source states. Memory Worth (:mod:`forgetting.worth`) watches outcomes instead:
a memory that keeps travelling with failures drifts to ``low-value`` and can be deprecated.

* :mod:`.world` -- the world, its outcome model and one seeded session;
* :mod:`.policies` -- the three policies played on a session;
* :mod:`.summary` -- means over seeds, a digest, the chapter's table rows.
"""

from .policies import (
    POLICIES,
    FactState,
    GovernanceRun,
    decay_fact_states,
    run_governance,
    run_governance_seeds,
)
from .summary import (
    POLICY_LABELS,
    co_retrieval_sweep,
    governance_digest,
    late_success,
    late_window,
    policy_table,
    summarize_governance,
)
from .world import (
    STALE,
    TRUE,
    GovernanceOutcome,
    GovernanceSession,
    GovernanceWorld,
    generate_governance_session,
)

__all__ = [
    "POLICIES",
    "POLICY_LABELS",
    "STALE",
    "TRUE",
    "FactState",
    "GovernanceOutcome",
    "GovernanceRun",
    "GovernanceSession",
    "GovernanceWorld",
    "co_retrieval_sweep",
    "decay_fact_states",
    "generate_governance_session",
    "governance_digest",
    "late_success",
    "late_window",
    "policy_table",
    "run_governance",
    "run_governance_seeds",
    "summarize_governance",
]
