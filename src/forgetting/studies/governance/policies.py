"""The governance policies, played turn by turn on a :class:`GovernanceSession`.

Each policy is a member of :class:`GovernancePolicy` (a ``StrEnum``: a member is its string, in
tables and files); the four that deprecate a memory on outcome evidence over the engine's working
set are the library's :class:`~forgetting.governed.DeprecationRule` s
(:attr:`GovernancePolicy.rule`), which :class:`~forgetting.governed.GovernedMemory` plays for any
memories. The three of the chapter's first part (:data:`POLICIES`):

* ``decay``: the Ebbinghaus engine alone (no outcome signal);
* ``worth``: Memory Worth deprecation over a store that never evicts;
* ``combined``: the Ebbinghaus engine for the working set plus Memory Worth deprecation.

And three more that also keep the engine's working set (:data:`EVIDENCE_POLICIES`):

* ``newest``: the newest contradicting fact wins, i.e. the stale fact is deprecated the turn the
  true one is registered (in this world the newest fact is the true one, so this is also what an
  oracle would do);
* ``discounted``: ``combined`` with :class:`~forgetting.worth.DiscountedMemoryWorth` (``discount``);
* ``effect``: deprecation on an interval of the fact's effect (:mod:`forgetting.worth.evidence`,
  ``effect_z``).

And ``sequential`` (:data:`SEQUENTIAL`): deprecation when a sequential test of the fact's effect
(:class:`~forgetting.worth.evidence.HarmTest`, level ``alpha``) rejects "it does not harm",
over the contrast tasks the noise did not crowd out.

Within a turn: registrations (``newest`` deprecates the stale fact as the true one is
registered), then the deployment task (retrieval, which noise may crowd out, recall of what
was retrieved, outcome, Memory Worth update), then deprecation of any retrieved fact whose class is now ``low-value``
(evidence ``>= min_evidence`` and worth ``<= low_threshold``; for ``effect``: either fact whose
effect's upper bound is below 0 after a contrast task), then ``step`` of the engine. A
deprecated fact is never retrieved again and no longer counts in the working set.
"""

from __future__ import annotations

import enum
import math

from ..._validate import raise_problems, real_problem
from ...conversations.policies import choice_problem
from ...decay import DEFAULT_EVICTION_THRESHOLD, EbbinghausEngine
from ...decay.engines import MemoryItem, ScheduledEngine
from ...governed import DeprecationRule
from ...worth import (
    DEFAULT_LOW_THRESHOLD,
    DEFAULT_MIN_EVIDENCE,
    HIGH_VALUE,
    LOW_VALUE,
    MIXED,
    UNCERTAIN,
    DiscountedMemoryWorth,
    MemoryWorth,
    evidence_volume,
    memory_worth,
    worth_class,
)
from ...worth.discounted import discount_problem
from ...worth.evidence import (
    DEFAULT_ALPHA,
    DEFAULT_EFFECT_Z,
    EffectArms,
    HarmTest,
    alpha_problem,
    effect_z_problem,
)
from .runs import FactState, GovernanceRun
from .world import (
    STALE,
    TRUE,
    GovernanceSession,
    crowded_out,
)

__all__ = [
    "GovernancePolicy",
    "NeverEvicting",
    "POLICIES",
    "EVIDENCE_POLICIES",
    "SEQUENTIAL",
    "ALL_POLICIES",
    "DEPLOYMENT_FACTS",
    "GovernanceRun",
    "FactState",
    "run_governance",
    "decay_fact_states",
]


class GovernancePolicy(enum.StrEnum):
    """The governance chapter's policies (module docstring); each member is its string value."""

    DECAY = "decay"
    """The Ebbinghaus engine alone (no outcome signal)."""
    WORTH = "worth"
    """Memory Worth deprecation over a store that never evicts (:class:`NeverEvicting`)."""
    COMBINED = "combined"
    """The Ebbinghaus engine plus Memory Worth deprecation (:attr:`DeprecationRule.WORTH
    <forgetting.governed.DeprecationRule.WORTH>`)."""
    NEWEST = "newest"
    """The engine, and the newest of two contradicting facts wins."""
    DISCOUNTED = "discounted"
    """``combined`` with discounted Memory Worth (:attr:`DeprecationRule.DISCOUNTED
    <forgetting.governed.DeprecationRule.DISCOUNTED>`)."""
    EFFECT = "effect"
    """The engine, and deprecation on an interval of the fact's effect (:attr:`DeprecationRule.EFFECT
    <forgetting.governed.DeprecationRule.EFFECT>`)."""
    SEQUENTIAL = "sequential"
    """The engine, and deprecation on a sequential test of the fact's effect
    (:attr:`DeprecationRule.SEQUENTIAL <forgetting.governed.DeprecationRule.SEQUENTIAL>`)."""

    @property
    def evicts(self) -> bool:
        """Whether the policy's store is the decay engine (every policy but ``worth``)."""
        return self is not GovernancePolicy.WORTH

    @property
    def rule(self) -> DeprecationRule | None:
        """The library's rule this policy plays over the engine's working set (``None``: the
        policy is no :class:`~forgetting.governed.GovernedMemory` rule)."""
        return _RULES.get(self)

    @classmethod
    def of_rule(cls, rule: DeprecationRule | str) -> GovernancePolicy:
        """The policy that plays ``rule`` (a :class:`~forgetting.governed.DeprecationRule` or its
        value); ``ValueError`` for another value."""
        raise_problems([choice_problem("rule", rule, [str(r) for r in DeprecationRule])])
        return _POLICY_OF_RULE[DeprecationRule(rule)]


