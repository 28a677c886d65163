"""interactive_plot (course_utils/views/widgets.py): a thin wrapper that re-renders on change and turns bad choices
into a message."""

import matplotlib

matplotlib.use("Agg")

import itertools

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course_utils.views.widgets as views_widgets
from course_utils.core.errors import ShapeError, UnknownWordError
from course_utils.views.widgets import (
    UNKNOWN_WORD,
    built,
    choice,
    clear_built,
    control_values,
    drive,
    drive_all,
    dropdown,
    figure_png,
    interactive_plot,
    pairwise,
    render,
    slider,
    view_choices,
)


@pytest.fixture(autouse=True)
def fresh_registry():
    clear_built()
    yield
    clear_built()
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


def test_choice_is_a_row_of_buttons_with_the_first_option_by_default():
    w = choice(["1", "√d", "d"], description="divide q·k by")
    assert isinstance(w, ipywidgets.ToggleButtons)
    assert w.options == ("1", "√d", "d") and w.value == "1" and w.description == "divide q·k by"
    assert choice([4, 16, 64], 16).value == 16


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


def test_control_values_cover_each_kind_of_control():
    assert control_values(dropdown(["a", "b", "c"], "b")) == ["b", "a", "c"]  # the current value first
    assert control_values(choice([1, 2])) == [1, 2]
    assert control_values(slider(0, 3, 1)) == [1, 0, 2, 3]
    assert control_values(ipywidgets.SelectionSlider(options=["1", "√d"], value="√d")) == ["√d", "1"]
    few = ipywidgets.SelectMultiple(options=["q", "k", "v"], value=("q",))
    assert control_values(few)[0] == ("q",) and len(control_values(few)) == 7  # every non-empty subset
    many = ipywidgets.SelectMultiple(options=list("abcdef"), value=("a", "b", "c"))
    assert len(control_values(many)) == 1 + 6 + 15  # the current value, singletons and pairs
    assert control_values(ipywidgets.Text(value="we eat apple")) == ["we eat apple", "", UNKNOWN_WORD]
    assert control_values(ipywidgets.Combobox(value="eat", options=["eat"])) == ["eat", "", UNKNOWN_WORD]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=0, max_size=6))
def test_pairwise_rows_cover_every_pair_of_values_of_every_two_controls(sizes):
    values = [[f"{k}:{v}" for v in range(n)] for k, n in enumerate(sizes)]
    rows = pairwise(values)
    if not values:
        assert rows == []
        return
    assert rows[0] == tuple(v[0] for v in values)  # the default view first
    assert all(len(r) == len(values) and all(x in v for x, v in zip(r, values)) for r in rows)
    for i, j in itertools.combinations(range(len(values)), 2):
        seen = {(r[i], r[j]) for r in rows}
        assert seen == set(itertools.product(values[i], values[j])), (i, j)
    largest = sorted(sizes)[-2:]
    assert len(rows) <= max(1, np.prod(largest)) * 2  # not far above the least possible number of rows


def test_view_choices_are_every_combination_when_few_else_pairwise():
    ui = interactive_plot(lambda a, b, c: None, {"a": dropdown("xyz"), "b": slider(0, 3), "c": choice([0, 1])})
    views = view_choices(ui, max_views=24)
    assert len(views) == 24 and views[0] == {"a": "x", "b": 0, "c": 0}
    fewer = view_choices(ui, max_views=10)
    assert 12 <= len(fewer) < 24  # all 12 (a, b) pairs at least


def test_drive_shows_every_choice_records_each_message_and_restores_the_defaults():
    calls = []

    def plot(word, head, kinds):
        calls.append((word, head, kinds))
        if word == "aple":
            raise UnknownWordError(word, ["apple"], "English")
        if head == 1 and "out" in kinds:
            np.stack([np.zeros(32), np.zeros(64)])  # numpy's words: an accident
        fig, ax = plt.subplots()
        ax.set_title(f"{word} {head} {kinds}")
        return fig

    controls = {
        "word": dropdown(["apple", "aple"]),
        "head": slider(0, 1),
        "kinds": ipywidgets.SelectMultiple(options=["q", "out"], value=("q",)),
    }
    ui = interactive_plot(plot, controls)
    assert built() == [ui]
    results = drive(ui)
    assert len(results) == 2 * 2 * 3
    assert {tuple(c.values()) for c, _, _ in results} == set(
        itertools.product(["apple", "aple"], [0, 1], [("q",), ("out",), ("q", "out")])
    )
    assert len(calls) == len(set(calls))  # one draw per view: no half-changed choice was drawn
    for choices, message, deliberate in results:
        if choices["word"] == "aple":
            assert deliberate is True and "'aple'" in message
        elif choices["head"] == 1 and "out" in choices["kinds"]:
            assert deliberate is False and "same shape" in message
        else:
            assert message is None and deliberate is None
    assert {n: w.value for n, w in controls.items()} == {"word": "apple", "head": 0, "kinds": ("q",)}
    assert ui.message is None
    with pytest.raises(AssertionError) as info:
        drive_all()
    text = str(info.value)
    assert (
        text.count("same shape") == 2
        and "'head': 1" in text
        and "'word': 'apple'" in text
        and "aple'" not in text.replace("'apple'", "")
    )
    assert not plt.get_fignums()


def test_drive_all_passes_when_every_message_is_deliberate():
    def plot(word):
        if word == "aple":
            raise UnknownWordError(word, ["apple"], "English")
        return f"view of {word}"

    interactive_plot(plot, {"word": dropdown(["apple", "aple"])})
    interactive_plot(lambda n: f"{n}", {"n": choice([1, 2, 3])})
    results = drive_all()
    assert [len(r) for r in results] == [2, 3]
    clear_built()
    assert drive_all() == []


def test_a_widget_that_cannot_be_drawn_reads_as_a_sentence_not_a_repr():
    """Untrusted JupyterLab (or any page without a widget manager) shows text/plain: a sentence, never 'VBox(...'."""
    from course_utils.views.widgets import NOT_RUNNING

    ui = interactive_plot(lambda word: None, {"word": dropdown(["eat", "apple"])})
    bundle = ui._repr_mimebundle_()
    assert bundle["text/plain"] == NOT_RUNNING and "VBox" not in NOT_RUNNING
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ui.model_id
    assert isinstance(ui, ipywidgets.VBox)
