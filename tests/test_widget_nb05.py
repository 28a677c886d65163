"""Notebook 05's attention widget: every pair of choices (sentence, seed, place, layer, head) draws a figure, never a
message; a choice outside the model is worded by the course (plotting.plot_attention), not by torch.

The widget cell is taken from the committed notebook and run here; the pairs are covered greedily (all 540
combinations would take minutes on 2 cores, and each control acts on its own: a pair of choices is what can clash).
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402

from course_utils.plotting import plot_attention  # noqa: E402
from course_utils.tracing import PLACES, run_with_trace  # noqa: E402
from course_utils.training import SEEDS, load_seeds  # noqa: E402
from course_utils.widgets import dropdown, interactive_plot, render  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "05_training_the_translator.ipynb"


@pytest.fixture(scope="module")
def widget():
    cells = [c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    (source,) = [s for s in cells if "def attention_view" in s and "interactive_plot(" in s]
    seeds = load_seeds("learned")
    namespace = {
        "functools": functools,
        "run_with_trace": run_with_trace,
        "plot_attention": plot_attention,
        "seeds": seeds,
        "SEEDS": SEEDS,
        "PLACES": PLACES,
        "dropdown": dropdown,
        "interactive_plot": interactive_plot,
        "model": seeds[0].model,
    }
    exec(compile(source, "notebook 05: the attention widget", "exec"), namespace)
    plt.close("all")
    return namespace["attention_view"], namespace["controls"]


def all_pairs(options: dict[str, list]) -> list[dict]:
    """Combinations that together hold every pair of choices of every two controls (greedy, deterministic)."""
    names = list(options)
    todo = {((a, x), (b, y)) for a, b in itertools.combinations(names, 2) for x in options[a] for y in options[b]}
    chosen = []
    while todo:
        best = max(
            itertools.product(*options.values()),
            key=lambda combo: sum(
                ((a, combo[i]), (b, combo[j])) in todo for (i, a), (j, b) in itertools.combinations(enumerate(names), 2)
            ),
        )
        combo = dict(zip(names, best))
        todo -= {((a, combo[a]), (b, combo[b])) for a, b in itertools.combinations(names, 2)}
        chosen.append(combo)
    return chosen


def test_the_widget_offers_sentence_place_layer_and_head(widget):
    _, controls = widget
    assert {"sentence", "place", "layer", "head"} <= set(controls)
    assert list(controls["place"].options) == list(PLACES)
    assert {c.value for c in controls.values()} >= {"cross", 1, "all"}  # the default: cross-attention, layer 1


def test_every_pair_of_choices_draws_a_figure(widget):
    view, controls = widget
    options = {name: list(c.options) for name, c in controls.items()}
    combos = all_pairs(options)
    assert len(combos) < 60
    for choices in combos:
        message = render(view, choices, ipywidgets.Output())
        assert message is None, f"{choices}: {message}"
    plt.close("all")


def test_a_choice_outside_the_model_is_worded_by_the_course(widget):
    view, controls = widget
    default = {name: c.value for name, c in controls.items()}
    message = render(view, {**default, "layer": 2}, ipywidgets.Output())
    assert message == "⚠ layer 2 out of range: the decoder has layers 0..1"
    message = render(view, {**default, "head": 2}, ipywidgets.Output())
    assert message.startswith("⚠ head 2 out of range")
