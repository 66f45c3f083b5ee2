"""The wall-clock variant: a virtual clock reruns exactly; a real or re-seeded clock does not."""

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting import hashing
from forgetting.decay.engines import EbbinghausEngine
from forgetting.studies.decay import study, wallclock
from forgetting.studies.decay.sessions import SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate
from forgetting.studies.decay.wallclock import LatencyModel, VirtualClock, WallClockEngine

STEADY = LatencyModel(sigma=0.0)  # every turn lasts exactly the median: one second


def test_virtual_clock_is_a_pure_function_of_its_seed():
    first, second, other = VirtualClock("3/1"), VirtualClock("3/1"), VirtualClock("4/1")
    times = [first(t) for t in range(0, 60, 7)]
    assert times == [second(t) for t in range(0, 60, 7)]
    assert times != [other(t) for t in range(0, 60, 7)]
    assert times == sorted(times) and times[0] == 0.0


def test_virtual_clock_times_are_whole_milliseconds_scaled_by_machine_speed():
    slow, fast = VirtualClock("0/0", LatencyModel(speed=0.5)), VirtualClock("0/0", LatencyModel(speed=2.0))
    for turn in (1, 10, 150):
        assert round(slow(turn) * 1000) == slow(turn) * 1000
        assert slow(turn) > fast(turn)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    threshold=st.sampled_from([0.1, 0.2, 0.5]),
    stability=st.sampled_from([2.0, 8.0]),
)
def test_with_one_second_turns_the_wall_clock_engine_is_the_turn_engine(seed, threshold, stability):
    session = generate_session(SessionConfig(seed=seed, session_length=80, noise_per_turn=2))
    by_turn = simulate(EbbinghausEngine(eviction_threshold=threshold, baseline_stability=stability), session)
    by_clock = simulate(WallClockEngine(VirtualClock("0/0", STEADY), threshold, stability), session)
    assert by_clock == by_turn


def test_reruns_of_the_virtual_first_draft_differ_and_the_turn_counter_does_not():
    config = SessionConfig(seed=0)
    runs = [wallclock.wallclock_runs(config, 5, rerun) for rerun in range(3)]
    assert wallclock.rerun_spread(runs)["distinct_digests"] == 3
    assert runs[1] == wallclock.wallclock_runs(config, 5, 1)  # each rerun is itself reproducible
    turns = [study.run_seeds(study.DECAY, config, 5) for _ in range(3)]
    assert wallclock.rerun_spread(turns)["distinct_digests"] == 1


@pytest.mark.slow  # left out of the fast tier (make.py fast)
def test_published_rerun_spread_and_machine_speed():
    config = SessionConfig(seed=0)
    runs = [wallclock.wallclock_runs(config, 50, r, LatencyModel(sigma=1.0)) for r in range(20)]
    spread = wallclock.rerun_spread(runs)
    assert spread["frr_min"] < spread["frr_max"] and spread["distinct_digests"] == 20
    slow = wallclock.wallclock_runs(config, 50, 0, LatencyModel(speed=0.25))
    assert wallclock.rerun_spread([slow])["frr_max"] < 0.5  # a machine four times slower loses facts


def test_a_real_clock_gives_different_decisions_from_run_to_run():
    """The article's first draft as it was: time.perf_counter(), turns paced by real sleeps.

    Stability is a few milliseconds, so evictions depend on how long the machine actually
    took; no assertion is made on any duration, only that reruns disagree.
    """
    session = generate_session(SessionConfig(seed=0, session_length=60, noise_per_turn=3))

    def run():
        current = {"turn": 0}

        def clock(turn):
            if turn != current["turn"]:
                current["turn"] = turn
                time.sleep(0.0005)
            return time.perf_counter()

        return hashing.digest(simulate(WallClockEngine(clock, 0.2, 0.002), session))

    digests = {run()}
    for _ in range(200):  # a quiet machine can repeat itself many times over; stops at the first change
        digests.add(run())
        if len(digests) > 1:
            break
    assert len(digests) > 1
    turn_counter = {
        hashing.digest(simulate(EbbinghausEngine(eviction_threshold=0.2, baseline_stability=2.0), session))
        for _ in range(3)
    }
    assert len(turn_counter) == 1


