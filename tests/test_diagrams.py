"""course_utils/views/diagrams.py: four schematic figures, deterministic, labelled from their arguments."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from course_utils.core.errors import ConfigError
from course_utils.core.places import PLACE_NAMES
from course_utils.views.diagrams import (
    DPI,
    WIDTH,
    draw_attention_path,
    draw_attention_places,
    draw_layer,
    draw_multi_head,
)
from course_utils.views.style import KIND_COLOURS
from course_utils.views.widgets import figure_png

DRAWINGS = {
    "path": lambda: draw_attention_path(),
    "places": lambda: draw_attention_places(),
    "multi_head": lambda: draw_multi_head(),
    "encoder_layer": lambda: draw_layer("encoder"),
    "decoder_layer": lambda: draw_layer("decoder"),
}


def texts(fig) -> str:
    return "\n".join(t.get_text() for ax in fig.axes for t in ax.texts) + "\n" + fig._suptitle.get_text()


def face(fig, gid) -> list[str]:
    return [to_hex(p.get_facecolor()).upper() for ax in fig.axes for p in ax.patches if p.get_gid() == gid]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("name", DRAWINGS)
def test_each_diagram_is_a_titled_figure_of_fixed_size_and_identical_png_bytes(name):
    fig = DRAWINGS[name]()
    assert isinstance(fig, Figure) and fig._suptitle is not None and fig._suptitle.get_text()
    assert fig.get_figwidth() == WIDTH and fig.dpi == DPI
    first = figure_png(fig)
    assert int.from_bytes(first[16:20], "big") == round(WIDTH * DPI)  # saved as it is
    plt.close("all")
    assert figure_png(DRAWINGS[name]()) == first
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts]
    assert min(sizes) >= 9, "text must stay readable at the notebook's width"


def test_one_words_path_names_every_step_and_d_head():
    fig = draw_attention_path("eat", ("we", "want", "to", "eat", "apple"), d_head=32)
    text = texts(fig)
    for label in ("$W^Q$", "$W^K$", "$W^V$", "softmax", "sum to 1", "\\sqrt{32}", "$\\Sigma_j$", "'eat'", "apple"):
        assert label in text, label
    assert face(fig, "q") == [KIND_COLOURS["q"]]
    assert face(fig, "k") == [KIND_COLOURS["k"]] * 5 and face(fig, "v") == [KIND_COLOURS["v"]] * 5
    assert "\\sqrt{16}" in texts(draw_attention_path(d_head=16))
    assert face(draw_attention_path("a", ("a", "b")), "k") == [KIND_COLOURS["k"]] * 2


def test_places_show_all_three_and_the_encoder_output_entering_every_cross_attention():
    fig = draw_attention_places()
    text = texts(fig)
    for name in PLACE_NAMES.values():
        assert name in text, name
    assert "encoder output" in text and "Q from the decoder" in text
    assert text.count("K, V") == 2  # one arrow into the cross-attention of each of the 2 decoder layers
    assert len(face(fig, "cross")) == 2 and len(face(fig, "encoder self")) == 2


@pytest.mark.parametrize(("d_model", "n_heads", "d_head"), [(64, 2, 32), (64, 4, 16), (64, 8, 8), (12, 3, 4)])
def test_multi_head_labels_every_shape_from_its_arguments(d_model, n_heads, d_head):
    fig = draw_multi_head(seq_len=5, d_model=d_model, n_heads=n_heads)
    text = texts(fig)
    assert f"(5, {d_head})" in text and f"(5, {d_model})" in text and f"{n_heads} × (5, {d_head})" in text
    for label in ("$W^Q$", "$W^K$", "$W^V$", "$W^O$", "concatenate", "split", "softmax"):
        assert label in text, label
    assert face(fig, "q") == [KIND_COLOURS["q"]] and face(fig, "k") == [KIND_COLOURS["k"]]
    assert face(fig, "v") == [KIND_COLOURS["v"]]
    assert f"\\sqrt{{{d_head}}}" in text
    assert "(7, 16)" in texts(draw_multi_head(seq_len=7, d_model=64, n_heads=4))


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_layer_is_post_norm_with_a_residual_around_every_sublayer(kind):
    fig = draw_layer(kind)
    text = texts(fig)
    n_sub = 2 if kind == "encoder" else 3
    assert text.count("LayerNorm(") == 1 and "post-norm" in text
    assert [t for t in text.splitlines() if t == "LayerNorm"] == ["LayerNorm"] * n_sub
    assert text.count("residual: block input") == n_sub and text.count("dropout") >= n_sub
    assert len(face(fig, "add")) == n_sub
    # post-norm: each LayerNorm sits below its ⊕, which sits below its sublayer (the flow runs downwards)
    ys = {g: [p.get_y() for p in fig.axes[0].patches if p.get_gid() == g] for g in ("LayerNorm", "feed-forward")}
    adds = sorted((p.center[1] for p in fig.axes[0].patches if p.get_gid() == "add"), reverse=True)
    norms = sorted(ys["LayerNorm"], reverse=True)
    assert all(norm < add for norm, add in zip(norms, adds))
    assert adds[-1] < ys["feed-forward"][0] < norms[-2]  # the feed-forward comes last, after the attention(s)
    if kind == "decoder":
        assert PLACE_NAMES["cross"] in text and PLACE_NAMES["decoder self"] in text and "K, V" in text
    else:
        assert PLACE_NAMES["encoder self"] in text and PLACE_NAMES["cross"] not in text


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: draw_multi_head(5, 64, 3), "divisible"),
        (lambda: draw_multi_head(5, 64, 0), "positive"),
        (lambda: draw_layer("middle"), "['encoder', 'decoder']"),
        (lambda: draw_attention_path("bread", ("we", "eat")), "bread"),
        (lambda: draw_attention_path(d_head=0), "d_head"),
    ],
)
def test_bad_arguments_raise_a_one_line_config_error(call, words):
    with pytest.raises(ConfigError) as info:
        call()
    assert words in str(info.value) and "\n" not in str(info.value)
    assert not plt.get_fignums()  # nothing half drawn is left behind
