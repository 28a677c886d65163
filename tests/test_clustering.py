"""course_utils.clustering: distances, pairwise spread, kind separation and the projection plot behind the 06 widget."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch

import course_utils.measures.clustering as measures_clustering
from course_utils.core.places import PLACES
from course_utils.measures.clustering import (
    PAIR,
    context_distance_table,
    kind_separation,
    pairwise_spread_table,
    word_vector,
)
from course_utils.measures.projection import LabelledVectors, collect_vectors, identical_groups
from course_utils.measures.similarity import relative_distance
from course_utils.trace.interventions import copy_row_from, next_word_log_probs
from course_utils.training.zoo import load_seeds, load_standard_model
from course_utils.views.clustering import MARKER_GLYPHS, MIN_WINDOW, MIN_ZOOM, plot_word_projection


@pytest.fixture(scope="module")
def snaps():
    return load_standard_model().snapshots


def test_first_layer_qkv_of_eat_identical_in_both_sentences(snaps):
    """Same word, same position, linear maps: q, k, v in encoder layer 0 cannot depend on the context."""
    table = context_distance_table(snaps, "eat", prefixes=("encoder.0.self",), kinds=("q", "k", "v"))
    assert len(table) == 9 and (table["relative distance"] < 1e-6).all() and (table["cosine distance"] < 1e-6).all()


def test_context_distance_table_skips_kinds_the_word_lacks(snaps):
    table = context_distance_table(snaps, "eat", prefixes=("decoder.1.cross",))
    assert set(table["kind"]) == {"k", "v"}  # eat is a key/value (English) in cross-attention, never a query
    with pytest.raises(ValueError, match="occurs in none"):
        context_distance_table(snaps, "eat", prefixes=("decoder.0.self",))


def test_word_vector_message(snaps):
    with pytest.raises(ValueError, match="'apfel' is not a token of encoder.0.self.q"):
        word_vector(snaps[30][PAIR[0]], "encoder.0.self.q", "apfel")


def _silhouette_by_hand(X, labels):
    """Mean silhouette (b − a) / max(a, b): a = mean distance to the other points of the own cluster,
    b = the smallest mean distance to the points of another cluster."""
    X, labels = np.asarray(X, dtype=np.float64), np.asarray(labels)
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    s = []
    for i in range(len(X)):
        own = (labels == labels[i]) & (np.arange(len(X)) != i)
        a = D[i, own].mean()
        b = min(D[i, labels == other].mean() for other in set(labels) - {labels[i]})
        s.append((b - a) / max(a, b))
    return float(np.mean(s))


def _centroid_accuracy_by_hand(X, labels):
    labels = np.asarray(labels)
    kinds = sorted(set(labels))
    centroids = {k: X[labels == k].mean(0) for k in kinds}
    nearest = [min(kinds, key=lambda k: np.linalg.norm(x - centroids[k])) for x in X]
    return float(np.mean(np.array(nearest) == labels))


def test_pairwise_spread_table_and_kind_separation(snaps):
    sp = pairwise_spread_table(snaps, list(PAIR), 30, layers=(0,), kinds=("q", "k"))
    assert list(sp.columns) == list(PLACES) and np.isnan(sp.loc[(0, "k"), "cross"])
    sep = kind_separation(snaps, list(PAIR), "encoder.0.self", 30)
    assert set(sep) == {"silhouette", "silhouette_2d", "centroid_accuracy"}
    lv = collect_vectors(snaps, list(PAIR), "encoder.0.self", kinds=("q", "k", "v"), epochs=[30])
    labels = lv.meta["kind"].to_numpy()
    assert sep["silhouette"] == pytest.approx(_silhouette_by_hand(lv.X, labels), abs=1e-6)  # float32 vectors
    assert sep["centroid_accuracy"] == pytest.approx(_centroid_accuracy_by_hand(lv.X, labels))


def test_kind_separation_known_values(monkeypatch):
    """Two kinds on a line, q at 0 and 2, k at 10 and 12: every point has a = 2 and b = 11 (the outer
    points) or 9 (the inner ones), so the silhouette is (9/11 + 7/9) / 2 = 79/99; PCA to 2-D only rotates
    the plane, so silhouette_2d is the same; every point is nearest its own centroid."""
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0], [12.0, 0.0]])
    meta = pd.DataFrame({"kind": ["q", "q", "k", "k"]})
    monkeypatch.setattr(measures_clustering, "collect_vectors", lambda *args, **kw: LabelledVectors(X, meta))
    sep = kind_separation({}, [], "encoder.0.self", 30, kinds=("q", "k"))
    assert sep["silhouette"] == pytest.approx(79 / 99)
    assert sep["silhouette_2d"] == pytest.approx(79 / 99)
    assert sep["centroid_accuracy"] == 1.0

    # q at 0 and 10, k at 2 and 12 (the kinds interleaved):
    X2 = np.array([[0.0, 0.0], [10.0, 0.0], [2.0, 0.0], [12.0, 0.0]])
    monkeypatch.setattr(measures_clustering, "collect_vectors", lambda *args, **kw: LabelledVectors(X2, meta))
    sep = kind_separation({}, [], "encoder.0.self", 30, kinds=("q", "k"))
    # point 0: a = 10, b = (2 + 12)/2 = 7 -> −3/10; point 10: a = 10, b = (8 + 2)/2 = 5 -> −5/10;
    # point 2: a = 10, b = (2 + 8)/2 = 5 -> −5/10; point 12: a = 10, b = (12 + 2)/2 = 7 -> −3/10
    assert sep["silhouette"] == pytest.approx(-0.4)
    assert sep["centroid_accuracy"] == 0.5  # centroids 5 (q) and 7 (k): 0 and 2 -> q, 10 and 12 -> k


@pytest.mark.parametrize(
    "choice",
    [
        {},
        {"layer": 1, "kinds": ("x1", "out", "layer_out")},
        {"place": "cross", "layer": 1},
        {"word": "essen", "place": "decoder self", "head": "0"},
        {"dims": 3},
        {"epochs": (30,)},
        {"kinds": ("q", "k", "v", "x1", "out", "layer_out")},
    ],
)
def test_projection_plot_draws_one_panel_per_kind(snaps, choice):
    fig = plot_word_projection(snaps, **choice)
    kinds = choice.get("kinds", ("q", "k", "v", "x1"))
    titled = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title().split()[0] for ax in titled] == list(kinds)  # small multiples: one kind per panel
    assert {ax.get_xlim() for ax in titled} == {titled[0].get_xlim()}  # one projection: the same axes everywhere
    assert fig._suptitle is not None and fig._suptitle.get_text().startswith(f"'{choice.get('word', 'eat')}' ")
    plt.close(fig)


def _panel_texts(ax):
    """The texts of a panel and of its zoomed inset (if any)."""
    return [t for a in (ax, *ax.child_axes) for t in a.texts]


def test_projection_plot_draws_each_sentences_path_over_the_epochs(snaps):
    fig = plot_word_projection(snaps, kinds=("x1",), layer=0)
    ax = fig.axes[0]
    arrows = [t for t in ax.texts if t.arrow_patch is not None and t.get_text() == ""]
    assert len(arrows) == 2 * 2  # two sentences, epoch 1 -> 15 -> 30
    labels = sorted(t.get_text() for t in _panel_texts(ax) if t.get_text())
    # x1 differs between the sentences: no shared labels; each names its sentence by its marker's shape
    assert labels == ["15▲", "15●", "1▲", "1●", "30▲", "30●"]
    plt.close(fig)


def test_a_small_path_is_enlarged_in_an_inset(snaps):
    fig = plot_word_projection(snaps, kinds=("q", "k", "v", "x1", "out"), layer=0)  # notebook 06's figure
    q_panel, out_panel = fig.axes[0], fig.axes[4]
    assert len(q_panel.child_axes) == 1 and q_panel.child_axes[0].get_title().startswith("enlarged")
    assert not [t for t in q_panel.texts if t.get_text()]  # the labels are in the inset, once
    assert len(out_panel.child_axes) == 1  # out's path (a fifth of the panel) is enlarged too: its labels piled
    renderer = fig.canvas.get_renderer()
    for panel in fig.axes[:5]:
        for inset in panel.child_axes:  # the title says the true enlargement (inset scale / panel scale)
            true = (inset.get_window_extent(renderer).width / np.ptp(inset.get_xlim())) / (
                panel.get_window_extent(renderer).width / np.ptp(panel.get_xlim())
            )
            said = float(inset.get_title().split()[1].rstrip("×"))
            assert true >= MIN_ZOOM - 0.05 and abs(true - said) <= (0.05 if said < 3 else 0.5), (said, true)
            (x0, x1), (p0, p1) = inset.get_xlim(), panel.get_xlim()
            assert p0 <= x0 and x1 <= p1  # the enlarged box lies inside the panel
            box = panel.transData.transform([(x0, inset.get_ylim()[0]), (x1, inset.get_ylim()[1])])  # pixels
            frame = inset.get_window_extent(renderer)
            apart = frame.x1 < box[0, 0] or box[1, 0] < frame.x0 or frame.y1 < box[0, 1] or box[1, 1] < frame.y0
            assert apart, "the inset covers the box it enlarges"
    plt.close(fig)


@pytest.mark.parametrize("choice", [{"layer": 1}, {"layer": 1, "head": "0"}])  # the notebook's layer-1 views
def test_insets_enlarge_at_least_twice_and_sit_clear_of_their_box(snaps, choice):
    fig = plot_word_projection(snaps, kinds=("q", "k", "v", "x1"), **choice)
    renderer = fig.canvas.get_renderer()
    insets = [(panel, inset) for panel in fig.axes[:4] for inset in panel.child_axes]
    assert insets
    for panel, inset in insets:
        scale = inset.get_window_extent(renderer).width / np.ptp(inset.get_xlim())
        assert scale / (panel.get_window_extent(renderer).width / np.ptp(panel.get_xlim())) >= MIN_ZOOM - 0.05
        (x0, x1), (y0, y1) = inset.get_xlim(), inset.get_ylim()
        box = panel.transData.transform([(x0, y0), (x1, y1)])
        frame = inset.get_window_extent(renderer)
        assert frame.x1 < box[0, 0] or box[1, 0] < frame.x0 or frame.y1 < box[0, 1] or box[1, 1] < frame.y0
    plt.close(fig)


@pytest.mark.parametrize("choice", [{"layer": 0, "kinds": ("q", "k", "v", "x1", "out")}, {"layer": 1}])
def test_the_enlarged_box_is_drawn_large_enough_to_see_around_its_path(snaps, choice):
    """Layer 0's q path is a speck (under 1 % of the panel): its box must still be at least MIN_WINDOW of the panel
    each way and clearly wider than the path's markers, and the inset still enlarges at least MIN_ZOOM times."""
    fig = plot_word_projection(snaps, **choice)
    renderer = fig.canvas.get_renderer()
    marker = np.sqrt(46) * fig.dpi / 72  # a path marker's diameter in pixels (s=46 points²: about 6.8 points)
    insets = [(panel, inset) for panel in fig.axes[: len(choice.get("kinds", "qkvx"))] for inset in panel.child_axes]
    assert insets
    for panel, inset in insets:
        for lim in ("get_xlim", "get_ylim"):
            share = np.ptp(getattr(inset, lim)()) / np.ptp(getattr(panel, lim)())
            assert share >= MIN_WINDOW - 1e-9, (panel.get_title(), lim, share)
        (x0, x1), (y0, y1) = inset.get_xlim(), inset.get_ylim()
        box = panel.transData.transform([(x0, y0), (x1, y1)])
        assert min(box[1] - box[0]) > 2 * marker  # pixels: the box shows around the markers (a speck: 1 marker)
        zoom = inset.get_window_extent(renderer).width / np.ptp(inset.get_xlim())
        assert zoom / (panel.get_window_extent(renderer).width / np.ptp(panel.get_xlim())) >= MIN_ZOOM - 0.05
    if choice["layer"] == 0:  # the speck: without the minimum its box would be about 1 % of the panel
        q_panel = fig.axes[0]
        assert np.ptp(q_panel.child_axes[0].get_xlim()) / np.ptp(q_panel.get_xlim()) == pytest.approx(MIN_WINDOW)
    plt.close(fig)


