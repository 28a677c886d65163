"""widgets.interactive_plot: a thin wrapper that re-renders on change and turns bad choices into a message."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from course_utils.errors import UnknownWordError  # noqa: E402
from course_utils.widgets import dropdown, figure_png, interactive_plot, render, slider  # noqa: E402


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


def test_views_are_kept_per_choice_and_errors_are_not():
    calls = []

    def plot(word):
        calls.append(word)
        if word == "aple":
            raise ValueError("unknown word 'aple'")
        fig, ax = plt.subplots()
        ax.set_title(word)
        return fig

    control = dropdown(["eat", "apple", "aple"])
    ui = interactive_plot(plot, {"word": control})
    for word in ["apple", "eat", "apple", "aple", "eat", "aple"]:
        control.value = word
    assert calls == ["eat", "apple", "aple", "aple"]  # eat and apple drawn once; the bad choice every time
    ui.clear_cache()
    control.value = "apple"
    assert calls[-1] == "apple" and len(calls) == 5
    assert not plt.get_fignums()  # every figure is closed once it is a PNG


def test_cache_can_be_switched_off():
    calls = []

    def plot(word):
        calls.append(word)
        return f"view of {word}"

    control = dropdown(["eat", "apple"])
    interactive_plot(plot, {"word": control}, cache=False)
    control.value, control.value = "apple", "eat"
    assert calls == ["eat", "apple", "eat"]


def test_figure_png_draws_once_with_a_layout_engine_else_crops_like_inline():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_yticks([0.5], labels=["a very long word label"])
    fig.set_layout_engine("tight")
    png = figure_png(fig)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == round(3 * fig.dpi)  # the figure's own size: no crop
    assert fig.subplotpars.left > 0.35  # the engine made room for the long tick label (default 0.125)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_yticks([0.5], labels=["a very long word label"])  # sticks out of the figure on the left
    png = figure_png(fig)
    assert int.from_bytes(png[16:20], "big") != round(3 * fig.dpi)  # bbox_inches="tight" kept the label
    plt.close(fig)
