"""Legends off the data: what a legend covers is read from the drawn figure, a legend that covers
something is moved where it covers nothing, and a book figure whose legend cannot be cleared fails."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from forgetting.pipeline.chapter import Chapter, use_style
from forgetting.pipeline.chapters import spec
from forgetting.pipeline.legends import CLEARANCE_POINTS, INSIDE, clear_legends, covered_data


@pytest.fixture(autouse=True)
def _style():
    use_style()
    yield
    plt.close("all")


def _line_under_legend():
    """A line through the centre of the axes, and a legend placed on it."""
    fig, ax = plt.subplots()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.plot([0, 1], [0.5, 0.5], label="flat")
    ax.plot([0, 0.1], [0.0, 0.05], label="corner")
    ax.legend(loc="center")
    return fig, ax


def test_a_legend_on_a_line_is_reported_with_the_line_and_its_axes() -> None:
    fig, _ = _line_under_legend()
    assert covered_data(fig) == ["legend of axes 0 covers 'flat' in axes 0"]


def test_a_covering_legend_is_moved_to_the_first_clear_position() -> None:
    fig, ax = _line_under_legend()
    assert clear_legends(fig) == []
    assert covered_data(fig) == []
    assert ax.get_legend()._loc == INSIDE.index("upper right") + 1  # upper right is clear


def test_a_legend_that_covers_nothing_stays_where_the_chapter_put_it() -> None:
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0.0, 0.1], label="low")
    ax.legend(loc="upper left")
    before = ax.get_legend().get_window_extent(fig.canvas.get_renderer()).bounds
    assert clear_legends(fig) == []
    assert ax.get_legend().get_window_extent(fig.canvas.get_renderer()).bounds == before


@pytest.mark.parametrize(
    "draw, what",
    [
        (lambda ax: ax.axhline(0.5, label="threshold"), "'threshold'"),
        (lambda ax: ax.axvline(0.5, label="cut-off"), "'cut-off'"),
        (lambda ax: ax.scatter([0.5], [0.5], label="point"), "'point'"),
        (lambda ax: ax.bar([0.5], [1.0], width=0.2, label="bar"), "an unlabelled Rectangle"),
        (lambda ax: ax.fill_between([0, 1], [0.4, 0.4], [0.6, 0.6], label="band"), "'band'"),
        (
            lambda ax: ax.errorbar([0.5], [0.5], yerr=[0.2], fmt="none", label="interval"),
            "an unlabelled LineCollection",
        ),
        (lambda ax: ax.text(0.5, 0.5, "note"), "'note'"),
        (lambda ax: ax.plot([0.5], [0.5], "o", label="marker"), "'marker'"),
    ],
)
def test_every_kind_of_data_counts(draw, what: str) -> None:
    fig, ax = plt.subplots()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    draw(ax)
    ax.plot([], [], label="entry")
    ax.legend(loc="center")
    assert f"legend of axes 0 covers {what} in axes 0" in covered_data(fig)


def test_a_shaded_span_and_the_grid_are_not_data() -> None:
    fig, ax = plt.subplots()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.axvspan(0.2, 0.8, alpha=0.2)
    ax.plot([0, 0.05], [0, 0.05], label="entry")
    ax.grid(True)
    ax.legend(loc="center")
    assert covered_data(fig) == []


def test_a_marker_beside_the_legend_box_is_not_covered() -> None:
    fig, ax = plt.subplots()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.plot([0.02], [0.02], "o", label="far corner")
    ax.legend(loc="upper right")
    assert covered_data(fig) == []


def _tight_without_legend(ax):
    legend = ax.get_legend()
    legend.set_visible(False)
    tight = ax.get_tightbbox(ax.figure.canvas.get_renderer())
    legend.set_visible(True)
    return tight


def test_with_no_clear_place_inside_the_legend_goes_right_of_the_axes_and_their_labels() -> None:
    fig, ax = plt.subplots()
    ax.fill_between([0, 1], [0, 0], [1, 1], label="everywhere")
    ax.set(xlim=(0, 1), ylim=(0, 1), ylabel="a label", title="a title")
    ax.legend(loc="center")
    assert clear_legends(fig) == []
    box = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
    assert box.x0 > _tight_without_legend(ax).x1  # right of the axes and of everything they draw


def test_beside_a_panel_means_below_its_labels_when_another_panel_is_to_the_right() -> None:
    fig, (left, right) = plt.subplots(1, 2)
    for ax in (left, right):
        ax.fill_between([0, 1], [0, 0], [1, 1], label="everywhere")
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="x", ylabel="y", title="panel")
    left.legend(loc="center")
    assert clear_legends(fig) == []
    box = left.get_legend().get_window_extent(fig.canvas.get_renderer())
    assert box.y1 < _tight_without_legend(left).y0  # below the panel's tick labels and x label
    assert not box.overlaps(right.get_tightbbox(fig.canvas.get_renderer()))


def test_a_legend_on_another_panels_labels_counts_as_covering_them() -> None:
    fig, (left, right) = plt.subplots(1, 2)
    right.set(ylabel="the right panel's label")
    left.plot([0, 1], [0, 1], label="line")
    left.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    assert "legend of axes 0 covers the labels of axes 1" in covered_data(fig)


def _uncleared_figure():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0.5, 0.5], label="flat")
    fig.legend(loc="center")  # a figure legend is left where the chapter put it
    return fig


def test_a_book_figure_whose_legend_covers_data_fails_and_is_not_saved(tmp_path: Path) -> None:
    chapter = Chapter(spec("decay-retention"), dict(spec("decay-retention").defaults), root=tmp_path)
    with pytest.raises(
        ValueError,
        match=r"figure decay-retention-flat: legend of the figure \(0\) covers 'flat' in axes 0; "
        r"no panel's legend could be moved",
    ):
        chapter.figure(_uncleared_figure(), "flat")
    assert chapter.figures == [] and not list(tmp_path.rglob("*.png"))


def test_off_published_parameters_the_same_figure_is_saved_with_a_warning(tmp_path: Path) -> None:
    chapter = Chapter(
        spec("decay-retention"), {**spec("decay-retention").defaults, "max_turns": 100}, root=tmp_path
    )
    with pytest.warns(
        UserWarning,
        match="figure decay-retention-flat: legend of the figure \\(0\\) covers 'flat' in axes 0$",
    ):
        chapter.figure(_uncleared_figure(), "flat")
    assert chapter.figures == ["decay-retention-flat"]


def _dense_touch(xy: np.ndarray, box) -> bool:
    """A direct reading: some point of a segment, sampled every 1/2000 of it, lies in the box."""
    t = np.linspace(0, 1, 2001)[:, None]
    for a, b in zip(xy[:-1], xy[1:]):
        points = a + t * (b - a)
        if np.any(
            (points[:, 0] >= box.x0)
            & (points[:, 0] <= box.x1)
            & (points[:, 1] >= box.y0)
            & (points[:, 1] <= box.y1)
        ):
            return True
    return False


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=6))
def test_a_line_is_covered_exactly_when_some_point_of_it_lies_in_the_padded_box(points) -> None:
    fig, ax = plt.subplots()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    (line,) = ax.plot(*zip(*points), label="line")
    ax.plot([], [], label="a second entry")
    legend = ax.legend(loc="center")
    reported = any("'line'" in entry for entry in covered_data(fig))

    box = legend.get_window_extent(fig.canvas.get_renderer())
    xy = line.get_transform().transform(np.asarray(points))
    near = box.padded(CLEARANCE_POINTS * fig.dpi / 72 + 0.5)
    far = box.padded(CLEARANCE_POINTS * fig.dpi / 72 - 0.5)
    plt.close(fig)
    if _dense_touch(xy, far):
        assert reported
    elif not _dense_touch(xy, near):
        assert not reported
