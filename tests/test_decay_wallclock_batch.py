"""The first draft without replaying events (wallclock_batch) decides as WallClockEngine does."""

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.decay import metrics, wallclock
from forgetting.studies.decay.sessions import SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate
from forgetting.studies.decay.wallclock import LatencyModel, VirtualClock, WallClockEngine
from forgetting.studies.decay.wallclock_batch import clock_summary, due_turn


def replayed(config: SessionConfig, readings: list[float], theta: float, stability: float) -> dict:
    """The reference: every event through the engine, on a clock that reads ``readings[turn]``."""
    trace = simulate(WallClockEngine(readings.__getitem__, theta, stability), generate_session(config))
    return {"seed": config.seed, **metrics.session_summary(trace)}


@pytest.mark.parametrize(
    "sigma, speed, theta, stability, schedule",
    list(
        itertools.product(
            [0.0, 1.5],
            [0.25, 4.0],
            [0.001, 0.2, 0.9995],  # 0.9995: above 0.999 every item is a candidate at once
            [0.01, 8.0, 1e6],  # gone at the next step, the book's, never within the session
            ["spaced", "uniform"],
        )
    ),
)
def test_wallclock_runs_gives_clock_runs_rows_on_the_same_virtual_clocks(
    sigma, speed, theta, stability, schedule
):
    config = SessionConfig(seed=0, schedule=schedule, noise_per_turn=2, session_length=60)
    latency = LatencyModel(1.0, sigma, speed)
    batch = wallclock.wallclock_runs(config, 4, 3, latency, theta, stability)
    events = wallclock.clock_runs(
        config, 4, lambda seed: VirtualClock(f"3/{seed}", latency), theta, stability
    )
    assert batch == events


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.integers(0, 3000), min_size=40, max_size=40),  # ms per turn; 0: a clock that stands
    theta=st.sampled_from([0.05, 0.2, 0.6, 0.999, 0.9999]),
    stability=st.sampled_from([0.5, 2.0, 8.0, 30.0]),
    seed=st.integers(0, 10**6),
    noise=st.integers(0, 3),
    recalls=st.integers(0, 4),
)
def test_a_session_on_any_non_decreasing_clock_gets_the_engines_summary(
    steps, theta, stability, seed, noise, recalls
):
    config = SessionConfig(
        seed=seed,
        session_length=40,
        noise_per_turn=noise,
        recalls_per_foundational=recalls,
        recall_base_offsets=(2, 4, 7, 11),
    )
    readings = [sum(steps[:turn]) / 1000 for turn in range(41)]
    assert clock_summary(config, readings, theta, stability) == replayed(config, readings, theta, stability)


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(st.integers(0, 2000), min_size=1, max_size=60),
    touched=st.integers(0, 59),
    theta=st.floats(0.01, 0.99),
    stability=st.floats(0.1, 100.0),
)
def test_the_due_turn_is_the_first_step_whose_retention_is_below_theta(steps, touched, theta, stability):
    """A direct reading of the rule, every turn from the touch on (the safe time only skips reads)."""
    readings = [sum(steps[:turn]) / 1000 for turn in range(len(steps) + 1)]
    touched = min(touched, len(readings) - 1)
    direct = next(
        (
            t
            for t in range(touched, len(readings))
            if math.exp(-(readings[t] - readings[touched]) / stability) < theta
        ),
        len(readings),
    )
    assert due_turn(readings, touched, stability, theta) == direct


def test_bad_input_is_refused_before_any_work():
    config = SessionConfig(seed=0, session_length=30)
    with pytest.raises(ValueError, match="readings must hold one clock reading per turn 0..30, got 3"):
        clock_summary(config, [0.0, 1.0, 2.0], 0.2, 8.0)
    with pytest.raises(ValueError, match="eviction_threshold"):
        wallclock.wallclock_runs(config, 2, 0, eviction_threshold=1.5)
    with pytest.raises(ValueError, match="n_seeds must be an int >= 1"):
        wallclock.wallclock_runs(config, 0, 0)
