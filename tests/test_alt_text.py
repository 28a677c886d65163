"""Alt text on every figure: `views.style.describe` (a sentence), its fallback (the suptitle or the axes' titles),
the IPython hook that puts it into a figure output's metadata, and the committed notebooks' figure outputs.

test_every_committed_figure_has_alt passes once the notebooks are re-executed with the hook in place
(`make execute`): outputs saved before it carry no alt.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from course_utils.views.style import alt_text, describe, with_alt

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_describe_sets_the_sentence():
    fig, ax = plt.subplots()
    assert alt_text(fig) == ""
    ax.set_title("Loss per epoch")
    assert alt_text(fig) == "A figure: Loss per epoch."
    fig.suptitle("Training")
    assert alt_text(fig) == "A figure: Training."
    assert describe(fig, "The loss  falls\nfrom 2.3 to 0.1.") is fig
    assert alt_text(fig) == "The loss falls from 2.3 to 0.1."
    plt.close(fig)


def test_formatter_returns_the_alt_as_metadata():
    fig, _ = plt.subplots()
    describe(fig, "An empty panel.")
    formatter = with_alt(lambda f: b"png")
    assert formatter(fig) == (b"png", {"alt": "An empty panel."})
    assert with_alt(formatter) is formatter, "wrapped once"
    plt.close(fig)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_every_committed_figure_has_alt(notebook):
    missing = []
    for i, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                meta = output.get("metadata", {})
                alt = (meta.get("image/png") or {}).get("alt") or meta.get("alt")
                if not (alt and alt.strip()):
                    missing.append(i)
    assert not missing, f"figure outputs with no alt in cells {missing} (re-execute: make execute NB={notebook})"


# ---- every figure function of views describes its figure: a sentence built from its arguments ----

SENTENCE = "we want to eat apple"


@pytest.fixture(scope="module")
def shipped():
    """The shipped learned-PE course model (TrainResult), its trace of SENTENCE, loaded once for this file."""
    from course_utils.trace.tracing import run_with_trace  # noqa: PLC0415
    from course_utils.training.zoo import load_standard_model  # noqa: PLC0415

    course = load_standard_model()
    return course, run_with_trace(course.model, SENTENCE)


def _five_traces(course):
    from course_utils.core.data import load_probes  # noqa: PLC0415

    return [course.snapshots[30][s] for s in load_probes("five_sentences")]


def _cos_min():
    import pandas as pd  # noqa: PLC0415

    keys = [f"encoder.{layer}.self.{k}" for layer in (0, 1) for k in "qkv"]
    return pd.DataFrame({"learned": [0.975, 0.983, 0.966, 0.989, 0.988, 0.985], "none": [1.0] * 6}, index=keys)


def _spectra():
    import numpy as np  # noqa: PLC0415

    s0 = np.linspace(2.0, 0.05, 8)
    return {"$W^Q$ trained": 1.5 * s0, "$W^Q$ init": s0, "$W^K$ trained": 0.5 * s0, "$W^K$ init": s0}


def _two_heatmaps_on_my_axes(_):
    from course_utils.views import heatmap  # noqa: PLC0415

    fig, axes = plt.subplots(1, 2)
    heatmap([[0.5, 0.5], [0.1, 0.9]], ["we", "eat"], ["we", "eat"], ax=axes[0], title="before softmax", cbar=False)
    heatmap([[0.5, 0.5], [0.2, 0.8]], ["we", "eat"], ["we", "eat"], ax=axes[1], title="after softmax", cbar=False)
    return fig


def _two_word_orders_on_my_axes(shipped):
    from course_utils.measures.probing import word_order_traces  # noqa: PLC0415
    from course_utils.views import plot_word_order  # noqa: PLC0415

    fig, axes = plt.subplots(1, 2)
    pair = word_order_traces(shipped[0].model)
    for ax, label in zip(axes, ("learned", "other")):
        plot_word_order(pair, 0, "q", "encoder self", label=label, ax=ax, cbar=False)
    return fig


def _case(name, call, *mentions):
    return pytest.param(call, mentions, id=name)


def _views():
    import course_utils.views as v  # noqa: PLC0415

    return v


# (figure function, call(shipped) -> Figure, words the sentence must mention: from the arguments)
FIGURE_CASES = [
    _case(
        "plot_context_distance",
        lambda m: _views().plot_context_distance(
            __import__("course_utils.measures.clustering", fromlist=["x"]).context_distance_table(m[0].snapshots),
            word="eat",
        ),
        "'eat'",
        "we want to eat bread",
        "encoder.0.self",
    ),
    _case(
        "plot_word_projection",
        lambda m: _views().plot_word_projection(m[0].snapshots, "apple", kinds=("q", "k"), epochs=(1, 30), layer=1),
        "'apple'",
        "layer 1",
        "1, 30",
    ),
    _case("draw_attention_path", lambda m: _views().draw_attention_path("to", ("we", "want", "to")), "'to'", "we want"),
    _case("draw_attention_places", lambda m: _views().draw_attention_places(), "cross-attention", "2 layers"),
    _case("draw_multi_head", lambda m: _views().draw_multi_head(4, 16, 4), "4 heads", "(4, 4)", "(4, 16)"),
    _case("draw_layer", lambda m: _views().draw_layer("decoder"), "decoder layer", "cross-attention"),
    _case(
        "heatmap",
        lambda m: _views().heatmap([[1.0, 0.0], [0.3, 0.7]], ["we", "eat"], ["apple", "bread"], title="my scores"),
        "'my scores'",
        "we, eat",
        "apple, bread",
    ),
    _case("heatmap on two axes", _two_heatmaps_on_my_axes, "'before softmax'", "'after softmax'"),
    _case(
        "show_heatmaps",
        lambda m: _views().show_heatmaps([[[1.0, 0.0]], [[0.4, 0.6]]], ["we"], ["eat", "apple"], ["left", "right"]),
        "2 heatmaps",
        "left; right",
        "eat, apple",
    ),
    _case("plot_model_view", lambda m: _views().plot_model_view(m[1]), SENTENCE, "layer (0 to 1)"),
    _case(
        "plot_attention",
        lambda m: _views().plot_attention(m[1], "cross", 1),
        "decoder layer 1 cross-attention",
        "head 0 and head 1 side by side",
        "we, want, to, eat, apple",
    ),
    _case("plot_attention one head", lambda m: _views().plot_attention(m[1], "encoder self", 0, 1), "head 1"),
    _case(
        "plot_word_order",
        lambda m: _views().plot_word_order(
            __import__("course_utils.measures.probing", fromlist=["x"]).word_order_traces(m[0].model), 1, "k"
        ),
        "k vectors",
        "layer 1",
        "we can eat apple",
        "apple eat can we",
    ),
    _case("plot_word_order on two axes", _two_word_orders_on_my_axes, "learned PE", "other PE"),
    _case("plot_same_word_distance", lambda m: _views().plot_same_word_distance(_cos_min()), "0, 1", "learned PE"),
    _case(
        "plot_five",
        lambda m: _views().plot_five(_five_traces(m[0]), layer=1, kinds=("q", "k"), label="seed 0"),
        "seed 0",
        "layer 1",
        "q, k",
    ),
    _case(
        "plot_five_words",
        lambda m: _views().plot_five_words(_five_traces(m[0]), place="encoder self", kinds=("q", "k"), head=0),
        "'eat'",
        "head 0",
        "layer 0",
    ),
    _case("plot_word_qkv", lambda m: _views().plot_word_qkv(m[0].model, SENTENCE, "want", 1), "'want'", "layer 1"),
    _case(
        "plot_word_qkv_grid",
        lambda m: _views().plot_word_qkv_grid(m[0].model, [(SENTENCE, "eat"), ("i eat bread", "eat")], layers=(1,)),
        SENTENCE,
        "i eat bread",
        "(1)",
    ),
    _case(
        "plot_singular_values",
        lambda m: _views().plot_singular_values(_spectra(), title="Two matrices"),
        "Two matrices",
        "W^Q, W^K",
    ),
    _case(
        "plot_scaling", lambda m: _views().plot_scaling(16, "1", n_rows=3, n_keys=4), "d = 16", "3 random", "4 random"
    ),
    _case("plot_loss", lambda m: _views().plot_loss(m[0].history[:5], title="Five epochs"), "'Five epochs'", "1 to 5"),
    _case(
        "plot_sentence_vectors",
        lambda m: _views().plot_sentence_vectors({"eat apple": (0.9, 0.1), "read book": (0.1, 0.9)}),
        "eat apple, read book",
    ),
    _case("plot_pair", lambda m: _views().plot_pair("drink beer", "read book"), "'drink beer'", "'read book'"),
    _case("plot_vectors_3d", lambda m: _views().plot_vectors_3d(title="Nine in 3-D"), "Nine in 3-D", "read letter"),
]

# public functions of these view modules that draw no figure of their own
NOT_FIGURES = {"check_projection_choices", "colour_ticks", "decoder_row_labels", "topic_palette"}
DESCRIBED_MODULES = ("clustering", "diagrams", "heatmaps", "probing", "qkv", "scaling", "training", "vectors")


def test_every_figure_function_has_an_alt_text_case():
    import importlib  # noqa: PLC0415
    import inspect  # noqa: PLC0415

    cased = {p.id.split(" ")[0] for p in FIGURE_CASES}
    public = {
        name
        for module in DESCRIBED_MODULES
        for name, f in inspect.getmembers(importlib.import_module(f"course_utils.views.{module}"), inspect.isfunction)
        if f.__module__ == f"course_utils.views.{module}" and not name.startswith("_")
    }
    assert public - NOT_FIGURES - cased == set(), "a figure function of views with no alt-text case"


@pytest.mark.parametrize(("call", "mentions"), FIGURE_CASES)
def test_figure_function_describes_its_figure(shipped, call, mentions):
    fig = call(shipped)
    try:
        alt = alt_text(fig)
        assert alt and not alt.startswith("A figure:"), f"no describe sentence, only the fallback: {alt!r}"
        assert alt.endswith("."), alt
        missing = [m for m in mentions if m not in alt]
        assert not missing, f"{alt!r} does not mention {missing}"
    finally:
        plt.close("all")
