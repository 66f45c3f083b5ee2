"""A saved figure's box: edges snapped outward to the grid, and an edge that lies on a grid line
up to float noise (an axes at a round fraction of a round width) stays there, whichever side of
the line the noise puts it."""

from __future__ import annotations

import math

import matplotlib
import pytest
from hypothesis import given
from hypothesis import strategies as st

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from forgetting.pipeline.boxes import GRID_INCHES, SETTLE_DECIMALS, grid_line, saved_box
from forgetting.pipeline.chapter import use_style


def _ulps(value: float, k: int) -> float:
    """``value`` moved ``k`` units in the last place (either direction)."""
    for _ in range(abs(k)):
        value = math.nextafter(value, math.inf if k > 0 else -math.inf)
    return value


@given(st.integers(-(10**6), 10**6), st.integers(-8, 8), st.booleans())
def test_an_edge_within_float_noise_of_a_grid_line_snaps_to_it(line: int, k: int, up: bool) -> None:
    assert grid_line(_ulps(float(line), k), up) == line


@given(st.floats(-1e6, 1e6), st.booleans())
def test_an_edge_clear_of_the_grid_snaps_outward_as_ceil_and_floor_do(steps: float, up: bool) -> None:
    """A direct reading: away from a grid line (farther than the settling rounding reaches) the
    line is ``ceil`` upward and ``floor`` downward; at any edge it is at most one step out, and
    in by no more than the settling rounding."""
    line = grid_line(steps, up)
    if abs(steps - round(steps)) > 10.0**-SETTLE_DECIMALS:
        assert line == (math.ceil(steps) if up else math.floor(steps))
    slack = 10.0**-SETTLE_DECIMALS
    outward = line - steps if up else steps - line
    assert -slack <= outward < 1 + slack


@pytest.mark.parametrize("steps", [math.nan, math.inf, -math.inf])
def test_a_measurement_that_is_not_a_number_is_refused(steps: float) -> None:
    with pytest.raises(ValueError, match="steps must be a finite number of grid steps"):
        grid_line(steps, up=True)


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 3])
def test_an_axes_edge_on_a_grid_line_gives_the_same_box_at_any_last_bit(k: int) -> None:
    """A 7.2 in figure whose axes end at 0.9 of its width: with the style's 0.02 in pad the box's
    right edge is 6.50 in however the last bits of the axes' width come out."""
    use_style()
    fig = plt.figure(figsize=(7.2, 3.0))
    ax = fig.add_axes((0.1, 0.2, _ulps(0.8, k), 0.6))
    ax.set_xticks([])
    ax.set_yticks([])
    box = saved_box(fig)
    plt.close(fig)
    per_inch = round(1 / GRID_INCHES)
    assert box.x1 == 650 / per_inch
    assert box.x0 == math.floor((0.72 - 0.02) * per_inch) / per_inch
