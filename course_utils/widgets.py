"""Thin ipywidgets wrappers: a widget only collects choices and calls a plain function.

    ui = interactive_plot(plot_fn, {"word": Dropdown(...), "head": IntSlider(...)})
    display(ui)

`plot_fn(**choices)` may draw a matplotlib figure, return a Figure, a pandas object or a string.
A bad choice (unknown word, head out of range, ...) shows a one-line message in the widget's
output, never a traceback.

Speed: a figure with a layout engine is drawn once into a PNG (the inline backend's
bbox_inches="tight" draws every figure twice), and every view is kept per choice, so going back
to a view shows it at once. The plot functions must therefore depend only on their arguments: after
changing the data a widget shows, re-run the widget's cell (or call `ui.clear_cache()`).
"""

from __future__ import annotations

import io
from collections import OrderedDict

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import Image, display
from matplotlib.figure import Figure

CACHE_SIZE = 64  # views kept per widget (a PNG is ~30-80 kB)


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, as the inline backend shows it, but drawn once where that is enough.

    A figure with a layout engine (course plots use "tight") is laid out while it is drawn, so it is
    saved as it is: one draw. Any other figure is saved with bbox_inches="tight", like the inline
    backend, which costs a second draw."""
    buf = io.BytesIO()
    tight = None if fig.get_layout_engine() is not None else "tight"
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches=tight, facecolor="white", pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def _view(plot_fn, choices: dict):
    """Call plot_fn(**choices); returns ("ok", displayable) or ("message", one-line text)."""
    try:
        result = plot_fn(**choices)
    except Exception as exc:  # a learner's bad choice must not become a traceback
        message = (
            f"⚠ {exc}" if isinstance(exc, (ValueError, KeyError, IndexError)) else f"⚠ {type(exc).__name__}: {exc}"
        )
        return "message", message.replace('"', "'")
    finally:
        figures = [plt.figure(n) for n in plt.get_fignums()]
        plt.close("all")
    if isinstance(result, Figure) or figures:
        return "ok", [Image(data=figure_png(f), format="png") for f in (figures or [result])]
    return "ok", [] if result is None else [result]


def render(plot_fn, choices: dict, out: widgets.Output, cache: OrderedDict | None = None) -> str | None:
    """Show plot_fn(**choices) in `out`. Returns the message shown on failure, else None.

    With a `cache` (an OrderedDict), successful views are kept by their choices (least recently used
    dropped beyond CACHE_SIZE) and shown again without calling plot_fn."""
    key = _key(choices) if cache is not None else None
    with out:  # anything plot_fn prints lands in the widget's output too
        out.clear_output(wait=True)
        if key is not None and key in cache:
            cache.move_to_end(key)
            kind, items = "ok", cache[key]
        else:
            kind, items = _view(plot_fn, choices)
            if kind == "ok" and key is not None:
                cache[key] = items
                while len(cache) > CACHE_SIZE:
                    cache.popitem(last=False)
        if kind == "message":
            print(items)
            return items
        for item in items:
            display(item)
    return None


def _key(choices: dict):
    try:
        key = tuple(sorted(choices.items()))
        hash(key)
        return key
    except TypeError:  # unhashable choice: not cached
        return None


def interactive_plot(plot_fn, controls: dict, *, layout: str = "row", cache: bool = True) -> widgets.VBox:
    """A box of `controls` (name -> widget) above an Output that re-renders on every change.

    cache=True keeps each view per choice (see the module docstring); ui.clear_cache() empties it."""
    out = widgets.Output()
    views = OrderedDict() if cache else None

    def update(_change=None):
        render(plot_fn, {name: w.value for name, w in controls.items()}, out, views)

    for w in controls.values():
        w.observe(update, names="value")
    update()
    box = widgets.HBox if layout == "row" else widgets.VBox
    ui = widgets.VBox([box(list(controls.values())), out])
    # plain attributes, not traits: for tests, benchmarks/bench_notebooks.py and learners
    ui.controls, ui.output = controls, out
    ui.clear_cache = views.clear if views is not None else (lambda: None)
    return ui


def dropdown(options, value=None, description: str = "") -> widgets.Dropdown:
    options = list(options)
    return widgets.Dropdown(
        options=options,
        value=options[0] if value is None else value,
        description=description,
        style={"description_width": "initial"},
    )


def slider(lo: int, hi: int, value: int | None = None, description: str = "") -> widgets.IntSlider:
    return widgets.IntSlider(
        min=lo,
        max=hi,
        value=lo if value is None else value,
        description=description,
        continuous_update=False,
        style={"description_width": "initial"},
    )
