"""Governance with both signals: decay keeps contradicting facts, outcome evidence deprecates the stale one."""

import pytest

from forgetting import governance as g
from forgetting.governance import STALE, TRUE, OutcomeModel, World


def small_world(**changes):
    return World(**{"session_length": 200, "noise_per_turn": 1, **changes})


def test_runs_are_deterministic():
    world = small_world()
    first, second = g.run_seeds(world, 4, 7), g.run_seeds(world, 4, 7)
    assert g.digest(first) == g.digest(second)
    assert g.generate_session(world, 3) == g.generate_session(world, 3)
    assert g.generate_session(world, 3) != g.generate_session(world, 4)


def test_policies_share_the_same_tasks():
    runs = g.run_seeds(small_world(), 3)
    for k in range(3):
        assert len({runs[p][k].task_turns for p in g.POLICIES}) == 1


def test_decay_alone_keeps_both_contradicting_facts():
    world = small_world(co_retrieval=0.5)
    for run in g.run_seeds(world, 5)["decay"]:
        assert run.stale_removed_turn is None and run.true_removed_turn is None
        assert any(set(r) == {STALE, TRUE} for r in run.retrieved)  # both recalled together


def test_combined_policy_deprecates_the_stale_fact_in_the_default_world():
    world = World()  # the chapter's published world
    runs = g.run_seeds(world, 10)["combined"]
    assert all(r.stale_removed_turn is not None and r.stale_removed_turn > world.shift_turn for r in runs)
    summary = g.summarize(runs)
    assert summary["stale_removed"] == 1.0
    assert summary["success_after_shift"] > g.summarize(g.run_seeds(world, 10)["decay"])["success_after_shift"]


def test_without_co_retrieval_the_true_fact_survives_and_decay_bounds_the_footprint():
    runs = g.run_seeds(small_world(co_retrieval=0.0), 5)
    assert g.summarize(runs["combined"])["true_survives"] == 1.0
    assert g.summarize(runs["combined"])["working_set"] < g.summarize(runs["worth"])["working_set"] / 3


def test_outcome_model():
    model = OutcomeModel(0.9, 0.25, 0.05, 0.2)
    assert [model.probability(t, s) for t, s in [(True, False), (True, True), (False, True), (False, False)]] \
        == [0.9, 0.25, 0.05, 0.2]


@pytest.mark.parametrize("call, name", [
    (lambda: OutcomeModel(p_ok=1.5), "p_ok"),
    (lambda: OutcomeModel(p_conflict=float("nan")), "p_conflict"),
    (lambda: OutcomeModel(p_wrong=True), "p_wrong"),
    (lambda: OutcomeModel(p_none="0.2"), "p_none"),
    (lambda: World(session_length=1), "session_length"),
    (lambda: World(shift_turn=300, session_length=300), "shift_turn"),
    (lambda: World(task_rate=-0.1), "task_rate"),
    (lambda: World(co_retrieval=2), "co_retrieval"),
    (lambda: World(noise_per_turn=-1), "noise_per_turn"),
    (lambda: World(first_gap=0), "first_gap"),
    (lambda: World(outcome=0.5), "outcome"),
    (lambda: g.generate_session("world", 0), "world"),
    (lambda: g.generate_session(World(), -1), "seed"),
    (lambda: g.generate_session(World(), 1.0), "seed"),
    (lambda: g.run_policy("session", "decay"), "session"),
    (lambda: g.run_policy(g.generate_session(World(), 0), "oracle"), "policy"),
    (lambda: g.run_policy(g.generate_session(World(), 0), "combined", eviction_threshold=1.0), "eviction_threshold"),
    (lambda: g.run_policy(g.generate_session(World(), 0), "combined", min_evidence=0), "min_evidence"),
    (lambda: g.run_policy(g.generate_session(World(), 0), "combined", low_threshold=0.8), "low_threshold"),
    (lambda: g.run_seeds(World(), 0), "n_seeds"),
    (lambda: g.run_seeds(World(), 1, -3), "base_seed"),
    (lambda: g.summarize([]), "runs"),
    (lambda: g.summarize(["run"]), "runs"),
])
def test_bad_inputs_raise_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_success_between_checks_its_turns():
    run = g.run_policy(g.generate_session(small_world(), 0), "decay")
    assert 0.0 <= run.success_between(1, 200) <= 1.0
    with pytest.raises(ValueError, match="first_turn"):
        run.success_between(-1, 10)
    with pytest.raises(ValueError, match="last_turn"):
        run.success_between(1, "10")