def test_wall_clock_engine_keeps_the_engine_contract():
    engine = WallClockEngine(VirtualClock("0/0", STEADY))
    engine.register("a", "a", 1, is_foundational=True)
    assert engine.is_present("a") and engine.working_set_size() == 1 and engine.present_ids() == ["a"]
    assert engine.recall("a", 2) and not engine.recall("missing", 2)
    assert engine.item("a").touch_count == 2 and engine.item("a").last_touched == 2
    with pytest.raises(ValueError, match="already registered"):
        engine.register("a", "a", 3)
    with pytest.raises(ValueError, match="must not go backwards"):
        engine.step(1)
    with pytest.raises(KeyError, match="not present"):
        engine.item("missing")
    assert engine.step(2) == []


class _CountingClock:
    """One second per turn, counting its readings."""

    def __init__(self) -> None:
        self.readings = 0

    def __call__(self, turn: int) -> float:
        self.readings += 1
        return float(turn)


@pytest.mark.parametrize("content", [None, 3, b"bytes", ["text"]])
def test_register_refuses_content_that_is_not_a_str_before_reading_the_clock(content):
    clock = _CountingClock()
    engine = WallClockEngine(clock)
    engine.register("a", "", 5)
    readings = clock.readings
    with pytest.raises(ValueError, match=r"^content must be a str \(what the item holds\), got "):
        engine.register("b", content, 6)
    assert clock.readings == readings and engine.present_ids() == ["a"] and engine.last_turn == 5
    assert engine.step(5) == []  # the clock did not move to 6 either


def test_simulate_refuses_a_used_wall_clock_engine_and_leaves_it_as_it_was():
    session = generate_session(SessionConfig(seed=3, session_length=20))
    used = WallClockEngine(VirtualClock("0/0", STEADY))
    simulate(used, session)
    emptied = WallClockEngine(VirtualClock("0/0", STEADY))
    emptied.register("x", "", 2)
    assert emptied.step(40) == ["x"]  # no item left, but its clock is past the session's turns
    for engine, why in ((used, r"it holds \d+ item\(s\)"), (emptied, "its clock is at turn 40")):
        before = (engine._turn, engine.present_ids())
        with pytest.raises(ValueError, match=rf"^engine must be fresh .*{why}"):
            simulate(engine, session)
        assert (engine._turn, engine.present_ids()) == before
    assert (used.last_turn, emptied.last_turn) == (20, 40)
    fresh = [WallClockEngine(VirtualClock("0/0", STEADY)) for _ in range(2)]
    assert fresh[0].last_turn == 0 and simulate(fresh[0], session) == simulate(fresh[1], session)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"median_seconds": 0.0}, "median_seconds must be"),
        ({"sigma": -1.0}, "sigma must be"),
        ({"speed": 0.0, "sigma": float("nan")}, "sigma must be .*speed must be"),
    ],
)
def test_bad_latency_models_are_refused_all_at_once(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LatencyModel(**kwargs)


def test_bad_engine_and_run_arguments_are_refused():
    with pytest.raises(ValueError, match="eviction_threshold must be .*baseline_stability must be"):
        WallClockEngine(VirtualClock("0/0"), 1.5, -1.0)
    with pytest.raises(ValueError, match="rerun must be an int >= 0"):
        wallclock.wallclock_runs(SessionConfig(seed=0), 2, -1)
    with pytest.raises(ValueError, match="runs must hold at least one rerun"):
        wallclock.rerun_spread([])
    with pytest.raises(ValueError, match="turn must be an int >= 0"):
        VirtualClock("0/0")(-1)


def test_latency_quantile_is_the_log_normal_quantile():
    assert wallclock.latency_quantile(LatencyModel(sigma=0.5), 0.5) == pytest.approx(1.0)
    assert wallclock.latency_quantile(LatencyModel(speed=2.0), 0.5) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="probability must be"):
        wallclock.latency_quantile(LatencyModel(), 1.0)


