"""The shared argument checks: one sentence per problem naming the argument, the value and what is allowed."""

import math

import numpy as np
import pytest

from forgetting._validate import (
    bool_problem,
    int_problem,
    is_bool,
    is_hashable,
    is_int,
    is_real,
    raise_problems,
    real_problem,
    require_int,
    require_real,
    seed_problem,
)


def test_predicates():
    assert is_int(3) and not is_int(True) and not is_int(3.0) and not is_int(np.int64(3))
    assert is_int(np.int64(3), allow_numpy=True) and not is_int(np.bool_(True), allow_numpy=True)
    assert is_real(2) and is_real(2.5) and is_real(np.float32(1.0)) and is_real(np.int8(1))
    assert not any(is_real(v) for v in (True, math.nan, math.inf, "1", None, 10**400))
    assert is_hashable((1, "a")) and not is_hashable([1])


def test_problem_sentences_name_argument_value_and_range():
    assert int_problem("n", 3, minimum=1) is None
    assert int_problem("n", 0, minimum=1) == "n must be an int >= 1, got 0"
    assert int_problem("n", 9, minimum=1, maximum=5) == "n must be an int >= 1 and <= 5, got 9"
    assert real_problem("p", 0.5, 0.0, 1.0) is None
    assert real_problem("p", 0.0, 0.0, 1.0, low_open=True) == "p must be a real number in (0, 1], got 0.0"
    assert real_problem("s", -1, 0.0, low_open=True) == "s must be a finite real number > 0, got -1"
    assert real_problem("x", math.nan) == "x must be a finite real number, got nan"


def test_raise_problems_lists_every_problem_at_once():
    raise_problems([None, None])
    with pytest.raises(
        ValueError, match=r"^World: a must be an int, got 'x'; b must be a finite real number, got None$"
    ):
        raise_problems([int_problem("a", "x"), None, real_problem("b", None)], prefix="World: ")


def test_require_returns_the_plain_value():
    assert require_int("k", np.int64(4), minimum=1, allow_numpy=True) == 4
    assert type(require_real("t", np.float32(0.5), 0.0, 1.0)) is float
    with pytest.raises(ValueError, match="k must be an int >= 1, got 0"):
        require_int("k", 0, minimum=1)
    with pytest.raises(ValueError, match=r"t must be a real number in \[0, 1\], got 2"):
        require_real("t", 2, 0.0, 1.0)


def test_flags_are_bools_and_seeds_are_non_negative_ints():
    assert is_bool(True) and is_bool(np.bool_(False)) and not any(is_bool(v) for v in (0, 1, "no", None))
    assert bool_problem("flag", np.True_) is None
    assert bool_problem("flag", "no") == "flag must be a bool (True or False), got 'no'"
    assert bool_problem("flag", "x" * 200).endswith("(202 characters)")
    assert seed_problem("seed", 0) is None and seed_problem("seed", np.uint32(7)) is None
    for bad in (-1, True, 1.0, "1", None):
        assert seed_problem("seed", bad) == f"seed must be an int >= 0, got {bad!r}"
