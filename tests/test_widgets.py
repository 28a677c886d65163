"""interactive_plot (course_utils/views/widgets.py): a thin wrapper that re-renders on change and turns bad choices
into a message."""

import matplotlib

matplotlib.use("Agg")

import gc
import weakref

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

import course_utils.views.widgets as views_widgets
from course_utils.core.errors import ShapeError, UnknownWordError
from course_utils.views.widgets import dropdown, figure_png, interactive_plot, render, slider


@pytest.fixture(autouse=True)
def no_figure_left():
    yield
    plt.close("all")


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


def test_controls_sit_in_one_wrapping_row_above_the_plot_with_one_label_width():
    controls = {"word": dropdown(["eat"], description="word"), "kinds (ctrl-click)": slider(0, 1, description="kinds")}
    controls["kinds (ctrl-click)"].description = "kinds (ctrl-click)"
    ui = interactive_plot(lambda word, **_: None, controls)
    box, out = ui.children
    assert out is ui.output and box.children == tuple(controls.values())  # controls first, then the plot
    assert box.layout.display == "flex" and box.layout.flex_flow == "row wrap"  # wraps; never a tall column
    widths = {w.style.description_width for w in controls.values()}
    assert len(widths) == 1 and widths.pop().endswith("em")


def test_a_message_is_html_that_wraps_between_words_with_a_plain_text_form(monkeypatch):
    shown = []
    monkeypatch.setattr(views_widgets, "display", lambda obj, raw=False: shown.append((obj, raw)))

    def plot(word):
        raise UnknownWordError(word, ["apple", "bread"], "English")

    message = render(plot, {"word": "a<ple"}, ipywidgets.Output())
    ((data, raw),) = shown
    assert raw and data["text/plain"] == message
    assert "word-break: normal" in data["text/html"] and "white-space: normal" in data["text/html"]
    assert "a&lt;ple" in data["text/html"] and "<ple" not in data["text/html"]  # escaped, shown as typed
    assert "\n" not in message


def test_course_errors_are_deliberate_and_any_other_error_is_accidental():
    def numpy_says(**_):
        np.stack([np.zeros(2), np.zeros(3)])

    def course_says(**_):
        raise ShapeError("Set head to 'all', or keep only q, k, v, x1")

    deliberate = render(course_says, {}, ipywidgets.Output())
    accidental = render(numpy_says, {}, ipywidgets.Output())
    assert isinstance(deliberate, str) and deliberate.deliberate is True
    assert accidental.deliberate is False and "same shape" in accidental and accidental.startswith("⚠ ")
    assert render(lambda: (_ for _ in ()).throw(KeyError("x")), {}, ipywidgets.Output()).deliberate is False


def test_a_widget_that_cannot_be_drawn_reads_as_a_sentence_not_a_repr():
    """Untrusted JupyterLab (or any page without a widget manager) shows text/plain: a sentence, never 'VBox(...'."""
    from course_utils.views.widgets import NOT_RUNNING

    ui = interactive_plot(lambda word: None, {"word": dropdown(["eat", "apple"])})
    bundle = ui._repr_mimebundle_()
    assert bundle["text/plain"] == NOT_RUNNING and "VBox" not in NOT_RUNNING
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ui.model_id
    assert isinstance(ui, ipywidgets.VBox)


def test_the_library_keeps_no_widget_alive():
    """No module-level record of the widgets built (the tests' driver records them, tests/widget_driver.py): a ui
    closed and dropped by the learner's code is freed."""
    assert not [
        name for name, v in vars(views_widgets).items() if isinstance(v, (list, dict, set)) and name != "__builtins__"
    ]
    ui = interactive_plot(lambda word: f"view of {word}", {"word": dropdown(["eat", "apple"])})
    ref = weakref.ref(ui)
    for w in (*ui.controls.values(), ui.output, ui.children[0], ui):
        w.close()  # ipywidgets keeps each open widget in its own registry until it is closed
    del ui, w
    gc.collect()
    assert ref() is None