def test_rerun_table_and_robustness_grid_shapes():
    config = SessionConfig(seed=0, session_length=40)
    runs = [wallclock.wallclock_runs(config, 2, rerun) for rerun in range(2)]
    table = wallclock.rerun_table({"wall clock": runs, "turn counter": [runs[0], runs[0]]})
    assert [(r["engine"], r["rerun"]) for r in table] == [
        ("wall clock", 0),
        ("wall clock", 1),
        ("turn counter", 0),
        ("turn counter", 1),
    ]
    assert table[2]["digest"] == table[3]["digest"] == table[0]["digest"] != table[1]["digest"]
    grid = wallclock.robustness_grid(config, 2, 2, [0.0, 1.0], [1.0, 2.0])
    assert [(r["sigma"], r["speed"]) for r in grid] == [(0.0, 1.0), (0.0, 2.0), (1.0, 1.0), (1.0, 2.0)]
    assert grid[0]["distinct_digests"] == 1  # a perfectly steady clock reruns identically
    assert grid[2]["distinct_digests"] == 2


@pytest.mark.parametrize("seed", [-1, True, 1.5, None, b"0/0"])
def test_a_virtual_clock_seed_is_a_str_or_a_non_negative_int(seed):
    with pytest.raises(ValueError, match="seed must be a str or an int >= 0"):
        VirtualClock(seed)
    assert VirtualClock(1)(5) == VirtualClock(1)(5)  # random.Random(-1) would be this very clock


def test_a_clock_that_never_moves_evicts_nothing_and_clock_runs_is_the_virtual_draft_on_its_clock():
    config = SessionConfig(seed=0, session_length=60)
    frozen = wallclock.clock_runs(config, 3, lambda seed: lambda turn: 0.0, 0.2, 8.0)
    keep_all = study.run_seeds(study.WindowPolicy(60), config, 3)  # a window as long as the session keeps all
    assert frozen == keep_all and all(r["foundational_evicted"] == 0 for r in frozen)
    latency = LatencyModel(sigma=1.0)
    virtual = wallclock.clock_runs(config, 3, lambda seed: VirtualClock(f"2/{seed}", latency), 0.2, 8.0)
    assert virtual == wallclock.wallclock_runs(config, 3, 2, latency, 0.2, 8.0)
    with pytest.raises(ValueError, match="n_seeds must be an int >= 1"):
        wallclock.clock_runs(config, 0, lambda seed: lambda turn: 0.0)


def test_the_grid_summary_counts_settings_and_reads_the_two_ends_of_one_shape():
    row = {"distinct_digests": 1, "frr_min": 0.5, "frr_max": 0.5, "footprint_min": 0.1, "footprint_max": 0.1}
    grid = [
        {**row, "sigma": 0.5, "speed": 0.5},
        {**row, "sigma": 0.5, "speed": 2.0, "distinct_digests": 3, "frr_max": 0.9, "footprint_max": 0.3},
        {**row, "sigma": 1.0, "speed": 0.5, "frr_min": 0.0, "frr_max": 0.2, "distinct_digests": 2},
        {**row, "sigma": 1.0, "speed": 2.0, "frr_max": 1.0, "footprint_max": 0.8},
    ]
    summary = wallclock.grid_summary(grid, 1.0)
    assert (
        summary["settings"],
        summary["digests_differ"],
        summary["frr_moves"],
        summary["footprint_moves"],
    ) == (
        4,
        2,
        3,
        2,
    )
    assert (summary["frr_low"], summary["frr_high"]) == (0.0, 1.0)
    assert (summary["slowest_factor"], summary["slowest_frr_max"]) == (2.0, 0.2)
    assert (summary["fastest_speed"], summary["fastest_footprint_max"]) == (2.0, 0.8)
    assert wallclock.grid_summary(grid, 0.5)["slowest_frr_max"] == 0.5
    with pytest.raises(ValueError, match=r"sigma must be a shape of the grid \(\[0.5, 1.0\]\), got 2.0"):
        wallclock.grid_summary(grid, 2.0)
    with pytest.raises(ValueError, match="grid must hold at least one setting"):
        wallclock.grid_summary([], 1.0)


class _ListClock:
    """A clock that reads given seconds, turn by turn."""

    def __init__(self, seconds: list[float]) -> None:
        self.seconds = seconds

    def __call__(self, turn: int) -> float:
        return self.seconds[turn]


