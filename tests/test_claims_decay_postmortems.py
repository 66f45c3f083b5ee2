"""Sentences of decay-postmortems held to its published record (``data/results/``), and the
real-clock run of the wall-clock draft that section 3 describes (no value of it is published)."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import pytest

from forgetting import hashing
from forgetting.decay.curves import naive_eviction_turn
from forgetting.studies.decay import wallclock
from forgetting.studies.decay.sessions import SessionConfig

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "data" / "results"
RECORD = json.loads((RESULTS / "decay-postmortems.json").read_text(encoding="utf-8"))
VALUES, PARAMETERS = RECORD["values"], RECORD["parameters"]


def rows(name: str) -> list[dict[str, str]]:
    with (RESULTS / f"decay-postmortems-{name}.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def window_losses(schedule: str) -> dict[int, dict[str, int]]:
    table = [r for r in rows("window-losses") if r["schedule"].startswith(schedule)]
    return {int(r["recall"]): {k: int(r[k]) for k in ("scheduled", "found", "first_lost")} for r in table}


def session_config() -> SessionConfig:
    keys = ("session_length", "num_foundational", "recalls_per_foundational", "noise_per_turn")
    return SessionConfig(seed=0, **{k: PARAMETERS[k] for k in keys})


def test_on_the_spaced_schedule_the_window_loses_most_facts_between_recalls_and_the_rest_after_the_last():
    """Section 2: every fact reaches its first recall; the glued counts are the table's; the
    between-recall losses and the after-the-last losses are every fact, and agree with the headline."""
    spaced = window_losses("spaced")
    n_facts = VALUES["n_facts"]
    assert spaced[1]["found"] == n_facts and spaced[1]["first_lost"] == 0
    between = sum(row["first_lost"] for k, row in spaced.items() if k >= 2)
    assert (
        VALUES["window_lost_between"] == between
        and VALUES["window_lost_after_last"] == spaced[0]["first_lost"]
    )
    assert between + VALUES["window_lost_after_last"] == n_facts  # the window keeps none
    assert between > VALUES["window_lost_after_last"]  # "only" the rest after the last recall
    expected = "; ".join(
        f"{row['first_lost']} at recall {k}"
        for k, row in sorted(spaced.items())
        if k >= 2 and row["first_lost"]
    )
    assert VALUES["window_lost_between_by_recall"] == expected
    headline = json.loads((RESULTS / "decay-headline.json").read_text(encoding="utf-8"))["values"]
    assert headline["window_lost_after_last"] == VALUES["window_lost_after_last"]  # same sessions, same W


def test_on_the_uniform_schedule_the_window_loses_every_fact_that_reaches_its_first_recall_at_a_later_one():
    """Section 2 (item 3): the facts that reach their first recall are all lost at a later recall,
    none after the last, and their number is the share in the uniform-vs-spaced table."""
    uniform = window_losses("uniform")
    reached = uniform[1]["found"]
    assert VALUES["uniform_window_reached_first"] == reached
    assert reached == round(VALUES["uniform_winnable_window"] * VALUES["n_facts"])
    assert sum(row["first_lost"] for k, row in uniform.items() if k >= 2) == reached
    assert uniform[0]["scheduled"] == uniform[0]["first_lost"] == 0
    assert VALUES["uniform_window_lost_later"].count("at recall") == sum(
        1 for k, row in uniform.items() if k >= 2 and row["first_lost"]
    )


def test_the_shortest_stability_still_costs_facts_at_the_second_recall_and_later():
    """Section 1: S0 = short loses facts (FRR below 1), none at the first recall, some at the
    second ('the gap to the second recall sometimes exceeds') and some later."""
    outcomes = {int(r["recall"]): int(r["first_lost"]) for r in rows("recall-outcomes")}
    assert VALUES["frr_short"] < 1.0 and VALUES["lost_short"] == sum(outcomes.values()) > 0
    assert outcomes[1] == VALUES["lost_at_first_recall_short"] == 0
    assert outcomes[2] > 0 and sum(v for k, v in outcomes.items() if k >= 3) > 0


def test_every_larger_stability_starts_losing_first_recalls_at_a_larger_offset():
    """Section 1: 'every larger S0 holds out longer' in the first-offset sweep."""
    table = rows("first-offset")
    columns = [c for c in table[0] if c != "first_offset"]

    def first_losing(column: str) -> float:
        losing = [int(r["first_offset"]) for r in table if float(r[column]) < 1.0]
        return losing[0] if losing else float("inf")

    shortest = first_losing(columns[0])
    assert shortest == VALUES["first_losing_offset_short"]
    assert all(first_losing(c) > shortest for c in columns[1:])


def recording_clock(readings: dict[int, list[float]], seed: int):
    """``time.perf_counter()``, each reading kept under ``readings[seed]``."""

    def clock(turn: int) -> float:
        now = time.perf_counter()
        readings.setdefault(seed, []).append(now)
        return now

    return clock


@pytest.mark.slow  # the real clock, with real sleeps
def test_the_real_clock_draft_evicts_nothing_and_reruns_identically():
    """Section 3: the draft at the published S0 (seconds) on time.perf_counter(), the page's
    sessions, ``wallclock.REAL_CLOCK_RERUNS`` reruns. Every replay takes less than the
    ``S0 ln(1/theta)`` seconds an untouched item needs to cross theta, so nothing is evicted,
    each rerun's rows are those of a clock that never moves, and the reruns have one digest: the
    headline's two-run digest check would pass. The bound on the duration is the precondition
    (a session replays in well under a second here), asserted so that a machine slow enough to
    break it fails loudly instead of silently testing something else."""
    config, n_seeds = session_config(), PARAMETERS["n_seeds"]
    theta, stability = PARAMETERS["eviction_threshold"], PARAMETERS["wallclock_stability"]
    grace_seconds = naive_eviction_turn(stability, theta)
    frozen = wallclock.clock_runs(config, n_seeds, lambda seed: lambda turn: 0.0, theta, stability)
    digests, longest = set(), 0.0
    for _ in range(wallclock.REAL_CLOCK_RERUNS):
        readings: dict[int, list[float]] = {}
        runs = wallclock.clock_runs(
            config, n_seeds, lambda seed, seen=readings: recording_clock(seen, seed), theta, stability
        )
        longest = max(longest, *(times[-1] - times[0] for times in readings.values()))
        assert runs == frozen
        digests.add(hashing.digest(runs))
    assert longest < grace_seconds, (
        f"a replay took {longest:.1f} s, not under the grace of {grace_seconds:.2f} s"
    )
    assert len(digests) == 1
    assert VALUES["real_clock_reruns"] == wallclock.REAL_CLOCK_RERUNS
    assert VALUES["wallclock_grace_seconds"] == pytest.approx(grace_seconds, rel=1e-9)


def test_the_window_loses_facts_before_their_first_recall_on_the_uniform_schedule_only():
    """Section 2: 'on the uniform schedule 108 of the 150 facts are lost before their first
    recall ... on the spaced schedule, 0': the glued counts are the window-losses table's first
    recall, and they split every fact with those that reach it."""
    uniform, spaced = window_losses("uniform"), window_losses("spaced")
    n_facts = VALUES["n_facts"]
    assert VALUES["uniform_window_lost_before_first"] == uniform[1]["first_lost"] > 0
    assert VALUES["uniform_window_lost_before_first"] + VALUES["uniform_window_reached_first"] == n_facts
    assert VALUES["spaced_window_lost_before_first"] == spaced[1]["first_lost"] == 0
    assert VALUES["uniform_window_lost_before_first"] > n_facts / 2  # "mostly" too late on the uniform one


def test_the_engines_grace_period_at_the_fixed_stability_is_the_articles_clean_one():
    """Section 1: the article's 'clean 13-turn grace period' is the engine's eviction delay at
    S0 = 8 (data/published.yaml), and the naive eviction turn it computes is not a whole turn."""
    from forgetting.studies.published import load_published

    article = load_published()["decay-postmortems.grace_turns_s8"]
    grace = {float(r["baseline_stability"]): r for r in rows("grace-period")}
    assert VALUES["delay_fixed"] == article.value == int(grace[VALUES["s0_fixed"]]["eviction_delay"])
    assert VALUES["naive_turn_fixed"] != round(VALUES["naive_turn_fixed"])


def test_the_uniform_reconstruction_draws_the_parameters_recalls_per_fact():
    """Section 2: 'drawing each fact's 4 recalls as distinct turns (rng.sample)'."""
    from forgetting.studies.decay.postmortems import uniform_config
    from forgetting.studies.decay.sessions import generate_session

    assert VALUES["recalls_per_fact"] == PARAMETERS["recalls_per_foundational"]
    config = uniform_config(session_config(), PARAMETERS["uniform_first_turn"])
    for seed in range(5):
        session = generate_session(config.replace(seed=seed))
        for fact in session.foundational_ids:
            turns = session.recall_turns(fact)
            assert len(turns) == len(set(turns)) == VALUES["recalls_per_fact"]
            assert all(PARAMETERS["uniform_first_turn"] <= t <= PARAMETERS["session_length"] for t in turns)
