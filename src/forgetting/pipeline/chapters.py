"""The book's chapters and their parameters: names, types, allowed ranges, published values.

Each chapter is a notebook ``book/<name>.ipynb`` whose cell tagged ``parameters``
holds exactly the defaults declared here (a test checks it). The defaults are the
*published* parameters: only a run at exactly these values may update
``data/results/<name>.json``. ``quick`` overrides give the smoke-test size.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._validate import shown
from ..studies.decay.sessions import MAX_SESSION_SIZE
from .params import LISTED_NAMES, ChapterSpec, Param, Rule, from_zero

__all__ = ["CHAPTERS", "LISTED_NAMES", "ChapterSpec", "Param", "Rule", "chapter_names", "spec"]


_HELP = {  # meanings shared by several chapters
    "n_seeds": "sessions per setting (seeds 0..n-1)",
    "session_length": "turns per session",
    "num_foundational": "foundational facts per session",
    "recalls_per_foundational": "scheduled recalls per fact (spaced schedule)",
    "noise_per_turn": "never-recalled items registered per turn",
    "noise_levels": "noise_per_turn values of the noise sweep",
    "thresholds": "theta values of the sensitivity sweep",
    "windows": "W values of the sensitivity sweep",
    "seed": "seed of the traced session",
    "checkpoint_turn": "turn at which FRR is reported",
    "stabilities": "baseline stabilities S0 of the grace-period table",
    "uniform_first_turn": "first turn of the first-draft uniform recall schedule",
}


def _p(
    name: str,
    default: Any,
    kind: str,
    low: float | None = None,
    high: float | None = None,
    quick: Any = None,
    help: str = "",
) -> Param:
    return Param(name, default, kind, low, high, quick, help or _HELP.get(name, ""))


def _interval(values: Sequence[float]) -> bool:
    return len(values) == 2 and values[0] <= values[1]


def _session_bound(num_foundational: int | None = None, levels: bool = False) -> Rule:
    """The rule that a chapter's sessions fit :class:`~forgetting.studies.decay.sessions.SessionConfig`'s
    bound: at most :data:`~forgetting.studies.decay.sessions.MAX_SESSION_SIZE` events,
    ``session_length * noise + num_foundational * (1 + recalls_per_foundational)``, at
    ``noise_per_turn`` and (``levels``) at every one of ``noise_levels``. ``num_foundational``: the
    count the notebook fixes when it is not a parameter (``None``: it is one)."""
    noise = "max(noise_per_turn, noise_levels)" if levels else "noise_per_turn"
    facts = "num_foundational" if num_foundational is None else str(num_foundational)
    names: tuple[str, ...] = ("session_length", "noise_per_turn", "recalls_per_foundational")
    names += ("num_foundational",) * (num_foundational is None) + ("noise_levels",) * levels

    def holds(length: int, noise_per_turn: int, recalls: int, *more: Any) -> bool:
        rest = list(more)
        count = rest.pop(0) if num_foundational is None else num_foundational
        most_noise: int = max([noise_per_turn, *(rest.pop(0) if levels else [])])
        return bool(length * most_noise + count * (1 + recalls) <= MAX_SESSION_SIZE)

    return Rule(
        f"session_length * {noise} + {facts} * (1 + recalls_per_foundational) <= {MAX_SESSION_SIZE} "
        "(MAX_SESSION_SIZE, the most events a session may have)",
        names,
        holds,
    )


_W = "W of the recency window: evict when turn - last touch > W"
#: The real-conversation chapter's data by default: the pinned LoCoMo zip (pipeline/data.py), its
#: ten conversations by position.
LOCOMO = "locomo"
EXAMPLE = "example"  # use-agent's conversation: data/examples/agent-conversation.json
_LOCOMO_POSITIONS = list(range(10))
_DATA_HELP = (
    "conversations to run on: locomo (the pinned LoCoMo zip, the published run) or your own file, never "
    "published: .json laid out as LoCoMo's data/locomo10.json (a list of samples, each with conversation: "
    "speaker_a, speaker_b, session_N turns of speaker, dia_id D<N>:<n> and text, session_N_date_time; and qa: "
    "question, answer, evidence dia_ids, category 1-5), or .zip of one such conversation per .json member"
)


def _conversations_file(path: Path) -> object:
    """Read a data file of the user's own as the chapter will (ValueError naming every problem)."""
    from ..conversations.user_file import load_user_file

    return load_user_file(path)


def _positions_in_data(positions: list[int], data: str) -> bool:
    """``positions`` name conversations of the data: LoCoMo's ten, or a file's (its default: all)."""
    if data == LOCOMO:
        return max(positions) < len(_LOCOMO_POSITIONS)
    if positions == _LOCOMO_POSITIONS:
        return True
    from ..conversations.user_file import load_user_file

    return max(positions) < len(load_user_file(Path(data)))


