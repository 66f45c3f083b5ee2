"""mw-exp1's sentences about the two-sample comparison, held against the published record."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from forgetting.studies.mean_difference import consistent_indices, difference_of_means, standard_error
from forgetting.studies.published import load_published
from forgetting.studies.stats import Z_95

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def record() -> dict[str, object]:
    return json.loads((RESULTS / "mw-exp1.json").read_text(encoding="utf-8"))["values"]


def sweep() -> list[dict[str, str]]:
    with (RESULTS / "mw-exp1-depth-sweep.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_headline_range_is_every_depth_whose_mean_agrees_under_the_stated_criterion():
    """Headline: "the book's mean agrees with the paper's for k from <k_match>", recomputed from
    the sweep table with the paper's spread read as an sd over the chapter's seeds."""
    v, paper = record(), load_published()["mw-exp1.rho"]
    paper_se = paper.spread / math.sqrt(v["n_seeds"])
    assert math.isclose(v["paper_rho_se"], paper_se, rel_tol=1e-9)
    table = sweep()
    ks = [int(r["k"]) for r in table]
    agree = [
        ks[i]
        for i in consistent_indices(
            [float(r["rho_mean"]) for r in table], [float(r["rho_se"]) for r in table], paper.value, paper_se
        )
    ]
    assert agree == [int(r["k"]) for r in table if r["agrees_with_paper_mean"] == "True"]
    assert agree == list(range(min(agree), max(agree) + 1))
    assert v["k_match"] == f"{min(agree)} to {max(agree)}" and v["n_matched"] == len(agree)
    band = [int(r["k"]) for r in table if r["consistent_with_paper"] == "True"]
    assert set(agree) < set(band)  # "the lenient band reading would accept more"


def test_the_chapters_own_k_is_outside_the_two_sample_range_and_its_verdict_says_so():
    v = record()
    paper = load_published()["mw-exp1.rho"]
    headline = difference_of_means(
        v["rho_mean"], v["rho_se"], paper.value, standard_error(paper.spread, v["n_seeds"])
    )
    assert math.isclose(v["rho_diff"], headline.difference, rel_tol=1e-8)
    assert math.isclose(v["rho_diff_se"], headline.se, rel_tol=1e-8)
    assert (v["strict_verdict"] == "agrees") == headline.consistent
    assert (v["k_in_match"] == "inside") == headline.consistent
    assert v["k_in_match"] == "outside" and v["band_verdict"] == "inside"
    # far from the boundary: the verdict does not hinge on the last digits
    assert abs(abs(headline.z) - Z_95) > 0.1


def test_rho_falls_with_every_step_of_k_and_stays_far_above_the_baseline():
    # "ρ falls with every step of k, from <rho_k_smallest> ... to <rho_k_largest>"; "Memory Worth
    # ends far above the never-updating baseline's 0 at every depth"
    v, table = record(), sweep()
    means = [float(r["rho_mean"]) for r in table]
    assert all(a > b for a, b in zip(means, means[1:]))
    assert (v["rho_k_smallest"], v["rho_k_largest"]) == (means[0], means[-1])
    assert min(means) > 0.5 and v["rho_static"] == 0.0


def test_only_k_is_swept_and_the_chosen_k_is_inside_both_lenient_ranges():
    # "Of the settings the paper leaves open, only the retrieval depth k is swept here"
    v = record()
    parameters = json.loads((RESULTS / "mw-exp1.json").read_text(encoding="utf-8"))["parameters"]
    assert set(parameters) == {
        "n_memories",
        "retrieved_per_episode",
        "n_episodes",
        "n_seeds",
        "seed",
        "checkpoints",
        "depths",
    }
    assert [int(r["k"]) for r in sweep()] == list(range(v["k_smallest"], v["k_largest"] + 1))
    # "The chosen k is inside both lenient ranges"
    for key in ("k_inside", "k_consistent"):
        low, high = (int(x) for x in v[key].split(" to "))
        assert low <= v["k"] <= high, key


def test_every_memory_ends_mixed_at_the_chapters_k():
    # "the default thresholds put every memory in the same class, mixed"
    v = record()
    assert v["class_mixed"] == v["n_memories"]
    assert v["class_high_value"] == v["class_low_value"] == v["class_uncertain"] == 0.0
