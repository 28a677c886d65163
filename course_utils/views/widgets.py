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

The notebooks build widgets only where a view needs a running kernel (08, 09 §5, 10 §4); a view whose
choices are finite is drawn in the browser instead (`views.clientside`).

Messages: a `core.errors.CourseInputError` is a deliberate message, worded by the course for the
learner; any other exception (numpy's "all input arrays must have the same shape", ...) is accidental. Both show
as one line (HTML with normal word wrapping, plus a text/plain form), never a traceback; `render` returns the
message, a `Message` (a str) whose `.deliberate` says which it was.

Testing: the tests drive each notebook's widget over every choice (tests/widget_driver.py, in the test process);
this module keeps no record of the widgets it builds.
"""

from __future__ import annotations

import html
import io
from collections import OrderedDict
from contextlib import contextmanager

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import Image, display
from matplotlib.figure import Figure

from course_utils.core.errors import CourseInputError

CACHE_SIZE = 64  # views kept per widget (a PNG is ~30-80 kB)


class Message(str):
    """The one-line message a widget shows instead of a view; `.deliberate` is True for a CourseInputError (the
    course's own words) and False for any other exception (an accident: words from numpy, torch, ...).

    Used by render, for the widgets of notebooks 08, 09 §5 and 10 §4.
    """

    deliberate: bool

    def __new__(cls, text: str, deliberate: bool):
        message = super().__new__(cls, text)
        message.deliberate = deliberate
        return message


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, as the inline backend shows it, but drawn once where that is enough.

    A figure with a layout engine (course plots use "tight") is laid out while it is drawn, so it is
    saved as it is: one draw. Any other figure is saved with bbox_inches="tight", like the inline
    backend, which costs a second draw.

    Used by render for every figure a widget shows (notebooks 08, 09 §5, 10 §4).
    """
    buf = io.BytesIO()
    tight = None if fig.get_layout_engine() is not None else "tight"
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches=tight, facecolor="white", pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def _view(plot_fn, choices: dict):
    """Call plot_fn(**choices); returns ("ok", displayable) or ("message", one-line text)."""
    try:
        result = plot_fn(**choices)
    except Exception as exc:  # a learner's bad choice must not become a traceback
        text = f"⚠ {exc}" if isinstance(exc, (ValueError, KeyError, IndexError)) else f"⚠ {type(exc).__name__}: {exc}"
        text = " ".join(text.replace('"', "'").split())  # one line
        return "message", Message(text, isinstance(exc, CourseInputError))
    finally:
        figures = [plt.figure(n) for n in plt.get_fignums()]
        plt.close("all")
    if isinstance(result, Figure) or figures:
        return "ok", [Image(data=figure_png(f), format="png") for f in (figures or [result])]
    return "ok", [] if result is None else [result]


def show_message(message: str) -> None:
    """Display a message as HTML that wraps between words only (JupyterLab's stdout style breaks lines anywhere,
    also in the middle of a word), with the same text as text/plain for consoles and tests.

    Used by render for a widget's one-line message (notebooks 08, 09 §5, 10 §4).
    """
    style = "white-space: normal; word-break: normal; overflow-wrap: break-word; margin: 0.4em 0"
    html_text = f'<div class="course-widget-message" style="{style}">{html.escape(message)}</div>'
    display({"text/plain": str(message), "text/html": html_text}, raw=True)


def render(plot_fn, choices: dict, out: widgets.Output, cache: OrderedDict | None = None) -> Message | None:
    """Show plot_fn(**choices) in `out`. Returns the message shown on failure (a `Message`), else None.

    With a `cache` (an OrderedDict), successful views are kept by their choices (least recently used
    dropped beyond CACHE_SIZE) and shown again without calling plot_fn.

    Used by interactive_plot on every change of a control (notebooks 08, 09 §5, 10 §4).
    """
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
            show_message(items)
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


# What a notebook shows for a widget where the widget itself cannot be drawn (a notebook JupyterLab does not trust
# yet, a page without a widget manager): one plain sentence, never the box's Python repr.
NOT_RUNNING = "Interactive view: run this cell to use its controls. Until then, the cell below shows its default view."


class CourseWidget(widgets.VBox):
    """The box interactive_plot returns: a VBox whose plain-text form is NOT_RUNNING instead of its repr.

    Used by interactive_plot (notebooks 08, 09 §5, 10 §4).
    """

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, dict) and "text/plain" in data:
            data["text/plain"] = NOT_RUNNING
        return data


def interactive_plot(plot_fn, controls: dict, *, cache: bool = True) -> widgets.VBox:
    """A compact wrapping row of `controls` (name -> widget) above an Output that re-renders on every change.

    The descriptions get one width, so labels line up when the row wraps; the plot stays right below the controls.
    cache=True keeps each view per choice (see the module docstring); ui.clear_cache() empties it. ui.message is the
    message shown now (or None).

    Used in notebooks 08 (The vectors we compare), 09 §5 and 10 §4.
    """
    out = widgets.Output()
    views = OrderedDict() if cache else None
    state = {"held": False}

    def update(_change=None):
        if not state["held"]:
            ui.message = render(plot_fn, {name: w.value for name, w in controls.items()}, out, views)

    @contextmanager
    def hold():
        """Change several controls, then draw once (no view of a half-changed choice; the tests' drive uses it)."""
        state["held"] = True
        try:
            yield
        finally:
            state["held"] = False
        update()

    ui = CourseWidget([controls_box(list(controls.values())), out])
    # plain attributes, not traits: for tests (tests/widget_driver.py), benchmarks/bench_notebooks.py and learners
    ui.controls, ui.output, ui.message, ui.hold = controls, out, None, hold
    ui.clear_cache = views.clear if views is not None else (lambda: None)
    for w in controls.values():
        w.observe(update, names="value")
    update()
    return ui


def controls_box(controls: list) -> widgets.Box:
    """The controls in one row that wraps onto more rows when narrow (never a tall column), with one description
    width for all, so that labels line up.

    Used by interactive_plot (notebooks 08, 09 §5, 10 §4).
    """
    labelled = [w for w in controls if getattr(w, "description", "") and hasattr(w.style, "description_width")]
    if labelled:
        width = f"{0.6 * max(len(w.description) for w in labelled) + 0.6:.1f}em"
        for w in labelled:
            w.style.description_width = width
    for w in controls:
        if not w.layout.margin:
            w.layout.margin = "2px 14px 2px 0"
    return widgets.Box(controls, layout=widgets.Layout(display="flex", flex_flow="row wrap", align_items="flex-start"))


def _labelled(description: str) -> dict:
    """The keyword arguments every control shares: its label, shown at its full width."""
    return {"description": description, "style": {"description_width": "initial"}}


def dropdown(options, value=None, description: str = "") -> widgets.Dropdown:
    """A drop-down menu of `options`, showing `value` first (default: the first option).

    Used in notebooks 08 (The vectors we compare), 09 §5 and 10 §4.
    """
    options = list(options)
    return widgets.Dropdown(options=options, value=options[0] if value is None else value, **_labelled(description))


def slider(lo: int, hi: int, value: int | None = None, description: str = "") -> widgets.IntSlider:
    """A whole-number slider lo..hi, at `value` (default lo), that redraws when released, not while dragged.

    Used in notebook 08 (The vectors we compare).
    """
    return widgets.IntSlider(
        min=lo, max=hi, value=lo if value is None else value, continuous_update=False, **_labelled(description)
    )  # fmt: skip
