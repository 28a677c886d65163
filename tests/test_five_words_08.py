"""Notebook 08's figure of the five sentences by word (views.probing.plot_five_words): one panel per shared word,
every coloured point in a panel is that word, so no label sits on a point; equal panels on shared axes."""

import matplotlib.pyplot as plt
import pytest

from course_utils.core.errors import CourseInputError
from course_utils.measures.probing import five_sentences
from course_utils.views.probing import plot_five_words


@pytest.fixture(scope="module")
def traces():
    return five_sentences()


def test_one_panel_per_shared_word_and_side(traces):
    fig = plot_five_words(traces, place=["encoder self", "cross"], layer=0, kinds=("q", "k", "v", "x1"), head=0)
    shown = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    titles = [ax.get_title() for ax in shown]
    assert titles == [
        "'i' (encoder self, layer 0)",
        "'can' (encoder self, layer 0)",
        "'eat' (encoder self, layer 0)",
        "'<bos>' (cross, layer 0)",
        "'ich' (cross, layer 0)",
        "'kann' (cross, layer 0)",
        "'i' (cross k, v, layer 0)",
        "'can' (cross k, v, layer 0)",
        "'eat' (cross k, v, layer 0)",
    ]
    assert all(not ax.texts for ax in shown)  # no label on any point: the panel's title names the word
    sizes = {tuple(round(v, 3) for v in ax.get_position().size) for ax in shown}
    assert len(sizes) == 1  # equal panel sizes
    assert len({ax.get_xlim() for ax in shown}) == 1 and len({ax.get_ylim() for ax in shown}) == 1  # shared axes
    # the encoder's q of a word: five markers on one spot (layer 0: the word and its position only)
    q_points = [c.get_offsets() for c in shown[0].collections[1:6]]
    assert all(len(p) == 1 for p in q_points)
    assert max(abs(p[0] - q_points[0][0]).max() for p in q_points) < 1e-9
    plt.close("all")


def test_other_choices_draw_or_say_why(traces):
    fig = plot_five_words(traces, place="decoder self", layer=1, kinds=("q", "x1", "out", "layer_out"))
    assert [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()] == [
        "'<bos>' (decoder self, layer 1)",
        "'ich' (decoder self, layer 1)",
        "'kann' (decoder self, layer 1)",
    ]
    plt.close("all")
    with pytest.raises(CourseInputError, match="mix the heads"):
        plot_five_words(traces, kinds=("q", "out"), head=1)
    with pytest.raises(CourseInputError, match="at least one"):
        plot_five_words(traces, kinds=())
    plt.close("all")


def test_legend_names_the_kinds_as_the_lesson_does_and_titles_name_the_kinds_drawn(traces):
    fig = plot_five_words(traces, place=["encoder self", "cross"], layer=1, kinds=("q", "v", "out"))
    labels = [h.get_text() for h in fig.legends[0].get_texts()]
    assert labels == ["q", "v", "X4 (out)", "grey: the rest"]
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()]
    assert titles[-3:] == ["'i' (cross v, layer 1)", "'can' (cross v, layer 1)", "'eat' (cross v, layer 1)"]
    plt.close("all")
