"""Sentences of the chapters that state a count, a share or an "every", held to the published
results (``data/results/``): if a republished result stopped backing a sentence, this fails."""

from __future__ import annotations

import csv
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "data" / "results"


def values(chapter: str) -> dict[str, object]:
    return json.loads((RESULTS / f"{chapter}.json").read_text(encoding="utf-8"))["values"]


def rows(name: str) -> list[dict[str, str]]:
    with (RESULTS / name).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_window_loses_most_facts_between_recalls_and_the_rest_after_the_last():
    """decay-headline ("Why the window's zero is built in") and decay-postmortems section 2."""
    headline = values("decay-headline")
    assert headline["frr_window"] == 0.0 and headline["frr_decay"] == 1.0
    assert headline["window_lost_after_last"] == headline["window_found_last_recall"]
    assert headline["window_found_last_recall"] < headline["n_facts"] / 2  # "most" between recalls
    spaced = {
        r["policy"]: r
        for r in rows("decay-postmortems-uniform-vs-spaced.csv")
        if r["schedule"].startswith("spaced")
    }
    assert len(spaced) == 2
    for row in spaced.values():  # every fact reaches its first recall under both policies
        assert float(row["first_recall_in_grace"]) == 1.0
