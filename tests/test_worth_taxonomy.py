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


# --- the classes are a StrEnum: members that are the strings they were -------------------------


def test_the_classes_are_an_enum_whose_members_are_the_old_strings():
    from forgetting.worth import WorthClass

    assert list(WorthClass) == list(WORTH_CLASSES) == ["high-value", "uncertain", "mixed", "low-value"]
    assert tuple(WorthClass) == (HIGH_VALUE, UNCERTAIN, MIXED, LOW_VALUE)
    assert LOW_VALUE is WorthClass.LOW_VALUE and LOW_VALUE == "low-value" and isinstance(LOW_VALUE, str)
    assert WorthClass("mixed") is MIXED and hash(MIXED) == hash("mixed") and {"mixed": 1}[MIXED] == 1
    mw = MemoryWorth(min_evidence=1.0).update(["a"], False)
    assert mw.classify("a") is WorthClass.LOW_VALUE and worth_class(0.9, 5.0) is WorthClass.HIGH_VALUE
    labels = worth_class([0.9, 0.1], [10.0, 10.0])
    assert labels.dtype.kind == "U" and labels.tolist() == [
        "high-value",
        "low-value",
    ]  # arrays: plain strings


def test_every_output_writes_a_class_as_its_plain_value():
    """JSON, f-strings, str(), format() and CSV write what they wrote when the classes were str."""
    import json

    import pandas as pd

    for member in WORTH_CLASSES:
        value = member.value
        assert type(value) is str
        assert json.dumps(member) == json.dumps(value) and json.dumps({member: [member]}) == json.dumps(
            {value: [value]}
        )
        assert f"{member}" == str(member) == format(member) == "".join([member]) == value
        assert f"{member:>12}" == f"{value:>12}" and f"{member!s}" == value
    rows = [{"memory": "a", "class": cls, **{c: 1 for c in WORTH_CLASSES}} for cls in WORTH_CLASSES]
    plain = [
        {"memory": "a", "class": cls.value, **{c.value: 1 for c in WORTH_CLASSES}} for cls in WORTH_CLASSES
    ]
    frame, other = pd.DataFrame(rows), pd.DataFrame(plain)
    assert frame.to_csv(index=False) == other.to_csv(index=False)
    assert frame.to_json(orient="records") == other.to_json(orient="records")
    assert frame.to_string() == other.to_string() and "WorthClass" not in frame.to_csv(index=False)
