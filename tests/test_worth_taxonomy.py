"""The four classes: edges, configurable thresholds, defaults stored once."""

import numpy as np
import pytest

from forgetting import worth
from forgetting.worth import (
    HIGH_VALUE,
    LOW_VALUE,
    MIXED,
    UNCERTAIN,
    WORTH_CLASSES,
    MemoryWorth,
    class_counts,
    memory_worth,
    worth_class,
)


@pytest.mark.parametrize(
    "pos, neg, expected",
    [
        (7.0, 3.0, HIGH_VALUE),  # worth exactly 0.7 -> high-value
        (3.0, 7.0, LOW_VALUE),  # worth exactly 0.3 -> low-value
        (5.0, 5.0, MIXED),
        (6.9, 3.1, MIXED),  # just below 0.7
        (5.0, 0.0, HIGH_VALUE),  # evidence exactly min_evidence (5) is enough
        (4.0, 0.0, UNCERTAIN),  # evidence 4 < 5, even at worth 1
        (0.0, 4.999, UNCERTAIN),
        (0.0, 5.0, LOW_VALUE),
    ],
)
def test_classification_at_the_edges(pos, neg, expected):
    mw = MemoryWorth()
    mw.successes_["m"], mw.failures_["m"] = pos, neg
    assert mw.classify("m") == expected
    assert worth_class(memory_worth(pos, neg), pos + neg) == expected


def test_classification_thresholds_are_configurable():
    mw = MemoryWorth(min_evidence=0.0, high_threshold=0.9, low_threshold=0.1)
    mw.update(["a"], True)
    mw.update(["b"], True).update(["b"], False)
    assert mw.classify("a") == HIGH_VALUE
    assert mw.classify("b") == MIXED
    assert mw.classify("unseen") == MIXED  # no evidence needed; prior 0.5 is mixed
    labels = worth_class(
        np.array([0.9, 0.1, 0.5, 1.0]),
        np.array([1.0, 1.0, 1.0, 0.5]),
        min_evidence=1.0,
        high_threshold=0.9,
        low_threshold=0.1,
    )
    assert labels.tolist() == [HIGH_VALUE, LOW_VALUE, MIXED, UNCERTAIN]


def test_default_constants():
    assert (
        worth.DEFAULT_PRIOR,
        worth.DEFAULT_MIN_EVIDENCE,
        worth.DEFAULT_HIGH_THRESHOLD,
        worth.DEFAULT_LOW_THRESHOLD,
    ) == (0.5, 5.0, 0.7, 0.3)
    mw = MemoryWorth()
    assert (mw.prior, mw.min_evidence, mw.high_threshold, mw.low_threshold) == (0.5, 5.0, 0.7, 0.3)


def test_class_counts_use_the_same_rule_as_worth_class():
    worth_values = np.array([0.9, 0.7, 0.5, 0.3, 0.1, 0.9])
    evidence = np.array([10, 10, 10, 10, 10, 4.9])
    counts = class_counts(worth_values, evidence)
    labels = worth_class(worth_values, evidence)
    assert counts.tolist() == [int((labels == c).sum()) for c in WORTH_CLASSES] == [2, 1, 1, 2]


@pytest.mark.parametrize(
    "rate, volume, name",
    [
        (np.nan, 10, "worth"),
        (np.inf, 10, "worth"),
        (1.5, 10, "worth"),
        (-0.1, 10, "worth"),
        (True, 10, "worth"),
        ("0.9", 10, "worth"),
        (np.array([0.5, np.nan]), np.array([10.0, 10.0]), "worth"),
        (0.5, np.nan, "evidence"),
        (0.5, np.inf, "evidence"),
        (0.5, -1.0, "evidence"),
        (0.5, None, "evidence"),
    ],
)
def test_worth_class_refuses_nan_infinite_or_out_of_range_input(rate, volume, name):
    with pytest.raises(ValueError, match=f"^{name} must be"):
        worth_class(rate, volume)
    with pytest.raises(ValueError, match=f"^{name} must be"):
        class_counts(rate, volume)


def test_worth_class_lists_every_bad_argument_and_threshold_at_once():
    with pytest.raises(ValueError) as error:
        worth_class(np.nan, np.inf, min_evidence=-1.0, high_threshold=2.0)
    message = str(error.value)
    for name in ("min_evidence", "high_threshold", "worth", "evidence"):
        assert f"{name} must be" in message
    with pytest.raises(ValueError, match="low_threshold must be < high_threshold"):
        worth_class(0.5, 10.0, high_threshold=0.3, low_threshold=0.7)
    with pytest.raises(ValueError, match="broadcastable shapes"):
        worth_class([0.5, 0.5], [1.0, 2.0, 3.0])
