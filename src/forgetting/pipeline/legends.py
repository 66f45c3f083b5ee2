"""Legends off the data: what a legend covers in the drawn figure, and moving it where it covers
nothing.

A legend *covers* an artist when its box, drawn frame or not, padded by :data:`CLEARANCE_POINTS`,
meets in display coordinates a line of any axes of the figure (its path; for a line drawn with
markers only, a marker's centre), reference lines (``axhline``, ``axvline``) included, a scatter
point, a segment or band of a collection, or a bar placed in data coordinates, or a text of the
axes (an annotation). Grid lines and spans drawn in axes coordinates (``axvspan``: a shaded
region, not a value) are not covered.

:func:`clear_legends` keeps each axes legend where the chapter put it when it covers nothing;
otherwise it moves it to the first of :data:`INSIDE` where it covers nothing, else to the first of
:data:`BESIDE` where it covers neither data nor another axes' labels. Every decision compares
drawn extents, which depend only on the figure's data and the house style. The extents are those
a draw lays out (:func:`_lay_out`: the layout engine, text extents, ticks) without rasterizing a
pixel; a moved legend is laid out again only under a layout engine, the one thing that moves
other artists around a legend: without one, the legend's extent at its new place is read
directly.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from .boxes import GRID_INCHES, grid_line

#: A legend must stay this far (points) from what it would cover.
CLEARANCE_POINTS = 2.0
#: Positions inside the axes tried in turn, matplotlib's order of its location codes 1-10.
INSIDE = (
    "upper right",
    "upper left",
    "lower left",
    "lower right",
    "right",
    "center left",
    "center right",
    "lower center",
    "upper center",
    "center",
)
#: Where a legend beside its axes goes, tried in turn when no inside position is clear: to the
#: right of the axes, below them, above them, each clear of the axes' own tick labels, axis labels
#: and title (their tight box, its edges moved outward to the saved box's grid: an anchor read off
#: text extents moves only where the saved box's edges would, see :mod:`forgetting.pipeline.boxes`).
BESIDE = ("right", "below", "above")


def _inside(points: Any, box: Any) -> bool:
    xy = np.asarray(points, dtype=float).reshape(-1, 2)
    return bool(
        np.any((xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1))
    )


def _touches(artist: Any, box: Any, renderer: Any) -> bool:
    """True when ``artist`` meets ``box`` (display coordinates)."""
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Text

    if isinstance(artist, Line2D):
        path = artist.get_transform().transform_path(artist.get_path())
        if artist.get_linestyle() in ("None", "none", "", " "):
            return _inside(path.vertices, box)
        return bool(path.intersects_bbox(box, filled=False))
    if isinstance(artist, PathCollection):
        return _inside(artist.get_offset_transform().transform(artist.get_offsets()), box)
    if isinstance(artist, Patch):
        return bool(artist.get_window_extent().overlaps(box))
    if isinstance(artist, Text):
        return bool(artist.get_window_extent(renderer).overlaps(box))
    transform = artist.get_transform()  # another collection: segments, bands
    return any(
        transform.transform_path(path).intersects_bbox(box, filled=True) for path in artist.get_paths()
    )


def _obstacles(ax: Any) -> Iterator[Any]:
    """What a legend must not cover in ``ax``: its visible lines and texts, and its collections
    and patches placed in data coordinates."""
    from matplotlib.collections import PathCollection

    for artist in (*ax.lines, *ax.texts):
        if artist.get_visible() and (not hasattr(artist, "get_text") or artist.get_text().strip()):
            yield artist
    for artist in (*ax.collections, *ax.patches):
        placed = (
            artist.get_offset_transform() if isinstance(artist, PathCollection) else artist.get_transform()
        )
        if artist.get_visible() and placed.contains_branch(ax.transData):
            yield artist


def _name(artist: Any) -> str:
    label = str(artist.get_text() if hasattr(artist, "get_text") else artist.get_label())
    return repr(label) if label and not label.startswith("_") else f"an unlabelled {type(artist).__name__}"


def _covered(fig: Any, legend: Any, renderer: Any, owner: Any = None) -> list[str]:
    """What ``legend`` covers in ``fig``, as ``"'label' in axes i"``: the obstacles of every axes
    and, for the legend of axes ``owner``, the tick labels, axis labels and title of every other
    axes (``"the labels of axes j"``)."""
    pad = CLEARANCE_POINTS * fig.dpi / 72
    box = legend.get_window_extent(renderer).padded(pad)
    found: list[str] = []
    for i, ax in enumerate(fig.axes):
        for artist in _obstacles(ax):
            if _touches(artist, box, renderer) and (entry := f"{_name(artist)} in axes {i}") not in found:
                found.append(entry)
        if owner is not None and ax is not owner and ax.get_tightbbox(renderer).overlaps(box):
            found.append(f"the labels of axes {i}")
    return found


def _beside(fig: Any, ax: Any, legend: Any, renderer: Any, side: str) -> tuple[str, tuple[float, float]]:
    """``(loc, anchor in axes fractions)`` that puts ``legend`` on ``side`` of ``ax``, clear of the
    axes' own labels and title."""
    legend.set_visible(False)  # the axes' tight box without the legend
    tight = ax.get_tightbbox(renderer)
    legend.set_visible(True)
    pad = CLEARANCE_POINTS * fig.dpi / 72
    grid = GRID_INCHES * fig.dpi
    to_axes = ax.transAxes.inverted()
    if side == "right":
        x = grid_line((tight.x1 + pad) / grid, up=True) * grid
        return "upper left", (float(to_axes.transform((x, 0.0))[0]), 1.0)
    if side == "below":
        y = grid_line((tight.y0 - pad) / grid, up=False) * grid
        return "upper center", (0.5, float(to_axes.transform((0.0, y))[1]))
    y = grid_line((tight.y1 + pad) / grid, up=True) * grid
    return "lower center", (0.5, float(to_axes.transform((0.0, y))[1]))