_RULES = {
    GovernancePolicy.COMBINED: DeprecationRule.WORTH,
    GovernancePolicy.DISCOUNTED: DeprecationRule.DISCOUNTED,
    GovernancePolicy.EFFECT: DeprecationRule.EFFECT,
    GovernancePolicy.SEQUENTIAL: DeprecationRule.SEQUENTIAL,
}
_POLICY_OF_RULE = {rule: policy for policy, rule in _RULES.items()}

POLICIES = (GovernancePolicy.DECAY, GovernancePolicy.WORTH, GovernancePolicy.COMBINED)
"""``decay``: Ebbinghaus engine alone; ``worth``: Memory Worth deprecation over a store that
never evicts; ``combined``: the Ebbinghaus engine for the working set plus Memory Worth
deprecation."""
EVIDENCE_POLICIES = (GovernancePolicy.NEWEST, GovernancePolicy.DISCOUNTED, GovernancePolicy.EFFECT)
"""The baseline and the two estimators the chapter measures against the first three (module
docstring)."""
SEQUENTIAL = GovernancePolicy.SEQUENTIAL
"""The policy that deprecates on a sequential test of the fact's effect (module docstring)."""
ALL_POLICIES = tuple(GovernancePolicy)
"""Every policy :func:`run_governance` plays, in :class:`GovernancePolicy` 's order."""
DEPLOYMENT_FACTS = {STALE: "deploy with tool X", TRUE: "deploy with tool Y"}
"""The two contradicting facts and their contents."""


class NeverEvicting(ScheduledEngine):
    """The library's engine (:class:`~forgetting.decay.engines.ScheduledEngine`) with a schedule
    that never evicts: the ``worth`` policy's store. Its items keep ``S = inf`` and no eviction turn."""

    def _initial_stability(self) -> float:
        return math.inf

    def untouched_delay(self) -> None:
        return None

    def _touched(self, item: MemoryItem) -> None:
        return None

    def _recalled_delay(self, stability: float) -> None:
        return None


def policy_problem(policy: object) -> str | None:
    """``None`` if ``policy`` is a :class:`GovernancePolicy` or its value, else why not."""
    return choice_problem("policy", policy, [str(p) for p in GovernancePolicy])


def noise_present(turn: int, noise_per_turn: int, delay: int | None, *, stepped: bool) -> int:
    """How many noise items a store holds at ``turn``.

    ``noise_per_turn`` items are registered at every turn ``1 .. turn`` and never recalled; each
    is evicted by the step of the turn ``delay`` turns after its own (``None``: never), as the
    decay engine evicts an untouched item. Before the step of ``turn`` (``stepped=False``) the
    items of the last ``delay + 1`` turns are present, after it those of the last ``delay``.
    """
    if delay is None:
        return noise_per_turn * turn
    return noise_per_turn * min(turn, delay if stepped else delay + 1)


def _read_worth(
    counters: tuple[float, float],
    prior: float,
    min_evidence: float,
    high_threshold: float,
    low_threshold: float,
) -> tuple[float, str]:
    """Worth and class of a memory with ``counters = (h+, h-)``, exactly as
    :meth:`MemoryWorth.worth` and :meth:`MemoryWorth.classify` read them.

    The same float operations as :func:`~forgetting.worth.memory_worth`,
    :func:`~forgetting.worth.evidence_volume` and :func:`~forgetting.worth.worth_class`, on
    Python floats: ``h+ / (h+ + h-)`` (``prior`` at no evidence), then the taxonomy's
    comparisons in order. The estimator has validated the counters (finite, ``>= 0``) and the
    thresholds; a sum that overflows goes through the validated formulas, as the estimator's
    own reading would. (Reading through them every time, behind a cache that discounted
    counters rarely hit, dominated the discounted policy's run time.)
    """
    positive, negative = counters
    total = positive + negative
    if math.isinf(total):
        rate = float(memory_worth(positive, negative, prior=prior))
        return rate, str(
            worth_class(
                rate, evidence_volume(positive, negative), min_evidence, high_threshold, low_threshold
            )
        )
    rate = positive / total if total > 0 else float(prior)
    if total < min_evidence:
        return rate, UNCERTAIN
    if rate >= high_threshold:
        return rate, HIGH_VALUE
    return rate, LOW_VALUE if rate <= low_threshold else MIXED


