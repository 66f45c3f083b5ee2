"""forgetting.studies.text.shift: the shift episode the paper's numbers imply, and the sweep over it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from forgetting.studies.text.exp5 import RealTextWorld, evidence_ratio_needed, run_episodes
from forgetting.studies.text.shift import SWEEP_KEYS, inferred_shift_episode, shift_sweep, stale_rates
from forgetting.studies.text.summary import summarise

pytest_plugins = ("text_fixtures",)


def test_inferred_shift_gives_the_target_under_the_expected_counters():
    start, target, rate_after, n = 0.8, 0.2, 0.05, 3000
    shift = inferred_shift_episode(start, target, rate_after, n, retrieval_ratio=2.0)
    # expected end value with `shift` episodes at rate 1 and n - shift at rate 2
    before, after = shift * 1.0, (n - shift) * 2.0
    assert (before * start + after * rate_after) / (before + after) == pytest.approx(target, abs=1e-3)
    equal_rates = inferred_shift_episode(start, target, rate_after, n)
    assert equal_rates == round(n / (1 + evidence_ratio_needed(start, target, rate_after)))
    assert equal_rates < shift  # more post-shift retrieval lets the shift come later


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(target=0.9), "target must lie strictly between"),
        (dict(rate_after=0.3), "target must lie strictly between"),
        (dict(n_episodes=1), "n_episodes"),
        (dict(retrieval_ratio=0.0), "retrieval_ratio"),
    ],
)
def test_bad_inference_arguments_are_named(kwargs, message):
    arguments = dict(start=0.8, target=0.2, rate_after=0.05, n_episodes=3000, retrieval_ratio=1.0)
    with pytest.raises(ValueError, match=message):
        inferred_shift_episode(**{**arguments, **kwargs})


def test_stale_rates_are_the_exact_p_plus_of_the_summary(corpus, vectors):
    world = RealTextWorld(n_episodes=400, shift_episode=100)
    rates = stale_rates(corpus, vectors, world)
    summary = summarise(run_episodes(corpus, vectors, world))
    assert rates["p_plus_before"] == summary["stale_p_plus_before"]
    assert rates["p_plus_after"] == summary["stale_p_plus_after"]
    assert 0 < rates["rate_before"] < rates["rate_after"] <= 1  # the task mix moves towards deployment


def test_the_sweep_has_one_row_per_shift_with_mean_and_sd(corpus, vectors):
    world = RealTextWorld(n_episodes=300, shift_episode=100)
    rows = shift_sweep(corpus, vectors, world, [50, 150, 250], n_seeds=3)
    assert [row["shift_episode"] for row in rows] == [50, 150, 250]
    for row in rows:
        assert {f"{key}_{part}" for key in SWEEP_KEYS for part in ("mean", "sd")} <= set(row)
        assert row["n_seeds"] == 3 and 0 <= row["seeds_stale_low_value"] <= 3
    late = summarise(run_episodes(corpus, vectors, replace(world, shift_episode=250, seed=0)))
    assert rows[-1]["stale_mw_after_mean"] > rows[0]["stale_mw_after_mean"]
    assert late["shift_episode"] == 250
    with pytest.raises(ValueError, match="n_seeds"):
        shift_sweep(corpus, vectors, world, [50], n_seeds=1)


def _sweep_row(shift, after, low, before=0.8, specialist=0.75):
    return {
        "shift_episode": shift,
        "stale_mw_before_mean": before,
        "stale_mw_after_mean": after,
        "stale_mw_after_sd": 0.01,
        "specialist_mw_mean_mean": specialist,
        "seeds_stale_low_value": low,
        "n_seeds": 3,
    }


def test_sweep_values_read_the_rows():
    from forgetting.studies.text.shift import low_value_up_to_a_shift, sweep_values

    rows = [_sweep_row(100, 0.1, 3, 0.81), _sweep_row(200, 0.2, 3, 0.79, 0.8), _sweep_row(300, 0.4, 1)]
    values = sweep_values(rows)
    assert (values["sweep_first_shift"], values["sweep_last_shift"], values["sweep_last_all_low"]) == (
        100,
        300,
        200,
    )
    assert (values["sweep_before_low"], values["sweep_before_high"]) == (0.79, 0.81)
    assert (values["sweep_specialist_low"], values["sweep_specialist_high"]) == (0.75, 0.8)
    assert values["sweep_after_increasing"] and low_value_up_to_a_shift(rows)
    rows[1]["stale_mw_after_mean"], rows[0]["seeds_stale_low_value"] = 0.05, 2
    assert not sweep_values(rows)["sweep_after_increasing"] and not low_value_up_to_a_shift(rows)
    assert sweep_values([_sweep_row(100, 0.5, 0)])["sweep_last_all_low"] == -1
