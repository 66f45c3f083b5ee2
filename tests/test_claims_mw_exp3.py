"""mw-exp3's sentences about exploration, held to the published record and its exploration
table (``data/results/mw-exp3*``): if a republished result stopped backing one, this fails."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from forgetting.studies.worlds.exploration import plain_loops_beaten

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def values() -> dict[str, object]:
    return json.loads((RESULTS / "mw-exp3.json").read_text())["values"]


def table(name: str) -> list[dict[str, float]]:
    with (RESULTS / f"mw-exp3-{name}.csv").open(newline="") as handle:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)]


def test_the_plain_loops_of_the_exploration_table_are_the_temperature_sweep():
    plain = [r for r in table("exploration-sweep") if r["epsilon"] == 0]
    sweep = table("temperature-sweep")
    assert [(r["temperature"], r["rho_mean"], r["entropy"]) for r in plain] == [
        (r["temperature"], r["rho_mean"], r["entropy"]) for r in sweep
    ]


def test_every_mix_raises_rho_at_the_coldest_temperature_but_none_reaches_uniform_retrieval():
    v = values()
    cold = [r for r in table("exploration-sweep") if r["temperature"] == v["t_coldest"]]
    mixes = [r for r in cold if r["epsilon"] > 0]
    assert mixes and all(r["rho_mean"] > v["rho_coldest"] for r in mixes)
    assert max(r["rho_ci95_high"] for r in mixes) < v["rho_uniform"]
    assert all(r["coverage_min"] == 1.0 for r in mixes)


def test_the_entropy_rises_with_epsilon_at_every_temperature():
    rows = table("exploration-sweep")
    for t in {r["temperature"] for r in rows}:
        line = sorted((r["epsilon"], r["entropy"]) for r in rows if r["temperature"] == t)
        assert all(a[1] < b[1] for a, b in zip(line, line[1:])), t


def test_the_smallest_mix_succeeds_more_and_the_largest_less_than_the_coldest_plain_loop():
    v = values()
    assert v["mix_coldest_small_success_rate"] > v["success_coldest"] > v["mix_coldest_large_success_rate"]
    assert v["success_at_chosen"] < v["mix_coldest_small_success_rate"]


def test_the_beaten_plain_loops_are_those_the_table_gives():
    v = values()
    beaten = plain_loops_beaten(table("exploration-sweep"))
    assert v["n_plain_beaten"] == len(beaten) > 0
    assert v["plain_beaten_temperatures"] == ", ".join(f"{b['temperature']:g}" for b in beaten)


def test_at_the_loop_only_a_colder_mix_beats_every_mix_of_its_own_temperature_succeeds_less():
    # "At τ = 0.1 it does not: every mix at that temperature succeeds less often than the plain loop"
    v = values()
    rows = table("exploration-sweep")
    t = v["elsewhere_temperature"]
    plain = next(r for r in rows if r["temperature"] == t and r["epsilon"] == 0)
    own = [r["success_rate"] for r in rows if r["temperature"] == t and r["epsilon"] > 0]
    assert (v["elsewhere_own_mix_success_low"], v["elsewhere_own_mix_success_high"]) == (min(own), max(own))
    assert v["elsewhere_plain_success"] == plain["success_rate"] > max(own)
    winners = [
        r
        for r in rows
        if r["epsilon"] > 0
        and r["rho_ci95_low"] > plain["rho_ci95_high"]
        and r["success_rate"] > plain["success_rate"]
    ]
    assert winners and all(r["temperature"] < t for r in winners)
    same = plain_loops_beaten(rows, same_temperature=True)
    assert v["plain_beaten_same_temperatures"] == ", ".join(f"{b['temperature']:g}" for b in same)
    assert t not in {b["temperature"] for b in same}
    assert v["plain_beaten_elsewhere_temperatures"] == f"{t:g}"


def test_colder_loops_succeed_more_often_and_rank_worse():
    # "Colder loops succeed more often and rank worse"; "Colder loops rank worse long before they
    # stop covering the store"
    v = values()
    sweep = sorted(table("temperature-sweep"), key=lambda r: -r["temperature"])  # warm to cold
    rho = [r["rho_mean"] for r in sweep]
    success = [r["success_rate"] for r in sweep]
    assert all(a > b for a, b in zip(rho, rho[1:]))
    assert all(a < b for a, b in zip(success, success[1:]))
    full = [r for r in sweep if r["coverage_min"] == 1.0]
    assert v["t_full_coverage"] == min(r["temperature"] for r in full)
    assert v["rho_full_coverage"] < v["rho_policy"] - 0.5  # far worse while coverage is complete