def _legends(fig: Any) -> list[tuple[str, Any, Any]]:
    """``(owner, axes or None, legend)`` for each visible legend of ``fig``."""
    found = [(f"axes {i}", ax, ax.get_legend()) for i, ax in enumerate(fig.axes)]
    found += [(f"the figure ({i})", None, legend) for i, legend in enumerate(fig.legends)]
    return [entry for entry in found if entry[2] is not None and entry[2].get_visible()]


def _lay_out(fig: Any) -> Any:
    """Lay ``fig`` out as a draw does, without rasterizing (``Figure.draw_without_rendering``),
    and return the renderer the extents are read with."""
    fig.draw_without_rendering()
    return fig.canvas.get_renderer()


def covered_data(fig: Any) -> list[str]:
    """What each legend of ``fig`` covers, e.g. ``"legend of axes 0 covers 'recalled 4x' in axes 0"``
    (``[]``: no legend covers anything). Lays the figure out to place its legends."""
    return _report(fig, _lay_out(fig))


def _report(fig: Any, renderer: Any) -> list[str]:
    """:func:`covered_data` of ``fig`` as last drawn."""
    return [
        f"legend of {owner} covers {what}"
        for owner, ax, legend in _legends(fig)
        for what in _covered(fig, legend, renderer, ax)
    ]


def clear_legends(fig: Any) -> list[str]:
    """Move each axes legend of ``fig`` that covers something where it covers nothing (see the
    module); return :func:`covered_data` afterwards. A figure legend is left where it is."""
    renderer = _lay_out(fig)
    for _, ax, legend in _legends(fig):
        if ax is None or not _covered(fig, legend, renderer, ax):
            continue
        for where in (*INSIDE, *BESIDE):
            if where in BESIDE:
                loc, anchor = _beside(fig, ax, legend, renderer, where)
                legend.set_loc(loc)
                legend.set_bbox_to_anchor(anchor, transform=ax.transAxes)
            else:
                legend.set_loc(where)
                legend.set_bbox_to_anchor(None)  # the axes' own box, as a legend placed inside has it
            if fig.get_layout_engine() is not None:
                _lay_out(fig)  # the engine may move the axes around the legend's new place
            if not _covered(fig, legend, renderer, ax):
                break
    return _report(fig, renderer)  # as laid out after the last move


def legends_off_the_data(fig: Any, label: str, *, refuse: bool) -> None:
    """:func:`clear_legends` on ``fig`` (figure ``label``); a legend that still covers data raises
    ``ValueError`` when ``refuse`` (a run at published parameters) and warns otherwise."""
    if covered := clear_legends(fig):
        message = f"figure {label}: {'; '.join(covered)}"
        if refuse:
            raise ValueError(
                f"{message}; no panel's legend could be moved clear of it, and a figure legend is not moved"
            )
        warnings.warn(message, stacklevel=3)
