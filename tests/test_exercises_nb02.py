"""Checkers of notebook 02 accept the worked solutions and reject typical wrong answers (each with its hint);
the notebook's worked solutions pass; plus the helpers of course_utils/measures/qkv.py and
measures/weight_maps.py the notebook and its widget use."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
import torch
from notebook_cells import solution_blocks  # tests/ is on sys.path under pytest

from course_utils.core.errors import UnknownWordError
from course_utils.core.toys import TOY_VOCAB, TOY_WQ, one_hot
from course_utils.exercises import NOT_ANSWERED, NOT_YET, nb02
from course_utils.exercises.framework import learner
from course_utils.measures.qkv import places_table, qkv_of_sentence, word_qkv
from course_utils.measures.weight_maps import head_banks, query_bank
from course_utils.trace.tracing import run_with_trace
from course_utils.training.zoo import load_standard_model
from course_utils.views.qkv import plot_word_qkv


@pytest.fixture(scope="module")
def model():
    return load_standard_model().model


# ---- the exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍ ----


def _solution_layers(d_model):
    return torch.nn.Linear(d_model, d_model), torch.nn.Linear(d_model, d_model), torch.nn.Linear(d_model, d_model)


def _solution_project(X, layer):
    return X @ layer.weight.T + layer.bias


def _honest_with_a_name_like_the_shortcut(X, linear):  # a parameter or variable may be called anything
    weight, bias = linear.weight, linear.bias
    layer = X @ weight.t()
    return layer + bias


def _shared(d):
    layer = torch.nn.Linear(d, d)
    return layer, layer, layer


def _same_start(d):
    torch.manual_seed(0)
    a = torch.nn.Linear(d, d)
    torch.manual_seed(0)
    return a, torch.nn.Linear(d, d), torch.nn.Linear(d, 5)


LAYER_MISTAKES = [  # one learner's function per row of nb02.QKV_LAYERS.mistakes
    _shared,
    lambda d: tuple(torch.nn.Linear(64, 64) for _ in range(3)),
    lambda d: tuple(torch.nn.Linear(d, d, bias=False) for _ in range(3)),
    lambda d: _same_start(d)[:2] + (torch.nn.Linear(d, d),),
]


def test_qkv_layers(model, capsys):
    attn = model.encoder[0].self_attn
    assert nb02.check_qkv_layers(_solution_layers)
    assert nb02.check_qkv_layers(lambda d: (attn.w_q, attn.w_k, attn.w_v) if d == 64 else _solution_layers(d))
    for make, mistake in zip(LAYER_MISTAKES, nb02.QKV_LAYERS.mistakes, strict=True):
        assert not nb02.check_qkv_layers(make) and mistake.hint in capsys.readouterr().out
    for returned in ((torch.nn.Linear(4, 4),) * 2, tuple(torch.randn(4, 4) for _ in range(3)), "Q, K, V"):
        assert not nb02.check_qkv_layers(lambda d, r=returned: r)
        assert "should return three torch.nn.Linear" in capsys.readouterr().out


@pytest.mark.parametrize("mistake", nb02.BY_HAND.mistakes, ids=lambda m: m.hint[:30])
def test_qkv_by_hand_names_each_mistake(mistake, capsys):
    assert not nb02.check_qkv_by_hand(learner(mistake.gives))
    assert mistake.hint in capsys.readouterr().out


def test_qkv_by_hand(capsys):
    assert nb02.check_qkv_by_hand(_solution_project)
    assert nb02.check_qkv_by_hand(_honest_with_a_name_like_the_shortcut)
    assert nb02.check_qkv_by_hand(lambda X, layer: torch.addmm(layer.bias, X, layer.weight.t()))
    capsys.readouterr()
    for project, said in [
        (
            lambda X, layer: X @ layer.weight + layer.bias if layer.out_features == 3 else _solution_project(X, layer),
            "weight.T",
        ),
        (lambda X, layer: (X @ layer.weight.T + layer.bias).T, "has shape (4, 3)"),
        (lambda X, layer: layer(X), "my_project calls the layer itself"),
        (lambda X, layer: layer.forward(X), "my_project uses forward: F.linear (or the layer's forward)"),
        (lambda X, layer: torch.nn.Linear.forward(layer, X), "my_project uses forward"),
        (lambda X, layer: torch.nn.functional.linear(X, layer.weight, layer.bias), "my_project uses linear"),
        (torch.nn.functional.linear, "my_project uses linear"),
        (lambda X, layer: torch.stack([layer.weight @ x + layer.bias for x in X]), "Python comprehension"),
        (lambda X, layer: "q", "should return a tensor"),
    ]:
        assert not nb02.check_qkv_by_hand(project)
        out = capsys.readouterr().out
        assert out.startswith(NOT_YET) and said in out and out.count("\n") == 1, out


def test_same_q_prediction(model, capsys):
    from course_utils.measures.qkv import layer_input

    a, b = (layer_input(model, s)[0][3] for s in ("we want to eat apple", "we want to eat bread"))
    truth = torch.equal(model.encoder[0].self_attn.w_q(a), model.encoder[0].self_attn.w_q(b))
    assert truth is True and nb02.check_same_q_prediction(truth)
    assert not nb02.check_same_q_prediction(False) and "one row at a time" in capsys.readouterr().out


def test_toy_query(capsys):
    answer = 0.25 * TOY_WQ[0] + 0.75 * TOY_WQ[2]
    assert torch.equal(answer, (0.25 * one_hot("eat") + 0.75 * one_hot("read")) @ TOY_WQ)
    assert nb02.check_toy_query(answer) and nb02.check_toy_query([2.5, 0.0, 0.5])
    assert not nb02.check_toy_query(TOY_WQ[2]) and nb02.TOY_QUERY.mistakes[0].hint in capsys.readouterr().out
    for wrong in (0.75 * TOY_WQ[0] + 0.25 * TOY_WQ[2], [2.5, 0.0]):
        assert not nb02.check_toy_query(wrong)


def test_cross_rows(model, capsys):
    t = run_with_trace(model, "i can eat bread")
    assert t.translation == ["ich", "kann", "brot", "essen"]
    rows = t["decoder.0.cross.q_input"].shape[0], t["decoder.0.cross.k_input"].shape[0]
    assert rows == (5, 4) and nb02.check_cross_rows(*rows)
    for mistake, answer in zip(nb02.CROSS_ROWS.mistakes, [(4, 5), (4, 4), (5, 5)], strict=True):
        assert not nb02.check_cross_rows(*answer) and mistake.hint in capsys.readouterr().out
    assert not nb02.check_cross_rows(6, 4) and nb02.CROSS_ROWS.otherwise in capsys.readouterr().out
    for wrong in [("5", "4"), (5.5, 4), (True, 4), ([5], [4])]:
        assert not nb02.check_cross_rows(*wrong) and "should" not in capsys.readouterr().out


CHECKS = [
    nb02.check_qkv_layers,
    nb02.check_qkv_by_hand,
    nb02.check_same_q_prediction,
    nb02.check_toy_query,
    lambda x: nb02.check_cross_rows(x, x),
]


def test_unanswered_prints_one_line_each_and_gives_nothing_away(capsys):
    for check in CHECKS:
        assert check(None) is False
    for fn in (lambda d: None, lambda X, layer: None):
        assert not (nb02.check_qkv_layers if fn.__code__.co_argcount == 1 else nb02.check_qkv_by_hand)(fn)
    out = capsys.readouterr().out
    assert out.count(NOT_ANSWERED) == len(out.splitlines()) == 7
    assert "2.5" not in out and "5 rows" not in out and "weight.T" not in out and "True:" not in out


@pytest.mark.parametrize("wrong", [3, "X @ W", [1.0, 2.0], {"w": 1}, "True", ("5", "4")])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, capsys):
    for check in CHECKS:
        assert check(wrong) is False
        out = capsys.readouterr().out
        assert out.startswith(NOT_YET) and out.count("\n") == 1, out


def test_the_notebooks_worked_solutions_pass(model, capsys):
    """Exec each Solution block of notebook 02 with the names the notebook defines before it."""
    X = torch.tensor([[0.1, 0.0, 0.0, 0.9], [0.6, 0.0, 0.9, 0.0], [0.9, 0.1, 0.0, 0.0]])
    ns = {"torch": torch, "nn": torch.nn, "X": X, "TOY_WQ": TOY_WQ, "one_hot": one_hot, "model": model}
    ns.update(run_with_trace=run_with_trace, **{n: getattr(nb02, n) for n in dir(nb02) if n.startswith("check_")})
    blocks = solution_blocks("02_qkv_linear_layers.ipynb")
    assert len(blocks) == 3
    for code in blocks:
        exec(code, ns)
    out = capsys.readouterr().out
    assert out.count("✅") >= 4 and "❌" not in out


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
