"""Seed summaries: the two summation rules, each exactly as the chapters use it."""

import statistics

import numpy as np
import pytest

from forgetting.studies.stats import SeedSummary, mean_sd, rho_across_seeds, summarize


def test_summarize_is_statistics_exactly():
    values = [0.1, 0.2, 0.7, 1 / 3, 2 / 3]
    summary = summarize(values)
    assert summary == SeedSummary(statistics.fmean(values), statistics.stdev(values), 0.1, 0.7, 5)
    assert summarize([4.0]) == SeedSummary(4.0, 0.0, 4.0, 4.0, 1)


def test_mean_sd_is_numpy_exactly():
    values = np.random.default_rng(0).random(37)
    assert mean_sd(values) == (float(values.mean()), float(values.std(ddof=1)))
    assert mean_sd([2.0]) == (2.0, 0.0)
    assert rho_across_seeds(values) == mean_sd(values)


def test_empty_input_is_refused():
    with pytest.raises(ValueError, match="values must not be empty"):
        summarize([])
    with pytest.raises(ValueError, match="values must not be empty"):
        mean_sd([])