def test_an_inset_and_its_title_cover_no_point_of_the_panels_kind_in_the_notebooks_figure(snaps):
    fig = plot_word_projection(snaps, kinds=("q", "k", "v", "x1", "out"), layer=0)  # notebook 06's figure
    renderer = fig.canvas.get_renderer()
    for panel in fig.axes[:5]:
        own = panel.collections[1].get_offsets()  # the faint points of the panel's kind (other words)
        for inset in panel.child_axes:
            frame = inset.get_window_extent(renderer).union([inset.title.get_window_extent(renderer)])
            pixels = panel.transData.transform(own)
            inside = (
                (pixels[:, 0] > frame.x0 - 3)
                & (pixels[:, 0] < frame.x1 + 3)
                & (pixels[:, 1] > frame.y0 - 3)
                & (pixels[:, 1] < frame.y1 + 3)
            )
            assert not inside.any(), panel.get_title()
    plt.close(fig)


def test_path_labels_sit_on_their_own_paths_side(snaps):
    fig = plot_word_projection(snaps, kinds=("x1", "out"), layer=0)  # two paths side by side in each panel
    renderer = fig.canvas.get_renderer()
    for panel in fig.axes[:2]:
        for ax in (panel, *panel.child_axes):
            for t in (t for t in ax.texts if t.get_text()):
                box = t.get_window_extent(renderer)
                centre = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])
                anchor, other = ax.transData.transform(t.xy), ax.transData.transform(t._away_from)
                # never across, toward the other path: a label the away side had no room for may sit beside its
                # point, a little nearer the other path; one that names its sentence by shape ('30●') may sit a
                # little nearer still (measured: x1 '30●' 47 px vs 55 px), as it cannot be read as the other's
                names_sentence = t.get_text()[-1] in MARKER_GLYPHS.values()
                assert t.get_text().endswith("=") or names_sentence, t.get_text()
                near = 0.8 if names_sentence else 0.9
                assert np.linalg.norm(centre - other) > near * np.linalg.norm(anchor - other), t.get_text()
    plt.close(fig)


