"""forgetting.text.similarity: rounding, the id tie rule, and the perturbation margins."""

from __future__ import annotations

import numpy as np

from forgetting.text.model_files import EMBEDDING_DIM
from forgetting.text.similarity import (
    COSINE_DECIMALS,
    RELATIVE_PERTURBATION,
    cosine_matrix,
    fragile_ranking,
    fragile_rounding,
    rank_candidates,
)

pytest_plugins = ("text_fixtures",)


def test_rank_candidates_orders_by_score_then_id():
    scores = np.array([0.5, 0.7, 0.5, 0.7, 0.1])
    ids = ["b", "z", "a", "c", "d"]
    assert rank_candidates(scores, ids).tolist() == [3, 1, 2, 0, 4]


def test_rounding_flags_values_next_to_a_boundary():
    values = np.array([0.5124, 0.51245 - 1e-6, 0.51245 + 4e-6, 0.51245 + 6e-6, 0.51249])
    assert fragile_rounding(values, tolerance=5e-6, decimals=4).tolist() == [False, True, True, False, False]
    assert not fragile_rounding(values, tolerance=5e-6, decimals=3).any()


def _near_tie(seed=0):
    """A query and two memories whose cosines to it differ by ~1e-9 (float32 unit vectors)."""
    rng = np.random.default_rng(seed)
    query = rng.normal(size=EMBEDDING_DIM)
    other = rng.normal(size=EMBEDDING_DIM)
    other -= (other @ query) / (query @ query) * query
    unit_query, unit_other = query / np.linalg.norm(query), other / np.linalg.norm(other)
    first = (0.5123 * unit_query + np.sqrt(1 - 0.5123**2) * unit_other).astype(np.float32)
    second = first.copy()
    second[np.argmax(np.abs(unit_query))] = np.nextafter(
        second[np.argmax(np.abs(unit_query))], np.float32(0)
    )  # one ulp less
    return unit_query.astype(np.float32)[None, :], np.vstack([first, second])


def _perturb(array, rng):
    """Every component times (1 + 1e-6 u), u uniform in [-1, 1): a relative 1e-6 perturbation."""
    return (array.astype(np.float64) * (1 + RELATIVE_PERTURBATION * rng.uniform(-1, 1, array.shape))).astype(
        np.float32
    )


def test_without_rounding_a_relative_1e6_perturbation_reorders_a_near_tie():
    """The protection is the rounding: raw cosines of a near tie swap under the perturbation."""
    query, memories = _near_tie()
    ids = ["mem-a", "mem-b"]
    raw = cosine_matrix(query, memories)[0]
    assert 0 < abs(raw[0] - raw[1]) < 1e-7
    rng = np.random.default_rng(12345)
    raw_orders, rounded_orders, last_digits = set(), set(), set()
    for _ in range(40):
        moved = cosine_matrix(_perturb(query, rng), _perturb(memories, rng))[0]
        last_digits.add(tuple(moved))
        raw_orders.add(tuple(rank_candidates(moved, ids)))  # the old, unrounded ranking
        rounded_orders.add(tuple(rank_candidates(np.round(moved, COSINE_DECIMALS), ids)))
        assert np.array_equal(np.round(moved, COSINE_DECIMALS), np.round(raw, COSINE_DECIMALS))
    assert len(last_digits) > 1 and any(not np.array_equal(d, raw) for d in map(np.array, last_digits))
    assert len(raw_orders) == 2  # unrounded: the order depends on the noise
    assert rounded_orders == {(0, 1)}  # rounded: an exact tie, decided by id, every time
    assert not fragile_ranking(raw, ids, 1)
    # a near tie that straddles a rounding boundary is fragile even after rounding (and flagged):
    # rounded 0.5125 vs 0.5124 now, but both may round alike, and then the id rule reorders them
    straddling = np.array([0.51245 + 1e-6, 0.51245 - 1e-6])
    assert fragile_ranking(straddling, ["mem-b", "mem-a"], 1, decimals=4)
    assert not fragile_ranking(straddling, ["mem-b", "mem-a"], 1, decimals=3)