Rules = tuple[float, float, float, float, float, float]
"""``(eviction_threshold, min_evidence, low_threshold, discount, effect_z, alpha)``."""


def _check_rules(session: object, policy: object, rules: Rules) -> GovernancePolicy:
    """``policy`` as the member, after checking ``session``, ``policy`` and ``rules`` (``ValueError``)."""
    if not isinstance(session, GovernanceSession):
        raise ValueError(f"session must be a GovernanceSession, got {session!r}")
    raise_problems([policy_problem(policy)])
    eviction_threshold, min_evidence, low_threshold, discount, effect_z, alpha = rules
    raise_problems(
        [
            real_problem("eviction_threshold", eviction_threshold, 0.0, 1.0, low_open=True, high_open=True),
            real_problem("min_evidence", min_evidence, 1.0),
            real_problem("low_threshold", low_threshold, 0.0, 0.7, high_open=True),
            discount_problem(discount),
            effect_z_problem(effect_z),
            alpha_problem(alpha),
        ]
    )
    return GovernancePolicy(str(policy))


def _play(
    session: GovernanceSession, policy: GovernancePolicy | str, rules: Rules
) -> tuple[GovernanceRun, ScheduledEngine]:
    """Play ``session`` under ``policy``; the run and the store as it is after the last turn."""
    policy = _check_rules(session, policy, rules)
    eviction_threshold, min_evidence, low_threshold, discount, effect_z, alpha = rules
    world = session.world

    def read(estimator: MemoryWorth, mem_id: str) -> tuple[float, str]:
        hyper = (estimator.prior, estimator.min_evidence, estimator.high_threshold, estimator.low_threshold)
        return _read_worth(estimator.counters(mem_id), *hyper)

    engine: ScheduledEngine = (
        EbbinghausEngine(eviction_threshold=eviction_threshold) if policy.evicts else NeverEvicting()
    )
    # The noise is never retrieved: it is counted (noise_present), not held, in the store.
    noise_delay = engine.untouched_delay()
    worth: MemoryWorth | None = None
    if policy in (GovernancePolicy.WORTH, GovernancePolicy.COMBINED):
        worth = MemoryWorth(min_evidence=min_evidence, low_threshold=low_threshold)
    elif policy is GovernancePolicy.DISCOUNTED:
        worth = DiscountedMemoryWorth(
            discount=discount, min_evidence=min_evidence, low_threshold=low_threshold
        )
    arms = {STALE: EffectArms(), TRUE: EffectArms()} if policy is GovernancePolicy.EFFECT else None
    tests = {m: HarmTest(world.co_retrieval, alpha) for m in (STALE, TRUE)} if policy is SEQUENTIAL else {}
    deprecated: set[str] = set()
    removed: dict[str, int] = {}
    tasks = {t: i for i, t in enumerate(session.task_turns)}
    facts = ((STALE, 1), (TRUE, world.shift_turn))  # each fact and its turn of birth
    successes: list[bool] = []
    retrieved_log: list[tuple[str, ...]] = []
    sizes: list[int] = []
    trace: list[tuple[float, float]] = []
    crowded: list[bool] = []

    for turn in range(1, world.session_length + 1):
        if turn == 1:
            engine.register(STALE, DEPLOYMENT_FACTS[STALE], turn, is_foundational=True)
        if turn == world.shift_turn:
            engine.register(TRUE, DEPLOYMENT_FACTS[TRUE], turn)
            if policy is GovernancePolicy.NEWEST:  # the newer of two contradicting facts wins
                deprecated.add(STALE)
        i = tasks.get(turn)
        if i is not None:
            available = [m for m in (STALE, TRUE) if m not in deprecated and engine.is_present(m)]
            retrieved = available
            hard = turn > world.shift_turn and session.draw_hard[i] < 0.5
            if len(retrieved) == 2 and session.draw_both[i] >= world.co_retrieval:
                retrieved = [STALE] if session.draw_which[i] < world.stale_alone(hard) else [TRUE]
            noise = (
                noise_present(turn, world.noise_per_turn, noise_delay, stepped=False) if world.crowding else 0
            )
            crowded.append(crowded_out(session.draw_crowd[i], world.crowding, noise))
            if crowded[-1]:
                retrieved = []
            if turn < world.shift_turn:  # before the shift A is the true fact
                success = session.draw_outcome[i] < world.outcome.probability(bool(retrieved), False)
            else:
                success = session.draw_outcome[i] < world.success_probability(
                    TRUE in retrieved, STALE in retrieved, hard
                )
                if arms is not None and len(available) == 2:  # a contrast task
                    for mem_id, counts in arms.items():
                        counts.add(mem_id in retrieved, bool(success))
                        if counts.upper_bound_below_zero(effect_z):  # effect_z checked once, above
                            deprecated.add(mem_id)
                if len(available) == 2 and not crowded[-1]:  # a contrast task of the sequential test
                    for mem_id, test in tests.items():
                        test.add(mem_id in retrieved, bool(success))
                        if test.harmful():
                            deprecated.add(mem_id)
            for mem_id in retrieved:
                engine.recall(mem_id, turn)
            if worth is not None and retrieved:
                worth.update(retrieved, bool(success))
                for mem_id in retrieved:
                    if read(worth, mem_id)[1] == LOW_VALUE:
                        deprecated.add(mem_id)
            successes.append(bool(success))
            retrieved_log.append(tuple(retrieved))
            if worth is not None:
                trace.append((read(worth, STALE)[0], read(worth, TRUE)[0]))
        engine.step(turn)
        for mem_id, born in facts if len(removed) < 2 else ():
            if (
                turn >= born
                and mem_id not in removed
                and (mem_id in deprecated or not engine.is_present(mem_id))
            ):
                removed[mem_id] = turn
        noise_after = noise_present(turn, world.noise_per_turn, noise_delay, stepped=True)
        held_deprecated = sum(engine.is_present(m) for m in deprecated) if deprecated else 0
        sizes.append(engine.working_set_size() + noise_after - held_deprecated)
    run = GovernanceRun(
        policy,
        session.seed,
        world.shift_turn,
        session.task_turns,
        tuple(successes),
        tuple(retrieved_log),
        tuple(sizes),
        None if worth is None else tuple(trace),
        removed.get(STALE),
        removed.get(TRUE),
        tuple(crowded),
    )
    return run, engine