def test_projection_plot_shares_a_label_only_for_identical_points(snaps):
    fig = plot_word_projection(snaps, kinds=("q", "x1"), layer=0)
    q_panel = fig.axes[0]
    assert {t.get_text() for t in _panel_texts(q_panel) if t.get_text()} == {"1=", "15=", "30="}  # identical
    plt.close(fig)
    Y = np.array([[0.0, 0.0], [0.0, 0.0], [0.01, 0.0], [1.0, 1.0]])
    assert identical_groups(Y) == [[0, 1], [2], [3]]  # 1 % of the span apart is not the same point


def test_projection_plot_legend_is_outside_the_panels(snaps):
    for dims in (2, 3):
        fig = plot_word_projection(snaps, kinds=("q", "k", "v"), dims=dims)
        assert all(ax.get_legend() is None for ax in fig.axes) and fig.legends  # a figure legend, below the panels
        plt.close(fig)


def test_projection_plot_tsne(snaps):
    fig = plot_word_projection(snaps, method="tsne", epochs=(30,))
    assert fig.axes[0].get_xlabel() == "t-SNE 1"
    plt.close(fig)


@pytest.mark.parametrize(
    "choice, message",
    [
        ({"kinds": ()}, "at least one vector kind"),  # a word where it is no token: check_widget_choices
        ({"kinds": ("q", "z")}, "unknown kind"),
        ({"epochs": ()}, "at least one epoch"),
        ({"epochs": (2,)}, "no snapshot at epoch"),
        ({"layer": 2}, "layer 2 out of range"),
        ({"method": "umap"}, "method must be"),
        ({"place": "somewhere"}, "place must be one of"),
        ({"dims": 4}, "dims must be 2 or 3"),
    ],
)
def test_projection_plot_invalid_choices_are_course_errors(snaps, choice, message):
    from course_utils.core.errors import CourseInputError

    with pytest.raises(CourseInputError, match=message):
        plot_word_projection(snaps, **choice)
    plt.close("all")


