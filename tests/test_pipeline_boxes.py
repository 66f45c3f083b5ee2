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


def _markers_pdf(y: float, chapter: bool) -> tuple[bytes, float]:
    """The PDF of a line's markers, the first at height ``y`` (axes fixed: only its position can differ),
    saved as a chapter saves it or (not ``chapter``) as matplotlib does; and the marker's height
    in the PDF's units (points)."""
    import io

    from forgetting.pipeline.chapter import _saver

    fig, ax = plt.subplots(figsize=(2, 2))
    xs = [0.05 + 0.9 * i / 19 for i in range(20)]  # enough markers for one drawing placed 20 times
    ax.plot(xs, [y] + [0.5] * 19, "o")  # a line's markers: placed by a matrix ("cm"), not a path
    ax.set(xlim=(0, 1), ylim=(0, 1))
    fig.set_dpi(72)  # display units are then the PDF's points
    fig.canvas.draw()
    height = float(ax.transData.transform((xs[0], y))[1])
    metadata = {"CreationDate": None, "Creator": None, "Producer": None}
    buffer = io.BytesIO()
    if chapter:
        _saver(fig, "pdf", metadata, None)(buffer)
    else:
        fig.savefig(buffer, format="pdf", metadata=metadata)
    plt.close(fig)
    return buffer.getvalue(), height


def test_a_marker_moved_by_float_noise_is_the_same_pdf_as_a_chapter_saves_it():
    """Issue 42: a marker of beyond-credit's separation figure was written at 45.5503099771 points
    on one CPU and 45.5503099772 on another (OpenBLAS's Haswell kernel): matplotlib writes a PDF
    marker position with ten decimals of a point, while its SVG, at six, was the same. Two heights
    a relative 1e-11 apart give two PDFs from matplotlib and one as a chapter saves it (both
    heights lie far from a rounding boundary of the sixth decimal, as checked first)."""
    y = 0.3162277660168379
    moved = y * (1 + 1e-11)
    own, at = zip(*(_markers_pdf(v, chapter=False) for v in (y, moved)), strict=True)
    assert 1e-10 < abs(at[1] - at[0]) < 1e-8  # the noise reaches the tenth decimal, not the sixth
    assert 0.1 < (at[0] * 1e6) % 1 < 0.9  # clear of a boundary of the sixth decimal
    assert own[0] != own[1]  # the defect: matplotlib's ten decimals show it
    chapter = [_markers_pdf(v, chapter=True)[0] for v in (y, moved)]
    assert chapter[0] == chapter[1]


def test_the_pdf_writer_is_restored_after_a_chapters_save():
    from matplotlib.backends import backend_pdf

    from forgetting.pipeline.boxes import vector_precision

    written = backend_pdf.pdfRepr
    with pytest.raises(RuntimeError, match="inside"), vector_precision():
        assert backend_pdf.pdfRepr(1.23456789) == b"1.234568"
        raise RuntimeError("an error inside the block")
    assert backend_pdf.pdfRepr is written and backend_pdf.pdfRepr(1.23456789) == b"1.23456789"
