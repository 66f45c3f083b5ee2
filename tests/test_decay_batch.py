"""The batch simulator makes exactly the event engines' decisions, session by session."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay.curves import decay_eviction_delay, reinforced_stability
from forgetting.decay.engines import EbbinghausEngine
from forgetting.studies.decay import batch, metrics, study
from forgetting.studies.decay.sessions import SessionConfig, generate_session, recall_schedules
from forgetting.studies.decay.simulation import simulate
from session_configs import with_recalls

configs = with_recalls(
    st.builds(
        SessionConfig,
        seed=st.just(0),
        session_length=st.integers(1, 120),
        num_foundational=st.integers(0, 4),
        recalls_per_foundational=st.just(0),
        noise_per_turn=st.integers(0, 3),
        schedule=st.sampled_from(["spaced", "uniform"]),
        recall_jitter=st.tuples(st.floats(0.05, 1.0), st.floats(1.0, 3.0)),
        uniform_range=st.tuples(st.integers(2, 20), st.integers(30, 160)),
    ),
    6,
)
policies = st.one_of(
    st.builds(study.DecayPolicy, st.floats(0.001, 0.999), st.floats(0.01, 60.0)),
    st.builds(study.WindowPolicy, st.integers(1, 150)),
)


def _event_replay(policy, config):
    """Per seed: the event trace and everything the batch must reproduce from it."""
    session = generate_session(config)
    trace = simulate(policy.engine(), session)
    facts = session.foundational_ids
    found = [[ok for _, mem_id, ok in trace.recalls if mem_id == fid] for fid in facts]
    return trace, facts, found


@settings(max_examples=150, deadline=None)
@given(config=configs, policy=policies, seeds=st.lists(st.integers(0, 2**40), min_size=1, max_size=4))
def test_batch_equals_event_engine_session_by_session(config, policy, seeds):
    turns = batch.recall_turn_array(config, seeds)
    replay = batch.replay_batch(policy.eviction_delays(config.recalls_per_foundational), config, turns, seeds)
    summaries = batch.session_summaries(replay)
    sizes = replay.working_set_sizes()
    for index, seed in enumerate(seeds):
        seeded = config.replace(seed=seed)
        trace, facts, found = _event_replay(policy, seeded)
        scheduled = turns[index] > 0
        assert [t[s].tolist() for t, s in zip(turns[index], scheduled)] == [
            generate_session(seeded).recall_turns(f) for f in facts
        ]
        assert [f[s].tolist() for f, s in zip(replay.recall_found[index], scheduled)] == found
        assert replay.fact_evicted_turn[index].tolist() == [trace.evicted_turn.get(f, 0) for f in facts]
        noise = [m for m in trace.created_turn if m not in facts]
        assert replay.noise_created_turn.tolist() == [trace.created_turn[m] for m in noise]
        assert replay.noise_evicted_turn.tolist() == [trace.evicted_turn.get(m, 0) for m in noise]
        assert sizes[index].tolist() == trace.working_set_sizes
        assert int(replay.resident_item_turns()[index]) == sum(trace.working_set_sizes)
        assert replay.items_created == trace.items_created
        # exact equality of every float: same formula, same operations
        assert summaries[index] == {"seed": seed, **metrics.session_summary(trace)}
        assert summaries[index] == study.run_session(policy, seeded)


@settings(max_examples=40, deadline=None)
@given(config=configs, policy=policies, n_seeds=st.integers(1, 12))
def test_study_sweeps_equal_their_event_engine_reading(config, policy, n_seeds):
    runs = study.run_seeds(policy, config, n_seeds)
    assert runs == [study.run_session(policy, config.replace(seed=s)) for s in range(n_seeds)]
    rows: dict[int, dict[str, int]] = {}
    after = {"recall": 0, "scheduled": 0, "found": 0, "first_lost": 0}
    for seed in range(n_seeds):
        trace, facts, found = _event_replay(policy, config.replace(seed=seed))
        for fid, hits in zip(facts, found):
            for k, ok in enumerate(hits, 1):
                row = rows.setdefault(k, {"recall": k, "scheduled": 0, "found": 0, "first_lost": 0})
                row["scheduled"] += 1
                row["found"] += ok
                row["first_lost"] += not ok and all(hits[: k - 1])
            if all(hits):
                kept = trace.is_present_after(fid, trace.session_length)
                after["scheduled"] += 1
                after["found"] += kept
                after["first_lost"] += not kept
    assert study.recall_outcomes(config, n_seeds, policy) == [rows[k] for k in sorted(rows)] + [after]


def test_results_do_not_depend_on_the_batch_size(monkeypatch):
    config = SessionConfig(seed=0)
    whole = study.run_policies([study.DECAY, study.WINDOW], config, 30)
    monkeypatch.setattr(batch, "BATCH_CELLS", 12 * 7)  # seven seeds per batch
    assert study.run_policies([study.DECAY, study.WINDOW], config, 30) == whole
    assert study.recall_outcomes(config, 30, study.WINDOW) == study.recall_outcomes(config, 30, study.WINDOW)


@given(st.floats(0.001, 0.999), st.floats(0.01, 100.0), st.integers(0, 6))
def test_decay_delays_are_the_engines_delays_after_k_recalls(theta, s0, recalls):
    stability, expected = s0, []
    for touch_count in range(1, recalls + 2):  # registration is touch 1
        if touch_count > 1:
            stability = reinforced_stability(stability, touch_count)
        expected.append(decay_eviction_delay(stability, theta))
    assert batch.decay_delays(theta, s0, recalls) == tuple(expected)
    assert batch.window_delays(7, recalls) == (8,) * (recalls + 1)


def test_recall_schedules_are_the_generated_sessions_draws():
    for seed in range(20):
        config = SessionConfig(seed=seed)
        session = generate_session(config)
        assert recall_schedules(config) == [session.recall_turns(f) for f in session.foundational_ids]


def test_a_never_evicting_policy_keeps_every_fact():
    config = SessionConfig(seed=0, noise_per_turn=1)
    turns = batch.recall_turn_array(config, range(3))
    replay = batch.replay_batch((None,) * 5, config, turns)
    assert not replay.fact_evicted_turn.any() and not replay.noise_evicted_turn.any()
    assert replay.seeds == (0, 1, 2)
    assert [row["terminal_frr"] for row in batch.session_summaries(replay)] == [1.0] * 3
    engine = EbbinghausEngine(
        eviction_threshold=1e-300, baseline_stability=1e300
    )  # never evicts within a session either
    assert simulate(engine, generate_session(config)).evicted_turn == {}


@pytest.mark.parametrize(
    "delays, shape, seeds, message",
    [
        ((16,) * 4, (2, 3, 4), None, r"len\(delays\) must be"),
        (
            (16,) * 5,
            (2, 2, 4),
            None,
            r"recall_turns must have shape \(sessions, 3, recalls\), got \(2, 2, 4\)",
        ),
        ((16,) * 5, (2, 3), None, r"recall_turns must have shape"),
        ((16,) * 5, (2, 3, 4), [0], r"seeds must have one entry per session \(2\), got 1"),
    ],
)
def test_bad_batches_are_refused(delays, shape, seeds, message):
    with pytest.raises(ValueError, match=message):
        batch.replay_batch(delays, SessionConfig(seed=0), np.zeros(shape, dtype=np.int64), seeds)