@pytest.mark.parametrize("kinds", [("q", "out"), ("layer_out",), ("x1", "out", "layer_out")])
@pytest.mark.parametrize("head", ["0", "1", 1])
def test_one_head_with_whole_layer_kinds_says_what_to_change(snaps, kinds, head):
    from course_utils.core.errors import ShapeError

    with pytest.raises(ShapeError, match="Set head to 'all', or keep only q, k, v, x1"):
        plot_word_projection(snaps, kinds=kinds, head=head)
    plt.close("all")


WIDGET_WORDS = {"eat": "English", "apple": "English", "essen": "German"}  # the 06 widget's words, by language


def expected_widget_outcome(word: str, kind: str, layer: int, head: str, place: str) -> str | None:
    """What the 06 widget must do, worked out from the model's layout (not from the plot function): None = draw;
    else the words of its refusal. One head cannot hold the whole-layer kinds (out, layer_out); a word appears
    only where rows are of its language: English rows in encoder self-attention and as cross-attention's keys and
    values, German rows in decoder self-attention and as cross-attention's queries (q, x1, out, layer_out)."""
    if head != "all" and kind in ("out", "layer_out"):
        return "Set head to 'all', or keep only q, k, v, x1"
    english_rows = place == "encoder self" or (place == "cross" and kind in ("k", "v"))
    if (WIDGET_WORDS[word] == "English") != english_rows:
        return f"{word!r} is not a token of {place} layer {layer}"
    return None


