"""The course's look, shared by every figure: kind colours, sentence markers, fixed layouts and the one label placer.

    KIND_COLOURS["q"]                          # one Okabe-Ito colour per vector kind (core.places.VECTOR_KINDS)
    fixed_layout(fig, left=0.1, right=0.95)    # margins set once: a widget saves the figure in one draw
    avoid_overlaps(fig, texts, points, ax)     # move labels off each other, off the markers, into the panel

SENTENCE_MARKERS gives each sentence of a figure its marker shape (`views.clustering`, `views.probing`), and
LABEL_OFFSETS the places a label may take around its point. `as_numpy` lets every view take tensors or arrays.
"""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.text import Text

from course_utils.core.places import VECTOR_KINDS

SENTENCE_MARKERS = ("o", "^", "s", "D", "v", "P")


LABEL_FONTSIZE = 9  # points at the saved size: the figure is drawn at its real size (no shrinking in a notebook)
LABEL_OFFSETS = [(5, 4), (5, -13), (-7, 4), (-7, -13), (5, 14), (-7, 14), (5, -23), (-7, -23), (14, -4), (-16, -4)]
LABEL_OFFSETS += [(dx, dy) for dy in (24, -33) for dx in (5, -7)]  # points from the anchor; <0 x: right-aligned


def avoid_overlaps(fig, texts, points=(), ax=None, order=None) -> None:
    """Move each label to the first of a few offsets around its anchor where it overlaps no earlier label, no
    marker (`points`, data coordinates) and stays inside `ax`; failing that, inside `ax` free of labels; failing
    that, the first place free of labels. `order(t)`, when given, returns the offsets to try for label `t`, best
    first (default `LABEL_OFFSETS`); nowhere free, the label keeps the first of them. The one label placer.

    Used by views.clustering.plot_word_projection (notebook 06 §2) and views.probing.plot_five (notebook 08).
    """
    renderer = fig.canvas.get_renderer()
    r = 4.5 * fig.dpi / 72  # a marker's radius in pixels
    dots = (
        ax.transData.transform(np.asarray(points, dtype=float).reshape(-1, 2)) if ax is not None else np.empty((0, 2))
    )
    frame = ax.get_window_extent(renderer) if ax is not None else None
    placed = []

    def _box(t, dx, dy):
        t.set_position((dx, dy))
        t.set_horizontalalignment("left" if dx > 0 else "right")
        return Text.get_window_extent(t, renderer).expanded(1.02, 1.05)  # the text alone, not its leader line

    def _clear(box, level):  # level 2: free of labels and markers, inside; 1: free of labels, inside; 0: labels
        if any(box.overlaps(b) for b in placed):
            return False
        inside = frame is None or (
            frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        )
        hit = (
            (dots[:, 0] > box.x0 - r)
            & (dots[:, 0] < box.x1 + r)
            & (dots[:, 1] > box.y0 - r)
            & (dots[:, 1] < box.y1 + r)
        ).any()
        return level == 0 or (inside and (level == 1 or not hit))

    for t in texts:
        offsets = LABEL_OFFSETS if order is None else order(t)
        spot = next((off for level in (2, 1, 0) for off in offsets if _clear(_box(t, *off), level)), offsets[0])
        placed.append(_box(t, *spot))


# One colour per vector kind in every figure of the course (Okabe-Ito: colour-blind safe, no red/green pair).
KIND_COLOURS = dict(zip(VECTOR_KINDS, ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9")))


def fixed_layout(fig, **margins):
    """fig.subplots_adjust(**margins), and mark the layout as final: a widget then saves the figure as it
    is, in one draw (views.widgets.figure_png), instead of cropping it with a second draw.

    Used by the fixed-size figures of views, e.g. views.vectors.plot_pair (notebook 01) and views.diagrams.
    """
    fig.subplots_adjust(**margins)
    fig.set_layout_engine(PlaceHolderLayoutEngine(adjust_compatible=True, colorbar_gridspec=True))
    return fig


def as_numpy(x) -> np.ndarray:
    """A tensor (detached, on the CPU) or anything array-like as a NumPy array.

    Used by views.heatmaps for every heatmap (notebooks 01-05, 09, 10).
    """
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def describe(fig, sentence: str):
    """Give `fig` its alt text: one sentence saying what it shows (what is plotted, the axes, which sentence,
    layer or head). The inline backend's figure output then carries it as `{"alt": sentence}` in its metadata,
    which the course website puts on the <img> (docs/site/_ext/course_site.py). Returns the figure.

    Used in notebooks 01-10 (their hand-drawn figures; the figure functions of views fall back to their titles).
    """
    fig._course_alt = " ".join(str(sentence).split())
    return fig


def alt_text(fig) -> str:
    """The figure's alt text: its `describe` sentence, else its suptitle, else its axes' titles; "" if none.

    Used in notebooks 01-10 (every figure output's alt text, through install_alt_hook).
    """
    said = getattr(fig, "_course_alt", "")
    if said:
        return said
    title = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    text = title or "; ".join(titles)
    return f"A figure: {' '.join(text.split())}." if text else ""


def with_alt(format_png):
    """A figure formatter that returns the PNG with {"alt": alt_text(fig)} as its metadata.

    Used in notebooks 01-10 (through install_alt_hook).
    """
    if getattr(format_png, "_course_alt", False):
        return format_png

    def formatter(fig):
        data = format_png(fig)
        alt = alt_text(fig)
        return (data, {"alt": alt}) if alt and data is not None else data

    formatter._course_alt = True
    return formatter


def install_alt_hook() -> None:
    """In IPython, wrap the PNG formatter of matplotlib figures so that each figure output carries its alt text
    in its metadata; re-wrapped before each cell (`%config InlineBackend.figure_format` replaces it). Does nothing
    outside IPython. Called once when course_utils.views is imported.

    Used in notebooks 01-10 (installed when they import course_utils.views).
    """
    try:
        from IPython import get_ipython  # noqa: PLC0415
    except ImportError:
        return
    ip = get_ipython()
    if ip is None or getattr(ip, "_course_alt_hook", False):
        return
    from matplotlib.figure import Figure  # noqa: PLC0415

    def ensure(*_):
        png = ip.display_formatter.formatters["image/png"]
        current = png.lookup_by_type(Figure) if Figure in png.type_printers else None
        if current is not None:
            png.for_type(Figure, with_alt(current))

    ensure()
    ip.events.register("pre_run_cell", ensure)
    ip._course_alt_hook = True
