"""The capacity engines without their events (capacity_batch) decide as the engines do."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay.engines import EbbinghausEngine
from forgetting.studies.decay import metrics
from forgetting.studies.decay.capacity import CapacityDecay, CapacityWindow
from forgetting.studies.decay.capacity_batch import capped_outcome
from forgetting.studies.decay.sessions import SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate
from forgetting.studies.decay.sweep_study import CapacityPolicy


def replayed(engine: CapacityDecay | CapacityWindow, config: SessionConfig) -> tuple[float, float, int]:
    """The reference: every event of the generated session through the engine."""
    trace = simulate(engine, generate_session(config))
    return metrics.terminal_frr(trace), metrics.footprint_reduction(trace), max(trace.working_set_sizes)


def engine_of(kind: str, capacity: int, rule: float | int | None, stability: float = 8.0):
    return CapacityPolicy(kind, capacity, rule, baseline_stability=stability).engine()


@pytest.mark.parametrize(
    "noise, capacity, kind, rule",
    [
        (noise, capacity, kind, rule)
        for noise, capacity in itertools.product([1, 5, 10, 20], [4, 8, 16, 32, 64, 128])
        for kind, rule in [("decay", None), ("window", None), ("decay", 0.2), ("window", 15)]
    ],
)
def test_the_decay_sweeps_settings_read_as_the_engines_decide(noise, capacity, kind, rule):
    for seed in range(3):
        config = SessionConfig(seed=seed, noise_per_turn=noise)
        assert tuple(capped_outcome(engine_of(kind, capacity, rule), config)) == replayed(
            engine_of(kind, capacity, rule), config
        )


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    length=st.integers(1, 60),
    facts=st.integers(0, 5),
    recalls=st.integers(0, 4),
    noise=st.integers(0, 6),
    schedule=st.sampled_from(["spaced", "uniform"]),
    kind=st.sampled_from(["decay", "window"]),
    capacity=st.integers(1, 40),
    theta=st.sampled_from([None, 0.01, 0.2, 0.5, 0.9]),
    window=st.sampled_from([None, 1, 2, 5, 15]),
    stability=st.sampled_from([0.5, 1.0, 3.0, 8.0, 1e300]),  # 1e300: no item ever due
)
def test_any_generated_session_reads_as_the_engine_decides(
    seed, length, facts, recalls, noise, schedule, kind, capacity, theta, window, stability
):
    try:
        config = SessionConfig(
            seed=seed,
            session_length=length,
            num_foundational=facts,
            recalls_per_foundational=recalls,
            noise_per_turn=noise,
            schedule=schedule,
        )
    except ValueError:  # more recalls than the schedule can place in the session
        return
    rule = theta if kind == "decay" else window
    assert tuple(capped_outcome(engine_of(kind, capacity, rule, stability), config)) == replayed(
        engine_of(kind, capacity, rule, stability), config
    )


def test_equal_ages_evict_the_facts_before_the_noise_of_their_turn():
    # The window at capacity 3 with three facts and noise from turn 1: at the first noise item
    # every item is 0 turns old, so the oldest registration (a fact) goes first, then the next.
    config = SessionConfig(
        seed=0, session_length=1, num_foundational=3, recalls_per_foundational=0, noise_per_turn=2
    )
    outcome = capped_outcome(CapacityWindow(3), config)
    assert outcome == replayed(CapacityWindow(3), config) == (1 / 3, 1 - 3 / 5, 3)


def test_bad_engines_are_refused_and_left_as_they_were():
    config = SessionConfig(seed=0)
    with pytest.raises(
        TypeError, match="engine must be a CapacityDecay or CapacityWindow, got EbbinghausEngine"
    ):
        capped_outcome(EbbinghausEngine(), config)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be a SessionConfig, got dict"):
        capped_outcome(CapacityWindow(4), {"seed": 0})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a fresh engine with oldest_first=True"):
        capped_outcome(CapacityDecay(4, oldest_first=False), config)
    used = CapacityWindow(4)
    used.register("a", "a", 1)
    with pytest.raises(ValueError, match="a fresh engine with oldest_first=True"):
        capped_outcome(used, config)
    assert used.present_ids() == ["a"]
    fresh = CapacityDecay(4, 0.2)
    capped_outcome(fresh, config)
    assert fresh.working_set_size() == 0