def check_widget_choices(plot, word: str, layer: int, head: str) -> None:
    """Every kind and place of the widget for one word, layer and head: the choices expected to draw give a
    figure (one panel, titled with the kind; the word in the title), every other one a CourseInputError with
    the expected words."""
    from matplotlib.figure import Figure

    from course_utils.core.errors import CourseInputError
    from course_utils.core.places import PLACES, VECTOR_KINDS

    wrong = {}
    for kind in VECTOR_KINDS:
        for place in PLACES:
            want = expected_widget_outcome(word, kind, layer, head, place)
            try:
                fig = plot(word, kinds=(kind,), layer=layer, head=head, place=place)
            except CourseInputError as err:
                if want is None or want not in str(err):
                    wrong[(kind, place)] = f"refused: {str(err)[:80]}"
            else:
                drew = isinstance(fig, Figure) and fig._suptitle is not None
                titles = [ax.get_title() for ax in fig.axes if ax.get_title()] if drew else []
                if want is not None or titles != [kind] or not fig._suptitle.get_text().startswith(f"{word!r} "):
                    wrong[(kind, place)] = f"drew {titles} (expected: {want or 'a figure'})"
            plt.close("all")
    assert not wrong, f"{len(wrong)} of {len(VECTOR_KINDS) * len(PLACES)} choices wrong: {wrong}"


@pytest.mark.parametrize("head", ["all", "0"])
@pytest.mark.parametrize("layer", [0, 1])
@pytest.mark.parametrize("word", list(WIDGET_WORDS))
def test_every_widget_choice_draws_or_gives_a_course_error(snaps, word, layer, head):
    """Each word, kind, layer, head and place of the 06 widget (PCA, 2-D, all epochs): a figure or a worded error,
    as expected_widget_outcome says (of the 18 kind x place choices, head all: 8 draw for eat and apple, 10 for
    essen; head 0: 6 each)."""
    check_widget_choices(lambda *args, **kw: plot_word_projection(snaps, *args, **kw), word, layer, head)