_THETA_HELP = "theta of the decay engine: evict when retention < theta"
_THETA_LOW, _THETA_HIGH = 0.001, 0.999
# The registry is a table: one row per parameter reads better than the formatter's layout.
# fmt: off
CHAPTERS: dict[str, ChapterSpec] = {spec.name: spec for spec in [
    ChapterSpec("decay-retention", "Retention curves", (
        _p("baseline_stability", 8.0, "float", 0.01, 1e6, help="S0, stability of a new item (turns)"),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("window_size", 15, "int", 1, 10_000, help=_W),
        _p("reinforced_recalls", 4, "int", 0, 50, help="recalls of the reinforced item"),
        _p("max_turns", 150, "int", 2, 10_000, help="turns since the last touch on the x axis"),
    )),
    ChapterSpec("decay-headline", "Headline comparison", (
        _p("n_seeds", 50, "int", 2, 100_000, quick=5, help="sessions (seeds 0..n-1)"),
        _p("session_length", 150, "int", 1, 100_000, help="turns per session"),
        _p("num_foundational", 3, "int", 1, 1000, help="foundational facts per session"),
        _p("recalls_per_foundational", 4, "int", 0, 6, help="scheduled recalls per fact"),
        _p("noise_per_turn", 3, "int", 0, 1000, help="never-recalled items registered per turn"),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("window_size", 15, "int", 1, 10_000, help=_W),
    ), (
        _session_bound(),
    )),
    ChapterSpec("decay-sweeps", "Noise, sensitivity and the failure case", (
        _p("n_seeds", 20, "int", 2, 100_000, quick=3),
        _p("session_length", 150, "int", 1, 100_000),
        _p("num_foundational", 3, "int", 1, 1000),
        _p("recalls_per_foundational", 4, "int", 0, 6),
        _p("noise_per_turn", 3, "int", 0, 1000, help="noise of the sensitivity sweep and failure case"),
        _p("noise_levels", [1, 5, 10, 20], "int-list", 0, 1000, quick=[1, 5]),
        _p("thresholds", [0.10, 0.20, 0.30], "float-list", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("windows", [10, 15, 20, 30, 50], "int-list", 1, 10_000),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("window_size", 15, "int", 1, 10_000, help=_W),
        _p("frontier_thresholds", [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], "float-list",
           _THETA_LOW, _THETA_HIGH, quick=[0.05, 0.2, 0.8], help="theta values of the frontier"),
        _p("frontier_windows", [1, 5, 10, 15, 20, 30, 45, 60, 75, 90, 100, 110, 120, 130, 140, 150], "int-list",
           1, 10_000, quick=[5, 15, 120], help="W values of the frontier"),
        _p("fine_n_seeds", 10_000, "int", 2, 1_000_000, quick=30,
           help="seeds of the fine grid and frontier with 95% intervals"),
        _p("fine_theta_step", 0.01, "float", _THETA_LOW, 0.5, quick=0.2,
           help="theta spacing of the fine grid: theta = step, 2 step, ... below 1"),
        _p("fine_window_step", 1, "int", 1, 10_000, quick=30,
           help="W spacing of the fine grid: W = 1, 1 + step, ... up to the session length"),
        _p("capacity_budgets", [4, 8, 16, 32, 64, 128], "int-list", 1, 100_000, quick=[8, 64],
           help="budgets C (items) of the capacity sweep, each run at every noise level"),
        _p("capacity_n_seeds", 40, "int", 2, 100_000, quick=3, help="sessions per setting of the capacity sweep"),
        _p("capacity_oldest_first", True, "bool",
           help="tie rule of a budget eviction: equal retention (or last touch) evicts the oldest item first"),
    ), (
        _session_bound(levels=True),
    )),
    ChapterSpec("decay-trace", "One session, step by step", (
        _p("seed", 0, "int", 0, 2**63 - 1),
        _p("session_length", 150, "int", 1, 100_000),
        _p("recalls_per_foundational", 4, "int", 0, 6),
        _p("noise_per_turn", 3, "int", 0, 1000),
        _p("checkpoint_turn", 30, "int", 1, 100_000),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("window_size", 15, "int", 1, 10_000, help=_W),
    ), (
        Rule("checkpoint_turn <= session_length", ("checkpoint_turn", "session_length"), lambda c, n: c <= n),
        _session_bound(num_foundational=1),  # the notebook traces one fact
    )),
    ChapterSpec("decay-postmortems", "Three bugs that almost lied", (
        _p("stabilities", [2.0, 4.0, 6.0, 8.0], "float-list", 0.01, 1e6),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("n_seeds", 50, "int", 2, 100_000, quick=5),
        _p("session_length", 150, "int", 1, 100_000),
        _p("num_foundational", 3, "int", 1, 1000),
        _p("recalls_per_foundational", 4, "int", 0, 6),
        _p("noise_per_turn", 3, "int", 0, 1000),
        _p("uniform_first_turn", 10, "int", 2, 100_000),
        _p("window_size", 15, "int", 1, 10_000, help=_W),
        _p("first_offsets", [2, 3, 4, 5, 6, 8, 10, 12, 15], "int-list", 1, 10_000, quick=[3, 5],
           help="first base recall offsets of the grace-period demonstration"),
        _p("n_reruns", 20, "int", 2, 10_000, quick=3, help="reruns of the wall-clock first draft"),
        _p("latency_median", 1.0, "float", 0.001, 1e4, help="median seconds per turn (log-normal)"),
        _p("latency_sigma", 1.0, "float", 0.0, 5.0, help="log-normal shape of the per-turn latency"),
        _p("wallclock_stability", 8.0, "float", 0.001, 1e6, help="S0 of the wall-clock engine, in seconds"),
        _p("latency_sigmas", [0.25, 0.5, 1.0, 1.5], "float-list", 0.0, 5.0, quick=[0.5, 1.0],
           help="latency shapes of the robustness sweep"),
        _p("machine_speeds", [0.25, 0.5, 1.0, 2.0, 4.0], "float-list", 0.001, 1000, quick=[0.5, 1.0],
           help="machine speeds (latencies divided by them) of the robustness sweep"),
        _p("sweep_reruns", 10, "int", 2, 10_000, quick=2, help="reruns per setting of the robustness sweep"),
    ), (
        Rule("uniform_first_turn <= session_length", ("uniform_first_turn", "session_length"), lambda f, n: f <= n),
        _session_bound(),
    )),
    ChapterSpec("decay-curves", "Which forgetting curve? Exponential against power law", (
        _p("n_seeds", 50, "int", 2, 100_000, quick=5, help="sessions of the headline (seeds 0..n-1)"),
        _p("session_length", 150, "int", 1, 100_000),
        _p("num_foundational", 3, "int", 1, 1000),
        _p("recalls_per_foundational", 4, "int", 0, 6),
        _p("noise_per_turn", 3, "int", 0, 1000),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP + "; grace matched here"),
        _p("baseline_stability", 8.0, "float", 0.01, 1e6, help="S0 of the exponential engine (turns)"),
        _p("power_decay", 0.5, "float", 0.01, 10.0, help="decay exponent d of the reference power-law engine"),
        _p("power_decays", [0.1542, 0.2, 0.3, 0.5, 1.0], "float-list", 0.01, 10.0, quick=[0.1542, 0.5],
           help="decay exponents d swept (the sources leave d open)"),
        _p("noise_levels", [1, 5, 10, 20], "int-list", 0, 1000, quick=[1, 5]),
        _p("sweep_seeds", 20, "int", 2, 100_000, quick=3, help="sessions per setting of the noise sweep and frontier"),
        _p("frontier_thresholds", [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "float-list", _THETA_LOW,
           _THETA_HIGH, quick=[0.1, 0.2, 0.5], help="theta values of the frontier (S0 matched at eviction_threshold)"),
        _p("differing_threshold", 0.5, "float", _THETA_LOW, _THETA_HIGH,
           help="theta at which a session that ends differently is shown"),
        _p("trace_seed", 0, "int", 0, 2**63 - 1, help="seed of the session shown"),
    ), (
        _session_bound(levels=True),
    )),
    # --- Memory Worth chapters (theory, Experiments 1-4) ---
    ChapterSpec("mw-theory", "Memory Worth: definition and convergence", (
        _p("n_memories", 20, "int", 2, 100_000, help="memories in the theory world"),
        _p("retrieved_per_episode", 4, "int", 1, 100_000, help="k, memories retrieved per episode"),
        _p("checkpoints", [100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000], "int-list", 1, 10**7,
           quick=[100, 200, 500, 1_000, 2_000], help="episode counts at which the error of MW against p+ is measured"),
        _p("n_seeds", 100, "int", 2, 100_000, quick=3,
           help="independent worlds (the unit of the standard errors; at least 2)"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="base seed (per-world streams are its children)"),
        _p("discount", 0.99, "float", 0.001, 1.0, help="gamma of the discounted variant"),
        _p("adaptive_memories", 10, "int", 2, 10_000, help="memories of the history-dependent world"),
        _p("adaptive_temperature", 0.25, "float", 0.001, 1000.0,
           help="softmax temperature over Memory Worth in the history-dependent world"),
    ), (
        Rule("retrieved_per_episode < n_memories", ("retrieved_per_episode", "n_memories"), lambda k, n: k < n),
    )),
    ChapterSpec("mw-exp1", "Experiment 1: a controlled world", (
        _p("n_memories", 100, "int", 2, 100_000, help="memories with known utility"),
        _p("retrieved_per_episode", 10, "int", 1, 100_000, help="k, memories retrieved per episode"),
        _p("n_episodes", 10_000, "int", 1, 10**7, quick=2_000, help="episodes per seed"),
        _p("n_seeds", 20, "int", 2, 100_000, quick=4, help="independent worlds"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="base seed (per-world streams are its children)"),
        _p("checkpoints", [0, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000], "int-list", 0, 10**7,
           quick=[0, 50, 100, 200, 500, 1_000, 2_000], help="episodes at which rho is recorded"),
        _p("depths", list(range(1, 21)), "int-list", 1, 100_000, quick=[1, 5, 10],
           help="k values of the sensitivity sweep (every k from 1 to 20)"),
    ), (
        Rule("retrieved_per_episode <= n_memories", ("retrieved_per_episode", "n_memories"), lambda k, n: k <= n),
        Rule("every depth <= n_memories", ("depths", "n_memories"), lambda ds, n: max(ds) <= n),
        Rule("every checkpoint <= n_episodes", ("checkpoints", "n_episodes"), lambda cs, n: max(cs) <= n),
    )),
    ChapterSpec("mw-exp2", "Experiment 2: the task-difficulty confound", (
        _p("n_generalists", 50, "int", 2, 100_000, help="memories retrieved on every task type"),
        _p("n_specialists", 50, "int", 1, 100_000, help="memories retrieved only on hard tasks"),
        _p("retrieved_per_episode", 10, "int", 1, 100_000, help="k, memories retrieved per episode"),
        _p("n_episodes", 10_000, "int", 1, 10**7, quick=2_000, help="episodes per seed"),
        _p("hard_fraction", 0.5, "float", 0.0, 1.0, help="share of hard tasks"),
        _p("easy_base_rate", 0.8, "float", 0.0, 1.0, help="success rate of an easy task at mean utility 1/2"),
        _p("hard_base_rate", 0.2, "float", 0.0, 1.0, help="success rate of a hard task at mean utility 1/2"),
        _p("memory_effect", 0.1, "float", 0.0, 1.0, help="how much the retrieved set moves success"),
        _p("generalist_utility", [0.0, 1.0], "float-list", 0.0, 1.0, help="(low, high) of generalist utilities"),
        _p("specialist_utility", [0.5, 1.0], "float-list", 0.0, 1.0, help="(low, high) of specialist utilities"),
        _p("n_seeds", 20, "int", 1, 100_000, quick=4, help="independent worlds"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="base seed (per-world streams are its children)"),
        _p("episode_counts", [1_000, 3_000, 10_000, 30_000, 100_000, 300_000], "int-list", 1, 10**7,
           quick=[1_000, 3_000], help="episode counts of the finite-sample sweep"),
        _p("memory_effects", [0.1, 0.2, 0.4], "float-list", 0.0, 1.0, quick=[0.1],
           help="memory effects of the calibration grid"),
        _p("specialist_counts", [20, 30, 50], "int-list", 1, 100_000, quick=[50],
           help="specialist counts of the calibration grid (total memories fixed)"),
    ), (
        Rule("retrieved_per_episode <= n_generalists", ("retrieved_per_episode", "n_generalists"), lambda k, g: k <= g),
        Rule("generalist_utility is [low, high] with low <= high", ("generalist_utility",), _interval),
        Rule("specialist_utility is [low, high] with low <= high", ("specialist_utility",), _interval),
        Rule("every specialist count < n_generalists + n_specialists",
             ("specialist_counts", "n_generalists", "n_specialists"), lambda cs, g, s: max(cs) < g + s),
    )),
    ChapterSpec("mw-exp3", "Experiment 3: policy feedback", (
        _p("n_memories", 100, "int", 2, 100_000, help="memories with known utility"),
        _p("retrieved_per_episode", 10, "int", 1, 100_000, help="k, memories retrieved per episode"),
        _p("n_episodes", 10_000, "int", 1, 10**7, quick=1_000, help="episodes per seed"),
        _p("temperature", 0.2, "float", 1e-6, 1e6, help="softmax temperature of the retrieval policy"),
        _p("n_seeds", 20, "int", 2, 100_000, quick=3, help="independent worlds"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="base seed (per-world streams are its children)"),
        _p("temperatures", [1.0, 0.5, 0.2, 0.1, 0.05, 0.02], "float-list", 1e-6, 1e6, quick=[1.0, 0.05],
           help="temperatures of the sensitivity sweep"),
        _p("epsilons", [0.0, 0.05, 0.1, 0.2, 0.5], "float-list", 0.0, 1.0, quick=[0.0, 0.2],
           help="shares of episodes that retrieve uniformly instead of by the softmax (exploration sweep)"),
    ), (
        Rule("retrieved_per_episode <= n_memories", ("retrieved_per_episode", "n_memories"), lambda k, n: k <= n),
    )),
    ChapterSpec("mw-exp4", "Experiment 4: the hitchhiker", (
        _p("n_memories", 100, "int", 4, 100_000, help="memories, anchor and hitchhiker included"),
        _p("retrieved_per_episode", 10, "int", 2, 100_000, help="k, memories retrieved per episode"),
        _p("n_episodes", 10_000, "int", 1, 10**7, quick=2_000, help="episodes per seed"),
        _p("anchor_utility", 1.0, "float", 0.0, 1.0, help="utility of the useful anchor"),
        _p("hitchhiker_utility", 0.0, "float", 0.0, 1.0, help="utility of the useless hitchhiker"),
        _p("diversities", [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], "float-list", 0.0, 1.0,
           help="shares of pair episodes that break the pair"),
        _p("n_seeds", 100, "int", 2, 100_000, quick=10, help="independent worlds"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="base seed (per-world streams are its children)"),
        _p("z", 1.645, "float", 0.0, 10.0, help="separation when mean gap - z sd > 0 (one-sided 95 %)"),
        _p("strict_z", 1.96, "float", 0.0, 10.0, help="the stricter criterion reported next to it"),
        _p("other_seeds", [1, 2, 3, 4, 5], "int-list", 0, 2**63 - 1, quick=[1],
           help="other base seeds of the sensitivity table"),
        _p("few_seeds", 20, "int", 2, 100_000, quick=5, help="seed count of the 'fewer seeds' rows"),
        _p("other_depth", 5, "int", 2, 100_000, help="k of the sensitivity row with shallower retrieval"),
        _p("other_pair_rate", 0.5, "float", 0.0, 1.0, help="pair rate of the sensitivity row with more pair episodes"),
        _p("anchor_success", 0.9, "float", 0.0, 1.0,
           help="anchor-decides regime: success probability of an episode that retrieves the anchor"),
        _p("other_success", 0.2, "float", 0.0, 1.0,
           help="anchor-decides regime: success probability of an episode without the anchor"),
        _p("diversity_steps", 50, "int", 1, 10_000, quick=10,
           help="anchor-decides regime: diversities tested are i / diversity_steps"),
    ), (
        Rule("retrieved_per_episode <= n_memories", ("retrieved_per_episode", "n_memories"), lambda k, n: k <= n),
        Rule("other_depth <= n_memories", ("other_depth", "n_memories"), lambda k, n: k <= n),
        Rule("other_success < anchor_success", ("other_success", "anchor_success"), lambda lo, hi: lo < hi),
    )),
    # --- end of Memory Worth chapters ---
    # --- Experiment 5 (real text) ---
    ChapterSpec("mw-exp5", "Experiment 5: real sentences, neural retrieval, a stale memory", (
        _p("seed", 0, "int", 0, 2**63 - 1, help="seed of the headline run"),
        _p("n_episodes", 3000, "int", 2, 1_000_000, quick=600, help="episodes per run"),
        _p("shift_episode", 647, "int", 1, 1_000_000, quick=300,
           help="episodes before the shift (must be < n_episodes); derived from the paper's numbers"),
        _p("k", 3, "int", 1, 20, help="memories retrieved per episode (top-k cosine)"),
        _p("p_all", 0.97, "float", 0.0, 1.0, help="success probability with every needed memory retrieved"),
        _p("p_none", 0.25, "float", 0.0, 1.0, help="success probability with no needed memory retrieved"),
        _p("p_stale", 0.05, "float", 0.0, 1.0, help="success probability when misled by the stale memory"),
        _p("stale_misleads_any_task", True, "bool",
           help="a retrieved stale memory misleads any task (False: only tasks it bears on)"),
        _p("discount", 0.99, "float", 0.5, 1.0, help="gamma of the discounted estimator shown for comparison"),
        _p("n_seeds", 20, "int", 2, 100_000, quick=3, help="seeds 0..n-1 for the spread and the variants"),
        _p("shift_episodes", [150, 300, 450, 600, 750, 900, 1200, 1500, 2000, 2500], "int-list", 1, 1_000_000,
           quick=[100, 300], help="shift episodes of the sweep (each < n_episodes)"),
        _p("depths", [1, 2, 3, 4, 5], "int-list", 1, 20, quick=[2, 3],
           help="k values of the retrieval-depth sweep (same shift, task mix and outcome rule)"),
    ), (
        Rule("shift_episode < n_episodes", ("shift_episode", "n_episodes"), lambda s, n: s < n),
        Rule("every shift episode of the sweep < n_episodes", ("shift_episodes", "n_episodes"),
             lambda ss, n: max(ss) < n),
    )),
    # --- end of Experiment 5 ---
    ChapterSpec("beyond-credit", "Beyond the paper: credit that measures effects", (
        _p("n_memories", 100, "int", 4, 100_000, help="memories of Experiment 4's world"),
        _p("retrieved_per_episode", 10, "int", 2, 100_000, help="k, memories retrieved per episode"),
        _p("n_episodes", 10_000, "int", 1, 10**7, quick=2_000, help="episodes per seed"),
        _p("diversities", [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], "float-list", 0.0, 1.0,
           quick=[0.0, 0.5, 1.0], help="shares of pair episodes that break the pair"),
        _p("epsilons", [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9], "float-list", 0.0, 1.0, quick=[0.0, 0.3, 0.9],
           help="omission rates: chance an episode withholds one of its memories"),
        _p("n_seeds", 100, "int", 2, 100_000, quick=6, help="independent worlds of Experiment 4"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="base seed (per-world streams are its children)"),
        _p("z", 1.645, "float", 0.0, 10.0, help="separation when mean gap - z sd > 0 (Experiment 4's criterion)"),
        _p("confound_epsilons", [0.0, 0.1, 0.3, 0.5], "float-list", 0.0, 1.0, quick=[0.0, 0.5],
           help="omission rates of the Experiment 2 runs"),
        _p("confound_seeds", 20, "int", 2, 100_000, quick=3, help="independent worlds of Experiment 2"),
        _p("temperature", 0.2, "float", 1e-6, 1e6,
           help="Experiment 3's softmax temperature over Memory Worth (its headline run)"),
        _p("feedback_temperatures", [1.0, 0.5, 0.2, 0.1, 0.05, 0.02], "float-list", 1e-6, 1e6, quick=[0.2, 0.05],
           help="softmax temperatures of the Experiment 3 runs (Experiment 3's sweep)"),
        _p("feedback_epsilons", [0.0, 0.1, 0.3, 0.5], "float-list", 0.0, 1.0, quick=[0.0, 0.5],
           help="omission rates of the Experiment 3 runs"),
        _p("feedback_seeds", 20, "int", 2, 100_000, quick=3, help="independent worlds of Experiment 3"),
        _p("text_epsilons", [0.0, 0.05, 0.1, 0.2, 0.3, 0.5], "float-list", 0.0, 1.0, quick=[0.0, 0.3],
           help="omission rates of the Experiment 5 runs (real text, its published world)"),
        _p("text_seeds", 20, "int", 2, 100_000, quick=3, help="seeds of the Experiment 5 runs (0 .. n - 1)"),
    ), (
        Rule("retrieved_per_episode <= n_memories - 2", ("retrieved_per_episode", "n_memories"),
             lambda k, n: k <= n - 2),
        Rule("confound_epsilons starts at 0 (the prose reads Memory Worth's unperturbed rho there)",
             ("confound_epsilons",), lambda es: es[0] == 0.0),
        Rule("feedback_epsilons starts at 0 (the prose reads Experiment 3's own run there)",
             ("feedback_epsilons",), lambda es: es[0] == 0.0),
        Rule("temperature is one of feedback_temperatures", ("temperature", "feedback_temperatures"),
             lambda t, ts: t in ts),
        from_zero("text_epsilons"),
    )),
    ChapterSpec("beyond-governance", "Beyond the sources: governance with both signals", (
        _p("n_seeds", 1000, "int", 1, 100_000, quick=5, help="sessions (seeds seed..seed+n-1)"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="first seed; its session is the traced one"),
        _p("session_length", 300, "int", 3, 100_000, help="turns per session"),
        _p("shift_turn", 40, "int", 2, 100_000, help="turn at which tool Y replaces tool X (< session_length)"),
        _p("task_rate", 0.8, "float", 0.0, 1.0, help="chance of a deployment task per turn after the shift"),
        _p("co_retrieval", 0.5, "float", 0.0, 1.0,
           help="chance a task retrieves both contradicting facts (else one, at random)"),
        _p("noise_per_turn", 2, "int", 0, 1000, help="never-recalled items registered per turn"),
        _p("p_ok", 0.9, "float", 0.0, 1.0, help="success probability with only the true fact"),
        _p("p_conflict", 0.25, "float", 0.0, 1.0, help="success probability with both facts"),
        _p("p_wrong", 0.05, "float", 0.0, 1.0, help="success probability with only the stale fact"),
        _p("p_none", 0.2, "float", 0.0, 1.0, help="success probability with no deployment fact"),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("min_evidence", 5.0, "float", 1.0, 1e6, help="Memory Worth evidence needed before deprecation"),
        _p("low_threshold", 0.3, "float", 0.0, 0.69, help="deprecate when Memory Worth <= this"),
        _p("co_retrievals", [0.0, 0.25, 0.5, 0.75, 1.0], "float-list", 0.0, 1.0, quick=[0.0, 1.0],
           help="co_retrieval values of the sweep"),
        _p("discount", 0.9, "float", 0.01, 1.0, help="gamma of the discounted policy's Memory Worth"),
        _p("effect_z", 2.576, "float", 0.0, 10.0,
           help="z of the effect policy's interval (deprecate when its upper end is below 0)"),
        _p("effect_zs", [1.0, 1.645, 1.96, 2.576, 3.291], "float-list", 0.0, 10.0, quick=[1.0, 2.576],
           help="effect_z values of the effect policy's sweep"),
        _p("discounts", [0.5, 0.8, 0.9, 0.95, 0.99, 1.0], "float-list", 0.01, 1.0, quick=[0.9, 1.0],
           help="discount values of the discounted policy's sweep"),
        _p("crowdings", [0.0, 0.003, 0.01, 0.03], "float-list", 0.0, 1000.0, quick=[0.0, 0.01],
           help="weights of a noise item as a distractor of the search (retrieval-cost sweep)"),
        _p("alpha", 0.01, "float", 1e-9, 0.999,
           help="level of the sequential policy's test (chance per fact of ever deprecating a harmless one)"),
        _p("alphas", [0.001, 0.01, 0.05, 0.1, 0.3], "float-list", 1e-9, 0.999, quick=[0.01, 0.3],
           help="alpha values of the sequential policy's sweep"),
        _p("null_success", 0.5, "float", 0.0, 1.0,
           help="success probability of every task in the world where no fact matters"),
        _p("confounds", [0.0, 0.5, 1.0], "float-list", 0.0, 1.0, quick=[0.0, 1.0],
           help="how much a task's difficulty decides which fact it retrieves alone (confound sweep)"),
        _p("difficulty", 0.5, "float", 0.0, 1.0,
           help="a hard task's success probability is its outcome probability times 1 - this (confound sweep)"),
        _p("difficulties", [0.25, 0.5, 0.75], "float-list", 0.0, 1.0, quick=[0.5],
           help="difficulty values of the sweep in the world where no fact matters, at the largest confound"),
    ), (
        Rule("shift_turn < session_length", ("shift_turn", "session_length"), lambda s, n: s < n),
        Rule("co_retrievals includes 0 and 1 (the prose reads both ends of the sweep)", ("co_retrievals",),
             lambda cs: 0.0 in cs and 1.0 in cs),
        from_zero("crowdings"),
        Rule("alpha is one of alphas", ("alpha", "alphas"), lambda a, alphas: a in alphas),
        Rule("effect_z is one of effect_zs", ("effect_z", "effect_zs"), lambda z, zs: z in zs),
        from_zero("confounds"),
    )),
    # --- real conversations (LoCoMo) ---
    ChapterSpec("real-conversations", "Long conversations: forgetting on LoCoMo", (
        Param("data", LOCOMO, "file", suffixes=(".json", ".zip"), check=_conversations_file,
              recorded_at_default=False, help=_DATA_HELP),
        _p("conversations", _LOCOMO_POSITIONS, "int-list", 0, 10**6, quick=[0, 1],
           help="conversations by position: in LoCoMo's zip (0 = conv 26 ... 9 = conv 50) or in the data "
                "file (default there: every conversation of it)"),
        _p("recall_k", 5, "int", 1, 100, help="memories recalled by retrieval before each turn is stored"),
        _p("min_similarity", 0.0, "float", -1.0, 1.0, help="rounded cosine a recalled memory needs at least"),
        _p("question_k", 5, "int", 1, 100, help="k of hit@k for the questions"),
        _p("recall_ks", [1, 3, 5, 10], "int-list", 1, 100, quick=[1, 5],
           help="recall_k values of the retrieval sweep (with the first min_similarities value)"),
        _p("min_similarities", [0.0, 0.6, 0.7, 0.8], "float-list", -1.0, 1.0, quick=[0.0, 0.7],
           help="min_similarity values of the retrieval sweep (the first one with every recall_k)"),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("stabilities_turns", [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], "float-list", 1e-3, 1e6,
           quick=[4, 64], help="S0 (in turns) of the decay engine on turns"),
        _p("stabilities_days", [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256], "float-list", 1e-3, 1e6,
           quick=[1, 16], help="S0 (in days) of the decay engine on days"),
        _p("windows", [1, 2, 5, 10, 20, 50, 100, 200, 400, 700], "int-list", 1, 10**6, quick=[10, 200],
           help="W values of the recency window"),
        _p("capacities", [10, 20, 50, 100, 200, 300, 400, 500, 600, 700], "int-list", 1, 10**6, quick=[50, 300],
           help="C values of LRU, FIFO, LFU and random eviction"),
        _p("bank_strengths", [1, 2, 3, 5, 10, 20, 50, 100, 200], "int-list", 1, 10**5, quick=[3, 20],
           help="MemoryBank's cap on S, in days (its code: 3)"),
        _p("importances", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], "float-list", 0.01, 1.0,
           quick=[0.5, 1.0], help="YourMemory's importance of every turn (its default: 0.5)"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="first seed of random eviction, MemoryBank and the splits"),
        _p("replicates", 3, "int", 1, 1000, quick=1, help="seeds seed..seed+n-1 of the seeded policies"),
        _p("budgets", [0.1, 0.25, 0.5, 0.75], "float-list", 0.0, 1.0,
           help="footprints (share of turns held) of the budget table"),
        _p("headline_budget", 0.5, "float", 0.0, 1.0, help="the budget the introduction reads"),
        _p("mw_train_share", 0.5, "float", 0.05, 0.95,
           help="share of each conversation's questions Memory Worth learns on"),
        _p("mw_splits", 50, "int", 2, 10_000, quick=3, help="seeded train/test splits"),
        _p("mw_min_evidence", 5.0, "float", 1.0, 1e6, help="evidence a turn needs before it can be flagged"),
        _p("mw_low_threshold", 0.3, "float", 0.0, 0.69, help="flag a turn when its Memory Worth <= this"),
        _p("mw_min_evidences", [1.0, 2.0, 3.0, 5.0, 10.0], "float-list", 1.0, 1e6, quick=[1.0, 5.0],
           help="min_evidence values of the Memory Worth sweep"),
        _p("mw_low_thresholds", [0.0, 0.1, 0.2, 0.3], "float-list", 0.0, 0.69, quick=[0.0, 0.3],
           help="low_threshold values of the Memory Worth sweep"),
        _p("credit_epsilons", [0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9], "float-list", 0.0, 1.0, quick=[0.0, 0.5],
           help="omission rates: chance a training question withholds one of the turns it retrieves"),
    ), (
        Rule("headline_budget is one of budgets", ("headline_budget", "budgets"), lambda b, bs: b in bs),
        Rule("recall_k is one of recall_ks and min_similarity one of min_similarities",
             ("recall_k", "recall_ks", "min_similarity", "min_similarities"),
             lambda k, ks, m, ms: k in ks and m in ms),
        Rule("conversations has no repeats", ("conversations",), lambda cs: len(set(cs)) == len(cs)),
        Rule("conversations are positions in the data: 0-9 in LoCoMo's zip, in a data file those it holds "
             "(there the default means every one)", ("conversations", "data"), _positions_in_data),
        from_zero("credit_epsilons", "at 1 no question keeps all its turns: omission has nothing to compare with"),
    ), data=("locomo",)),
    ChapterSpec("knowledge-updates", "Knowledge updates: forgetting on LongMemEval", (
        _p("s_setting", False, "bool",
           help="replay the S setting's knowledge updates (about 50 sessions each) instead of the oracle setting; "
                "never published"),
        _p("per_type", 133, "int", 1, 133, quick=8,
           help="the first n questions of each question type, in the manifest's order (133: every question)"),
        _p("recall_k", 3, "int", 1, 100, help="memories recalled by retrieval before each turn is stored"),
        _p("min_similarity", 0.0, "float", -1.0, 1.0, help="rounded cosine a recalled memory needs at least"),
        _p("question_k", 3, "int", 1, 100, help="memories the question retrieves (k of hit@k)"),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("stabilities_turns", [1, 2, 4, 8, 16, 32, 64], "float-list", 1e-3, 1e6, quick=[4, 32],
           help="S0 (in turns) of the decay engine on turns"),
        _p("stabilities_days", [0.5, 1, 2, 4, 8, 16, 32, 64, 128], "float-list", 1e-3, 1e6, quick=[1, 32],
           help="S0 (in days) of the decay engine on days"),
        _p("windows", [2, 5, 10, 20, 50], "int-list", 1, 10**6, quick=[5, 20], help="W values of the recency window"),
        _p("capacities", [1, 2, 3, 5, 10, 20], "int-list", 1, 10**6, quick=[2, 10],
           help="C values of LRU, FIFO, LFU and random eviction (memories)"),
        _p("bank_strengths", [1, 3, 10], "int-list", 1, 10**5, quick=[3],
           help="MemoryBank's cap on S, in days (its code: 3)"),
        _p("importances", [0.1, 0.3, 0.5, 1.0], "float-list", 0.01, 1.0, quick=[0.5],
           help="YourMemory's importance of every memory (its default: 0.5)"),
        _p("thresholds", [0.5, 0.6, 0.7, 0.8, 0.9], "float-list", -1.0, 1.0, quick=[0.6, 0.8],
           help="cosines above which a new memory supersedes a held one (the contradiction rule)"),
        _p("seed", 0, "int", 0, 2**63 - 1, help="first seed of random eviction and MemoryBank"),
        _p("replicates", 3, "int", 1, 1000, quick=1, help="seeds seed..seed+n-1 of the seeded policies"),
        _p("floors", [1.0, 0.9, 0.75, 0.5], "float-list", 0.0, 1.0,
           help="shares of the old-information evidence a recommended setting keeps at least"),
        _p("headline_floor", 0.9, "float", 0.0, 1.0, help="the floor of old evidence kept the introduction reads"),
    ), (
        Rule("headline_floor is one of floors", ("headline_floor", "floors"), lambda f, fs: f in fs),
    ), data=("longmemeval",)),
    # --- use the library ---
    ChapterSpec("use-agent", "Use it in your agent", (
        _p("seed", 0, "int", 0, 2**63 - 1, help="seed of the agent's tasks, random eviction and MemoryBank's coins"),
        _p("n_turns", 60, "int", 2, 100_000, help="turns of the agent loop"),
        _p("change_turn", 10, "int", 2, 100_000, help="turn at which the deployment endpoint changes"),
        _p("save_turn", 30, "int", 1, 100_000,
           help="turn at whose start the agent saves its memory to JSON and resumes from it"),
        _p("eviction_threshold", 0.20, "float", _THETA_LOW, _THETA_HIGH, help=_THETA_HELP),
        _p("baseline_stability", 8.0, "float", 0.01, 1e6, help="S0 (turns): the agent's memory, decay on turns"),
        _p("min_evidence", 5.0, "float", 1.0, 1e6, help="Memory Worth evidence needed before deprecation"),
        _p("low_threshold", 0.3, "float", 0.0, 0.69, help="deprecate when Memory Worth <= this"),
        Param("conversation", EXAMPLE, "file", suffixes=(".json", ".zip"), check=_conversations_file,
              help="conversations to replay every rule over: example (data/examples/agent-conversation.json, the "
                   "published run) or your own file, never published, as the data of real-conversations"),
        _p("recall_k", 3, "int", 1, 100, help="turns recalled before each turn is stored (top-k by shared words)"),
        _p("min_overlap", 2, "int", 1, 100, help="content words a recalled turn shares with the new one at least"),
        _p("stability_days", 8.0, "float", 0.01, 1e6, help="S0 (days) of decay on days"),
        _p("window_size", 10, "int", 1, 10**6, help=_W),
        _p("capacity", 10, "int", 1, 10**6, help="C of LRU, FIFO, LFU and random eviction"),
        _p("importance", 0.5, "float", 0.01, 1.0, help="YourMemory's importance of every turn (its default: 0.5)"),
    ), (
        Rule("change_turn <= n_turns", ("change_turn", "n_turns"), lambda c, n: c <= n),
        Rule("save_turn <= n_turns", ("save_turn", "n_turns"), lambda s, n: s <= n),
    )),
]}
# fmt: on


def spec(name: str) -> ChapterSpec:
    """The chapter called ``name``; ``ValueError`` listing the chapters otherwise."""
    try:
        return CHAPTERS[name]
    except KeyError:
        raise ValueError(f"unknown chapter {shown(name)}; chapters: {list(CHAPTERS)}") from None


def chapter_names() -> Sequence[str]:
    return list(CHAPTERS)
