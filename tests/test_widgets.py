"""widgets.interactive_plot: a thin wrapper that re-renders on change and turns bad choices into a message."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from course_utils.errors import UnknownWordError  # noqa: E402
from course_utils.widgets import dropdown, interactive_plot, render, slider  # noqa: E402


def test_interactive_plot_calls_the_function_with_every_change():
    calls = []

    def plot(word, head):
        calls.append((word, head))
        fig, ax = plt.subplots()
        ax.set_title(f"{word} {head}")
        return fig

    controls = {"word": dropdown(["eat", "apple"]), "head": slider(0, 1)}
    ui = interactive_plot(plot, controls)
    assert isinstance(ui, ipywidgets.VBox) and isinstance(ui.children[1], ipywidgets.Output)
    assert calls == [("eat", 0)]  # drawn once at creation
    controls["head"].value = 1
    controls["word"].value = "apple"
    assert calls == [("eat", 0), ("eat", 1), ("apple", 1)]
    plt.close("all")


def test_bad_choice_gives_a_message_not_an_exception():
    def plot(word):
        raise UnknownWordError(word, ["apple", "bread"], "English")

    out = ipywidgets.Output()
    message = render(plot, {"word": "aple"}, out)
    assert message.startswith("⚠") and "'aple'" in message and "apple" in message
    assert not plt.get_fignums()  # a half-drawn figure is closed, not shown later


def test_unexpected_errors_are_named_too():
    def plot():
        raise RuntimeError("boom")

    message = render(plot, {}, ipywidgets.Output())
    assert message == "⚠ RuntimeError: boom"


def test_a_good_choice_returns_no_message():
    def plot():
        fig, _ = plt.subplots()
        return fig

    assert render(plot, {}, ipywidgets.Output()) is None
    plt.close("all")