def _always_refuses(word, **choice):
    from course_utils.core.errors import CourseInputError

    raise CourseInputError(f"{word!r} is not a token of anything")


def _never_refuses(word, kinds, **choice):
    fig = plt.figure()
    fig.add_subplot().set_title(kinds[0])
    fig.suptitle(f"{word!r} over epochs 1 → 15 → 30")
    return fig


@pytest.mark.parametrize("broken", [_always_refuses, _never_refuses], ids=["always refuses", "never refuses"])
def test_the_widget_choice_check_rejects_a_plot_that_always_refuses_or_never_does(broken):
    with pytest.raises(AssertionError, match="choices wrong"):
        check_widget_choices(broken, "eat", 0, "all")


def test_widget_shows_a_message_not_a_traceback(snaps):
    from functools import partial

    import ipywidgets as ipw

    from course_utils.views.widgets import render

    out = ipw.Output()
    msg = render(partial(plot_word_projection, snaps), {"word": "eat", "place": "decoder self"}, out)
    assert msg is not None and "is not a token" in msg
    msg = render(partial(plot_word_projection, snaps), {"kinds": ("q", "out"), "head": "1"}, out)
    assert msg is not None and "Set head to 'all'" in msg and "same shape" not in msg


def test_copy_row_from_replaces_one_row_only():
    from course_utils.trace.tracing import Trace

    source = Trace(["a", "b", "c"], ["<bos>"], [], {"x": torch.arange(6.0).reshape(3, 2) + 100})
    tensor = torch.zeros(2, 3, 2)  # (batch, T, d_model)
    out = copy_row_from(source, 1)(tensor, "x")
    assert torch.equal(out[:, 1], torch.tensor([[102.0, 103.0]] * 2))
    assert (out[:, [0, 2]] == 0).all() and (tensor == 0).all()  # the model's tensor is not changed in place


def test_patching_eat_embedding_changes_nothing_and_the_object_flips_the_output():
    from course_utils.core.data import load_probes
    from course_utils.trace.tracing import run_with_trace

    model = load_standard_model().model.eval()
    a, b = PAIR
    target = load_probes("context_pair")[a]
    bread = run_with_trace(model, b)
    clean = next_word_log_probs(model, a, target)
    assert clean.shape == (len(target.split()) + 1, len(model.tgt_vocab))
    assert torch.allclose(clean.exp().sum(-1), torch.ones(len(clean)))
    same = next_word_log_probs(model, a, target, {"encoder.embed": copy_row_from(bread, 3)})  # eat = eat
    assert torch.equal(same, clean)
    de = model.tgt_vocab.stoi
    flipped = next_word_log_probs(model, a, target, {"encoder.1.layer_out": copy_row_from(bread, 4)})
    assert flipped[2].argmax() == de["brot"] and clean[2].argmax() == de["einen"]


def _notebook_definitions() -> dict:
    """Run the notebook cell that defines copy_row_from and next_word_log_probs (definitions only)."""
    import ast
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "06_qkv_clustering_by_epoch.ipynb").read_text())
    src = next(
        "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "code" and "def copy_row_from" in "".join(c["source"])
    )
    tree = ast.parse(src)
    tree.body = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    import course_utils.core as core  # the notebook imports the core layer as a namespace
    from course_utils.core.data import encode_source, encode_target
    from course_utils.trace.tracing import patch

    namespace = {"torch": torch, "core": core, "encode_source": encode_source, "encode_target": encode_target}
    namespace["patch"] = patch
    exec(compile(tree, "notebook 06", "exec"), namespace)
    return namespace


def test_notebook_patching_functions_agree_with_the_library():
    from course_utils.core.data import load_probes
    from course_utils.trace.tracing import run_with_trace

    nb = _notebook_definitions()
    model = load_standard_model("learned", 4).model.eval()
    a, b = PAIR
    target = load_probes("context_pair")[a]
    bread = run_with_trace(model, b)
    for hook in ("encoder.embed", "encoder.0.layer_out", "encoder.1.layer_out"):
        for pos in (3, 4):
            mine = nb["next_word_log_probs"](model, a, target, {hook: nb["copy_row_from"](bread, pos)})
            lib = next_word_log_probs(model, a, target, {hook: copy_row_from(bread, pos)})
            assert torch.equal(mine, lib)


