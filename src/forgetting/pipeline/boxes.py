"""Where a figure's measured edges go, and how finely its coordinates are written: both well above
float noise, so that a saved figure is the same file on every CPU.

**Coordinates.** matplotlib writes an SVG coordinate and a PDF path with six decimals of a point,
but a PDF marker position, text position or other number with ten (``pdfRepr``). Ten decimals of
a coordinate of a few hundred points reach its twelfth or thirteenth significant digit, where
another CPU's BLAS kernel or SIMD loop leaves its last digits: an OpenBLAS Haswell kernel moved a
marker of ``beyond-credit-separation.pdf`` from 45.5503099771 to 45.5503099772 points while its
SVG and PNG, and every published table, stayed the same. :func:`vector_precision` writes every
PDF number at :data:`VECTOR_DECIMALS`, as the SVG files are written.

**Edges.** Each edge goes outward to a grid of a hundredth of an inch, decided on the edge rounded
well above float noise.

matplotlib measures a figure's tight box to the last bit: on a log axis a tick label's extent
comes from a ``log10``, and a layout engine places axes from text extents, so another CPU's
last-ulp difference in a measurement shifts every coordinate of a file saved with the box as
measured. Snapping each edge outward to :data:`GRID_INCHES` confines that to edges that lie
within such a difference of a grid line, and those are common, not rare: an axes edge at a
round fraction of a round figure width (0.9 x 7.2 in, plus a 0.02 in pad, is 6.50 in) lands
on a grid line up to the last bit, on one side of it or the other depending on the last bits of
the layout's arithmetic. (When this rule was introduced, 10 of the book's 41 figures had an edge
just past a grid line, and the 4-ulp perturbation of ``tests/test_other_cpu.py`` moved the
convergence figure of mw-theory across one once a change drew a figure less.) So an edge is first
rounded to :data:`SETTLE_DECIMALS` decimals of a grid step, far coarser than float noise and far
finer than anything a reader sees, and snapped after that.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: The grid a saved figure's box and a legend placed beside its axes are snapped to.
GRID_INCHES = 0.01
#: Decimals of a grid step an edge is rounded to before it is snapped (1e-8 in).
SETTLE_DECIMALS = 6
#: Decimals of a point (1/72 in) with which a saved PDF writes a number, as matplotlib writes an
#: SVG coordinate and a PDF path: a millionth of a point, far below anything a reader sees.
VECTOR_DECIMALS = 6


def grid_line(steps: float, up: bool) -> int:
    """The grid line at or beyond ``steps`` (an edge in grid steps), upward or downward:
    ``ceil`` (``up``) or ``floor`` of ``round(steps, SETTLE_DECIMALS)``.

    >>> grid_line(649.9999999999999, up=True), grid_line(650.0000000000001, up=True)
    (650, 650)
    >>> grid_line(44.72, up=False), grid_line(44.72, up=True)
    (44, 45)
    """
    if not math.isfinite(steps):
        raise ValueError(f"steps must be a finite number of grid steps; got {steps!r}")
    settled = round(steps, SETTLE_DECIMALS)
    return math.ceil(settled) if up else math.floor(settled)


def saved_box(fig: Any) -> Any:
    """The box ``fig`` is saved with: its tight box, padded by ``savefig.pad_inches``, each edge
    moved outward to a grid line (:func:`grid_line`), in inches."""
    import matplotlib as mpl
    from matplotlib.transforms import Bbox

    tight = fig.get_tightbbox().padded(mpl.rcParams["savefig.pad_inches"])
    per_inch = round(1 / GRID_INCHES)
    low = [grid_line(edge * per_inch, up=False) / per_inch for edge in (tight.x0, tight.y0)]
    high = [grid_line(edge * per_inch, up=True) / per_inch for edge in (tight.x1, tight.y1)]
    return Bbox([low, high])


@contextmanager
def vector_precision() -> Iterator[None]:
    """Within this block, matplotlib's PDF writer writes every float at :data:`VECTOR_DECIMALS`
    decimals (``round`` first, then its own ``%.10f`` with the trailing zeros stripped) instead of
    ten. Integers, names and strings are written as before. The writer is restored on exit, also
    after an error.

    >>> from matplotlib.backends import backend_pdf
    >>> with vector_precision():
    ...     backend_pdf.pdfRepr(45.5503099771), backend_pdf.pdfRepr(45.5503099772)
    (b'45.55031', b'45.55031')
    >>> backend_pdf.pdfRepr(45.5503099771)
    b'45.5503099771'
    """
    import numpy as np
    from matplotlib.backends import backend_pdf

    written: Callable[[Any], bytes] = backend_pdf.pdfRepr

    def at_precision(obj: Any) -> Any:
        if isinstance(obj, (float, np.floating)) and math.isfinite(obj):
            return written(round(float(obj), VECTOR_DECIMALS))
        return written(obj)

    backend_pdf.pdfRepr = at_precision
    try:
        yield
    finally:
        backend_pdf.pdfRepr = written
