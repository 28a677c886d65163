"""Thin ipywidgets wrappers: a widget only collects choices and calls a plain function.

    ui = interactive_plot(plot_fn, {"word": Dropdown(...), "head": IntSlider(...)})
    display(ui)

`plot_fn(**choices)` may draw a matplotlib figure, return a Figure, a pandas object or a string.
A bad choice (unknown word, head out of range, ...) shows a one-line message in the widget's
output, never a traceback.
"""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display
from matplotlib.figure import Figure


def render(plot_fn, choices: dict, out: widgets.Output) -> str | None:
    """Call plot_fn(**choices) into `out`. Returns the message shown on failure, else None."""
    with out:
        out.clear_output(wait=True)
        try:
            result = plot_fn(**choices)
        except Exception as exc:  # a learner's bad choice must not become a traceback
            plt.close("all")
            message = f"⚠ {exc}" if isinstance(exc, (ValueError, KeyError, IndexError)) else f"⚠ {type(exc).__name__}: {exc}"
            print(message.replace("\"", "'"))
            return message
        if isinstance(result, Figure) or plt.get_fignums():
            plt.show()
        elif result is not None:
            display(result)
    return None


def interactive_plot(plot_fn, controls: dict, *, layout: str = "row") -> widgets.VBox:
    """A box of `controls` (name -> widget) above an Output that re-renders on every change."""
    out = widgets.Output()

    def update(_change=None):
        render(plot_fn, {name: w.value for name, w in controls.items()}, out)

    for w in controls.values():
        w.observe(update, names="value")
    update()
    box = widgets.HBox if layout == "row" else widgets.VBox
    return widgets.VBox([box(list(controls.values())), out])


def dropdown(options, value=None, description: str = "") -> widgets.Dropdown:
    options = list(options)
    return widgets.Dropdown(options=options, value=options[0] if value is None else value, description=description,
                            style={"description_width": "initial"})


def slider(lo: int, hi: int, value: int | None = None, description: str = "") -> widgets.IntSlider:
    return widgets.IntSlider(min=lo, max=hi, value=lo if value is None else value, description=description,
                             continuous_update=False, style={"description_width": "initial"})
