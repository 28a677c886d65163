"""The widget test driver (tests/widget_driver.py): the choices it shows, the pairwise cover, the drive, the record
of built widgets, and the replay of a notebook's widget cell on the statements it needs."""

import itertools

import ipywidgets
import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from widget_driver import (  # tests/ is on sys.path under pytest
    UNKNOWN_WORD,
    built,
    clear_built,
    control_values,
    drive,
    drive_all,
    free_names,
    needed_statements,
    pairwise,
    recording,
    replay_widgets,
    view_choices,
)

import course_utils.views.widgets as views_widgets
from course_utils.core.errors import UnknownWordError
from course_utils.views.widgets import dropdown, slider


def interactive_plot(plot_fn, controls, **kwargs):
    """The library's interactive_plot as it is at call time: the recording one inside recording()."""
    return views_widgets.interactive_plot(plot_fn, controls, **kwargs)


@pytest.fixture(autouse=True)
def fresh_record():
    clear_built()
    yield
    clear_built()
    plt.close("all")


def buttons(options, value=None):
    return ipywidgets.ToggleButtons(options=options, value=options[0] if value is None else value)


def test_recording_records_only_inside_its_block():
    original = views_widgets.interactive_plot
    outside = interactive_plot(lambda n: f"{n}", {"n": dropdown([1, 2])})
    with recording():
        recorder = views_widgets.interactive_plot
        inside = interactive_plot(lambda n: f"{n}", {"n": dropdown([1, 2])})
        with recording():  # nested: the same recorder, each ui recorded once
            assert views_widgets.interactive_plot is recorder
            again = interactive_plot(lambda n: f"{n}", {"n": dropdown([1, 2])})
    assert views_widgets.interactive_plot is original and recorder is not original
    assert built() == [inside, again] and outside not in built() and inside.plot_fn(n=3) == "3"
    clear_built()
    assert built() == []


def test_control_values_cover_each_kind_of_control():
    assert control_values(dropdown(["a", "b", "c"], "b")) == ["b", "a", "c"]  # the current value first
    assert control_values(buttons([1, 2])) == [1, 2]
    assert control_values(slider(0, 3, 1)) == [1, 0, 2, 3]
    assert control_values(ipywidgets.SelectionSlider(options=["1", "√d"], value="√d")) == ["√d", "1"]
    few = ipywidgets.SelectMultiple(options=["q", "k", "v"], value=("q",))
    assert control_values(few)[0] == ("q",) and len(control_values(few)) == 7  # every non-empty subset
    many = ipywidgets.SelectMultiple(options=list("abcdef"), value=("a", "b", "c"))
    assert len(control_values(many)) == 1 + 6 + 15  # the current value, singletons and pairs
    assert control_values(ipywidgets.Text(value="we eat apple")) == ["we eat apple", "", UNKNOWN_WORD]
    assert control_values(ipywidgets.Combobox(value="eat", options=["eat"])) == ["eat", "", UNKNOWN_WORD]
    assert control_values(ipywidgets.FloatSlider(min=0.0, max=1.0, value=0.0)) == [0.0, 0.5, 1.0]
    assert control_values(ipywidgets.Checkbox(value=True)) == [True, False]


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
    ui = interactive_plot(lambda a, b, c: None, {"a": dropdown("xyz"), "b": slider(0, 3), "c": buttons([0, 1])})
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
    with recording():
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

    with recording():
        interactive_plot(plot, {"word": dropdown(["apple", "aple"])})
        interactive_plot(lambda n: f"{n}", {"n": buttons([1, 2, 3])})
    results = drive_all()
    assert [len(r) for r in results] == [2, 3]
    clear_built()
    assert drive_all() == []


def test_free_names_are_the_globals_code_reads_also_inside_functions_and_comprehensions():
    source = "def view(s):\n    return plot(model, s, [w for w in words if w])\nx = len(view)\n"
    assert free_names(source) == {"plot", "model", "words", "view"}  # not s, w (local) nor len (a builtin)


def test_needed_statements_are_the_last_bindings_of_what_the_widget_reads_and_nothing_else():
    cells = [
        "import math\nfrom os import path\nseeds = [1, 2]\nprint('a side effect')",
        "model = seeds[0]\nmodel = model + 1\nunused = math.pi\nfor s in seeds:\n    print(s)",
        "def view(k):\n    return model * k",
        "model = 99  # after the widget cell: not used",
    ]
    assert needed_statements(cells, 3, {"view"}) == [
        "seeds = [1, 2]",
        "model = seeds[0]",
        "model = model + 1",
        "def view(k):\n    return model * k",
    ]
    with pytest.raises(LookupError, match="'nothing'"):
        needed_statements(cells, 3, {"nothing"})


def test_replay_builds_a_notebooks_widget_from_its_own_cells(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "%matplotlib inline\nfrom course_utils.views.widgets import dropdown, interactive_plot"
        ),
        nbformat.v4.new_code_cell("words = ['eat', 'apple']\nraise SystemExit('a cell the widget does not need')"),
        nbformat.v4.new_code_cell("def view(word):\n    return f'view of {word}'"),
        nbformat.v4.new_code_cell("display(interactive_plot(view, {'word': dropdown(words, 'apple')}))"),
    ]
    path = tmp_path / "99_widget.ipynb"
    nbformat.write(nb, path)
    (ui,) = replay_widgets(path)
    assert built() == [ui] and ui.plot_fn.__name__ == "view"
    assert [c for c, _, _ in drive(ui)] == [{"word": "apple"}, {"word": "eat"}]