@st.composite
def near_boundary_gaps(draw):
    """Gaps that put items' ages at, just below and just above ``S ln(1/theta)``, on a clock
    that may start far from 0 (so the margins' absolute part matters), at any theta."""
    theta = draw(st.sampled_from([0.01, 0.2, 0.9, 0.999, 0.9995, 0.999999]))
    stability = draw(st.sampled_from([0.001, 1.0, 8.0, 1e4]))
    age = stability * math.log(1 / theta)
    scale = st.sampled_from([0.0, 1.0, 1 - 1e-6, 1 - 2e-6, 1 - 1e-9, 1 + 1e-12, 1 + 1e-6, 0.5, 2.0])
    gaps = draw(st.lists(scale.map(lambda f: age * f), min_size=3, max_size=12))
    return gaps, theta, stability, draw(st.sampled_from([0.0, 1e6, 3e9]))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.0, 40.0, allow_nan=False), min_size=3, max_size=12),
    st.floats(0.01, 0.99),
    st.floats(0.5, 30.0),
)
def test_a_step_evicts_exactly_the_items_whose_retention_is_below_theta(gaps, theta, stability) -> None:
    """The step decides as a direct reading of ``retention(t, S) < theta`` for each present item."""
    _check_against_the_rule(gaps, theta, stability, 0.0)


@settings(max_examples=150, deadline=None)
@given(near_boundary_gaps())
def test_items_near_their_eviction_age_are_decided_by_the_rule_itself(case) -> None:
    """The items the step skips as too young (class docstring) are never due: at ages on,
    just below and just above the boundary, on clocks far from 0, at theta up to 0.999999."""
    _check_against_the_rule(*case)


def _check_against_the_rule(gaps, theta, stability, start) -> None:
    from forgetting.decay.curves import retention

    seconds = [start]
    for gap in gaps:
        seconds.append(seconds[-1] + gap)
    engine = WallClockEngine(_ListClock(seconds), theta, stability)
    touched = {}
    for turn in range(1, len(seconds)):
        engine.register(f"m{turn}", "x", turn)
        touched[f"m{turn}"] = seconds[turn]
        if turn % 3 == 0:  # a recall reinforces an older item
            first = next(iter(touched))
            if engine.recall(first, turn):
                touched[first] = seconds[turn]
        expected = [
            m for m in touched if retention(seconds[turn] - touched[m], engine.item(m).stability) < theta
        ]
        assert engine.step(turn) == expected
        for m in expected:
            del touched[m]


@pytest.mark.parametrize("reading", [float("nan"), float("inf"), "1.0"])
def test_a_clock_that_reads_no_finite_number_is_refused_and_changes_nothing(reading) -> None:
    engine = WallClockEngine(_ListClock([0.0, 1.0, reading]), 0.2, 8.0)
    engine.register("fact", "x", 1)
    with pytest.raises(
        ValueError, match=r"the clock must read a finite real number of seconds, got .* at turn 2"
    ):
        engine.step(2)
    assert engine.is_present("fact") and engine.working_set_size() == 1


def test_grid_series_are_each_shapes_rows_side_by_side_with_their_midpoints():
    grid = [
        {
            "sigma": sigma,
            "speed": speed,
            "frr_min": 0.1 * speed,
            "frr_max": 0.2 * speed,
            "footprint_min": 0.5,
            "footprint_max": 0.7,
        }
        for sigma in (0.5, 1.0)
        for speed in (1.0, 2.0)
    ]
    series = wallclock.grid_series(grid, [0.5, 1.0])
    assert [s["sigma"] for s in series] == [0.5, 1.0]
    assert series[0]["speeds"] == [1.0 * 0.98, 2.0 * 0.98] and series[1]["speeds"] == [1.0 * 1.02, 2.0 * 1.02]
    assert series[0]["frr_min"] == [0.1, 0.2] and series[0]["frr_max"] == [0.2, 0.4]
    assert series[0]["frr_mid"] == [(0.1 + 0.2) / 2, (0.2 + 0.4) / 2]
    assert series[1]["footprint_mid"] == [(0.5 + 0.7) / 2] * 2
    assert wallclock.grid_series(grid, [1.0])[0]["speeds"] == [1.0, 2.0]  # one shape: no offset
    with pytest.raises(ValueError, match="sigma 2.0 has no row"):
        wallclock.grid_series(grid, [2.0])