def test_seed_verdict_counts_agreeing_seeds():
    from course_utils.measures.verdicts import seed_range, seed_verdict

    assert seed_verdict({0: True, 1: True, 2: True, 3: True, 4: True}) == "holds (5/5 seeds)"
    assert seed_verdict(dict.fromkeys(range(5), False)) == "false (5/5 seeds)"
    assert (
        seed_verdict({0: True, 1: False, 2: True, 3: False, 4: True}) == "seed-dependent (holds on 3/5 seeds: 0, 2, 4)"
    )
    assert seed_verdict({0: 1, 1: 1}, what="holds only weakly") == "holds only weakly (2/2 seeds)"
    with pytest.raises(ValueError):
        seed_verdict({})
    assert seed_range({0: 0.781, 1: 0.859, 2: 0.8}) == "0.78–0.86"
    assert seed_range([0.701, 0.699], decimals=2) == "0.70"


def test_residual_sum_spread_against_numpy_and_a_known_case():
    """08's residual_sum_spread: the word spread of residual + sublayer output, by numpy on the shared words; adding
    a vector to itself keeps every direction (the spread of x + x is the spread of x); a broken copy that ignores
    the residual gives the sublayer's own spread, which differs."""
    from course_utils.core.data import load_probes
    from course_utils.measures.probing import residual_sum_spread, shared_positions, word_spread
    from course_utils.training.zoo import load_seeds

    blog = load_seeds("blog")[2]
    traces = [blog.snapshots[30][p] for p in load_probes("five_sentences")]
    x, out = "encoder.embed", "encoder.0.self.out"

    def by_numpy(residual_key, key):
        spreads = []
        for p, _ in shared_positions(traces, key):
            V = np.stack(
                [t.vectors(residual_key).double().numpy()[p] + t.vectors(key).double().numpy()[p] for t in traces]
            )
            V = V / np.linalg.norm(V, axis=1, keepdims=True)
            i, j = np.triu_indices(len(V), 1)
            spreads.append((1 - (V @ V.T)[i, j]).mean())
        return float(np.mean(spreads))

    assert abs(residual_sum_spread(traces, x, out) - by_numpy(x, out)) < 1e-12
    own = float(np.mean(list(word_spread(traces, out).values())))
    assert abs(residual_sum_spread(traces, out, out) - own) < 1e-12  # x + x points where x points
    assert abs(residual_sum_spread(traces, x, out) - own) > 0.05  # the residual changes it (seed 2: 0.127 -> 0.041)
    with pytest.raises(ValueError, match="no word sits at the same position"):
        residual_sum_spread(traces[:1] + [load_seeds("blog")[2].snapshots[30]["apple eat can we"]], x, out)


def test_notebook_06_exercise_3_solution_note():
    """Seed 4, encoder layer 1: the head that hardly looks at the object (head 1) differs more; both layer-0 heads
    of seed 4 look at the object, so layer 1's values already carry it (the worked solution's reason)."""
    s4 = load_seeds("learned")[4].snapshots[30]
    a, b = (s4[s] for s in PAIR)

    def shift(key, h):
        return relative_distance(word_vector(a, key, "eat", h), word_vector(b, key, "eat", h))

    d = [shift("encoder.1.self.x1", h) for h in (0, 1)]
    on_object = [max(float(s4[s]["encoder.1.self.weights"][h, 3, 4]) for s in PAIR) for h in (0, 1)]
    assert d[1] > d[0] > 1.0 and on_object[0] > 0.6 > 0.1 > on_object[1]
    assert min(float(s4[s]["encoder.0.self.weights"][h, 3, 4]) for s in PAIR for h in (0, 1)) > 0.75
    assert shift("encoder.1.self.v", 1) > 0.5  # layer 1's values of eat differ already
