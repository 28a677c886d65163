"""The helpers notebook 02 and its widget use: core/toys.py (one_hot), measures/weight_maps.py, measures/qkv.py,
views/qkv.py (moved here from tests/test_exercises_nb02.py)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
import torch

from course_utils.core.errors import UnknownWordError
from course_utils.core.toys import TOY_VOCAB, TOY_WQ, one_hot
from course_utils.measures.qkv import places_table, qkv_of_sentence, word_qkv
from course_utils.measures.weight_maps import head_banks, query_bank
from course_utils.trace.tracing import run_with_trace
from course_utils.training.zoo import load_standard_model
from course_utils.views.qkv import plot_word_qkv


@pytest.fixture(scope="module")
def model():
    return load_standard_model().model


# ---- helpers of core/toys.py, measures/weight_maps.py and measures/qkv.py ----


def test_one_hot_selects_a_row_and_mixes_rows():
    for i, w in enumerate(TOY_VOCAB):
        assert torch.equal(one_hot(w) @ TOY_WQ, TOY_WQ[i])
    with pytest.raises(ValueError, match="toy vocabulary"):
        one_hot("book")


def test_query_bank_is_the_transposed_weight_and_heads_are_column_blocks(model):
    attn = model.encoder[0].self_attn
    bank = query_bank(attn.w_q)
    assert torch.equal(bank, attn.w_q.weight.T)
    banks = head_banks(attn.w_q, attn.n_heads)
    assert torch.equal(torch.cat(banks, dim=1), bank)
    x = torch.randn(64, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(torch.cat([x @ B for B in banks]) + attn.w_q.bias, attn.w_q(x), atol=1e-5)


def test_qkv_of_sentence_matches_trace_in_both_layers(model):
    t = run_with_trace(model, "we want to eat bread")
    for layer in (0, 1):
        qkv, words = qkv_of_sentence(model, "we want to eat bread", layer)
        assert words == t.src_tokens
        for kind in "qkv":
            assert torch.allclose(qkv[kind], t[f"encoder.{layer}.self.{kind}"], atol=1e-5)


def test_word_qkv_whole_layer_positions_and_errors(model):
    from course_utils.core.errors import CourseInputError

    M, note = word_qkv(model, "we want to eat apple", "eat")
    qkv, _ = qkv_of_sentence(model, "we want to eat apple")
    assert M.shape == (3, 64) and "position 3" in note
    for i, kind in enumerate("qkv"):  # the whole layer = the heads side by side
        assert torch.allclose(M[i], qkv[kind][:, 3].reshape(-1), atol=1e-6)
    M2, note2 = word_qkv(model, "we want to eat apple", "bread")
    assert M2.shape == (3, 64) and "alone" in note2
    M1, _ = word_qkv(model, "we want to eat apple", "eat", layer=1)
    assert not torch.allclose(M1, M)
    with pytest.raises(UnknownWordError, match="Did you mean: apple"):
        word_qkv(model, "we want to eat apple", "apples")
    with pytest.raises(UnknownWordError):
        word_qkv(model, "we want to eat pizza", "eat")  # unknown word in the sentence
    with pytest.raises(CourseInputError, match="layers 0..1"):
        word_qkv(model, "we want to eat apple", "eat", layer=2)
    with pytest.raises(CourseInputError, match="type a word"):
        word_qkv(model, "we want to eat apple", "  ")


def test_widget_shows_a_message_for_an_unknown_word(model):
    from functools import partial

    import ipywidgets as widgets

    from course_utils.views.widgets import render

    out = widgets.Output()
    msg = render(partial(plot_word_qkv, model), {"sentence": "we want to eat apple", "word": "xyz", "layer": 0}, out)
    assert msg is not None and "Unknown English word 'xyz'" in msg
    assert render(partial(plot_word_qkv, model), {"sentence": "we eat apple", "word": "eat", "layer": 1}, out) is None
    plt.close("all")


def test_places_table(model):
    t = run_with_trace(model, "we want to eat apple")
    df = places_table(t)
    assert df.loc["cross-attention", "k (H, Tk, dh)"] == (2, 5, 32)
    assert df.loc["cross-attention", "key tokens"] == "we want to eat apple"
    assert df.loc["decoder self-attention", "q (H, Tq, dh)"] == (2, 6, 32)


def test_word_qkv_grid_is_small_multiples_on_one_scale(model):
    from course_utils.views.qkv import plot_word_qkv_grid

    choices = [("we want to eat apple", "eat"), ("they want to eat bread", "eat"), ("eat", "eat")]
    fig = plot_word_qkv_grid(model, choices, layers=(0, 1))
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 6 and len(fig.axes) == 7  # 3 choices x 2 layers, and one colour bar
    sizes = {(round(ax.get_position().width, 6), round(ax.get_position().height, 6)) for ax in panels}
    assert len(sizes) == 1  # equal panel sizes
    assert len({ax.images[0].get_clim() for ax in panels}) == 1  # one colour scale
    lim = max(float(word_qkv(model, s, w, layer)[0].abs().max()) for s, w in choices for layer in (0, 1))
    assert panels[0].images[0].get_clim() == pytest.approx((-lim, lim))
    assert [ax.get_title() for ax in panels[:2]] == [
        "layer 0: 'eat' in 'we want to eat apple', position 3",
        "layer 1: 'eat' in 'we want to eat apple', position 3",
    ]
    single = plot_word_qkv(model, "we want to eat apple", "eat", layer=0)  # the one-view figure is unchanged
    assert single.axes[0].get_title() == "encoder layer 0: q, k, v of 'eat' in 'we want to eat apple', position 3"
    plt.close("all")
