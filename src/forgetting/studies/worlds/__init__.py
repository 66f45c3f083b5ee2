"""Simulated worlds for the Memory Worth experiments (paper Experiments 1-4 and the theory check).

* :mod:`~forgetting.studies.worlds.model` -- the shared model: utilities, uniform and softmax retrieval,
  the outcome model, exact ``p+``, Spearman rho, seed streams and the per-episode substreams
  that keep what a run draws independent of what it records, the per-checkpoint episode loop.
* :mod:`~forgetting.studies.worlds.theory` -- ``MW -> p+`` at rate ``1/sqrt(n)``, plain and discounted,
  against the exact expected error.
* :mod:`~forgetting.studies.worlds.adaptive` -- the same limit when retrieval depends on the history.
* :mod:`~forgetting.studies.worlds.controlled` -- Experiment 1 (uniform retrieval) and Experiment 3
  (retrieval by a softmax over the current worth: its feedback loop, several settings side by
  side, and the softmax's preference bound).
* :mod:`~forgetting.studies.worlds.exploration` -- Experiment 3 with a share of uniform, worth-blind episodes.
* :mod:`~forgetting.studies.worlds.confound` -- Experiment 2, the task-difficulty confound.
* :mod:`~forgetting.studies.worlds.hitchhiker` -- Experiment 4, co-retrieval.
* :mod:`~forgetting.studies.worlds.anchor_decides` -- Experiment 4 when the anchor alone decides the outcome.
* :mod:`~forgetting.studies.worlds.credit` -- Experiments 2 and 4 with randomized omission, for causal credit.
* :mod:`~forgetting.studies.worlds.feedback_credit` -- the same inside Experiment 3's feedback loop.
"""

from ..stats import loop_cost_words
from . import credit, feedback_credit
from .adaptive import NORMAL_MEAN_ABS, AdaptiveResult, AdaptiveWorld, adaptive_check
from .anchor_decides import (
    AnchorDecidesResult,
    AnchorDecidesWorld,
    anchor_decides_experiment,
    anchor_decides_p_plus,
    anchor_decides_regime_end,
)
from .confound import (
    EASY,
    HARD,
    TASK_TYPES,
    ConfoundResult,
    ConfoundWorld,
    confound_episode_sweep,
    confound_experiment,
    confound_p_plus,
    confound_sweep,
)
from .controlled import (
    DEFAULT_DEPTHS,
    ControlledResult,
    ControlledWorld,
    PolicyResult,
    PolicyWorld,
    consistent_with_band,
    controlled_experiment,
    gap_decomposition,
    policy_experiment,
    preference_bound,
    retrieval_depth_sweep,
    static_score_rho,
    temperature_sweep,
)
from .hitchhiker import (
    ANCHOR,
    CO_RETRIEVAL_N_SEEDS,
    HITCHHIKER,
    CoRetrievalResult,
    CoRetrievalWorld,
    co_retrieval_experiment,
    co_retrieval_p_plus,
    pair_episodes,
    threshold_or_nan,
    threshold_sensitivity,
)
from .model import (
    BLOCK_EPISODES,
    BREAK_STREAM,
    DEFAULT_N_SEEDS,
    KEEP_STREAM,
    OUTCOME_STREAM,
    PAIR_STREAM,
    RETRIEVAL_STREAM,
    SEPARATION_Z,
    TASK_STREAM,
    expected_retrieved_utility,
    loglog_slope,
    p_plus_by_enumeration,
    p_plus_uniform,
    retrieval_entropy,
    seed_streams,
    separated,
    softmax_retrieval,
    spearman_rho,
    substream,
    success_probability,
    uniform_retrieval,
)
from .theory import (
    DiscountedTheoryResult,
    PredictionCheck,
    TheoryResult,
    TheoryWorld,
    discounted_theory_check,
    expected_abs_error,
    prediction_check,
    theory_check,
)

__all__ = [
    "credit",
    "feedback_credit",
    "SEPARATION_Z",
    "DEFAULT_N_SEEDS",
    "CO_RETRIEVAL_N_SEEDS",
    "BLOCK_EPISODES",
    "spearman_rho",
    "success_probability",
    "expected_retrieved_utility",
    "p_plus_uniform",
    "p_plus_by_enumeration",
    "uniform_retrieval",
    "preference_bound",
    "softmax_retrieval",
    "loglog_slope",
    "separated",
    "retrieval_entropy",
    "seed_streams",
    "substream",
    "RETRIEVAL_STREAM",
    "OUTCOME_STREAM",
    "TASK_STREAM",
    "PAIR_STREAM",
    "BREAK_STREAM",
    "KEEP_STREAM",
    "TheoryWorld",
    "TheoryResult",
    "theory_check",
    "expected_abs_error",
    "PredictionCheck",
    "prediction_check",
    "AdaptiveWorld",
    "AdaptiveResult",
    "adaptive_check",
    "NORMAL_MEAN_ABS",
    "DiscountedTheoryResult",
    "discounted_theory_check",
    "ControlledWorld",
    "ControlledResult",
    "controlled_experiment",
    "retrieval_depth_sweep",
    "DEFAULT_DEPTHS",
    "consistent_with_band",
    "gap_decomposition",
    "loop_cost_words",
    "static_score_rho",
    "EASY",
    "HARD",
    "TASK_TYPES",
    "ConfoundWorld",
    "ConfoundResult",
    "confound_p_plus",
    "confound_experiment",
    "confound_sweep",
    "confound_episode_sweep",
    "PolicyWorld",
    "PolicyResult",
    "policy_experiment",
    "temperature_sweep",
    "ANCHOR",
    "HITCHHIKER",
    "CoRetrievalWorld",
    "CoRetrievalResult",
    "co_retrieval_p_plus",
    "pair_episodes",
    "AnchorDecidesWorld",
    "AnchorDecidesResult",
    "anchor_decides_p_plus",
    "anchor_decides_regime_end",
    "anchor_decides_experiment",
    "co_retrieval_experiment",
    "threshold_or_nan",
    "threshold_sensitivity",
]