def run_governance(
    session: GovernanceSession,
    policy: GovernancePolicy | str,
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
    min_evidence: float = DEFAULT_MIN_EVIDENCE,
    low_threshold: float = DEFAULT_LOW_THRESHOLD,
    discount: float = 1.0,
    effect_z: float = DEFAULT_EFFECT_Z,
    alpha: float = DEFAULT_ALPHA,
) -> GovernanceRun:
    """Play ``session`` under ``policy`` (one of :data:`ALL_POLICIES`); see the module docstring.

    Parameters
    ----------
    session : GovernanceSession
    policy : GovernancePolicy or its value
        The run's ``policy`` is the member.
    eviction_threshold : float
        The decay engine's ``θ`` in ``(0, 1)``: evict when ``R = exp(-t / S) < θ``.
    min_evidence : float
        Evidence ``h+ + h-`` (>= 1) needed before Memory Worth may call a fact low-value.
    low_threshold : float
        Deprecate when ``MW <= low_threshold`` (in ``[0, 0.7)``).
    discount : float
        ``gamma`` in ``(0, 1]`` of the ``discounted`` policy's Memory Worth (the others ignore it).
    effect_z : float
        ``z`` in ``[0, 10]`` of the ``effect`` policy's interval (:func:`forgetting.worth.harmful`).
    alpha : float
        Level in ``(0, 1)`` of the ``sequential`` policy's test (:class:`forgetting.worth.HarmTest`).

    Raises
    ------
    ValueError
        A bad session, policy or rule (naming it).
    """
    rules = (eviction_threshold, min_evidence, low_threshold, discount, effect_z, alpha)
    return _play(session, policy, rules)[0]


def decay_fact_states(
    session: GovernanceSession, eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD
) -> dict[str, FactState]:
    """Each deployment fact's :class:`FactState` in the decay engine after the ``decay`` policy.

    Read from the engine that played the session, at its last turn. Every fact has an entry,
    also one the engine evicted (a fact never recalled, or a threshold it cannot stay above):
    its recalls are counted from the run, its ``evicted_turn`` is the run's removal turn.
    """
    rules = (
        eviction_threshold,
        DEFAULT_MIN_EVIDENCE,
        DEFAULT_LOW_THRESHOLD,
        1.0,
        DEFAULT_EFFECT_Z,
        DEFAULT_ALPHA,
    )
    run, engine = _play(session, GovernancePolicy.DECAY, rules)
    assert isinstance(engine, EbbinghausEngine)
    last = session.world.session_length
    removed = {STALE: run.stale_removed_turn, TRUE: run.true_removed_turn}
    states = {}
    for m in DEPLOYMENT_FACTS:
        recalls = sum(m in r for r in run.retrieved)  # a retrieved fact is present, so recalled
        if engine.is_present(m):
            states[m] = FactState(recalls, None, engine.item(m).stability, engine.retention(m, last))
        else:
            states[m] = FactState(recalls, removed[m], None, None)
    return states
