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
from course_utils.exercises import NOT_ANSWERED
from course_utils.exercises.nb02 import (
    check_cross_rows,
    check_qkv_by_hand,
    check_qkv_layers,
    check_same_q_prediction,
    check_toy_query,
)
from course_utils.measures.qkv import places_table, qkv_of_sentence, word_qkv
from course_utils.measures.weight_maps import head_banks, query_bank
from course_utils.trace.tracing import run_with_trace
from course_utils.training.zoo import load_standard_model
from course_utils.views.qkv import plot_word_qkv


@pytest.fixture(scope="module")
def model():
    return load_standard_model().model


# ---- exercise 1: three layers, and one of them by hand ----


def _solution_layers(d_model):
    return torch.nn.Linear(d_model, d_model), torch.nn.Linear(d_model, d_model), torch.nn.Linear(d_model, d_model)


def _solution_project(X, layer):
    return X @ layer.weight.T + layer.bias


def _unanswered(*args):
    raise NotImplementedError


def test_qkv_layers_solution_and_the_course_models_layers(model):
    assert check_qkv_layers(_solution_layers)
    attn = model.encoder[0].self_attn
    assert check_qkv_layers(lambda d: (attn.w_q, attn.w_k, attn.w_v) if d == 64 else _solution_layers(d))
    from course_utils.core.attention import MultiHeadAttention

    assert check_qkv_layers(lambda d: (lambda m: (m.w_q, m.w_k, m.w_v))(MultiHeadAttention(d, 2)))  # the course's own


def _shared(d):
    layer = torch.nn.Linear(d, d)
    return layer, layer, layer


def _same_start(d):
    torch.manual_seed(0)
    a = torch.nn.Linear(d, d)
    torch.manual_seed(0)
    b = torch.nn.Linear(d, d)
    return a, b, torch.nn.Linear(d, d)


@pytest.mark.parametrize(
    "make, hint",
    [
        (None, NOT_ANSWERED),
        (_unanswered, NOT_ANSWERED),
        (_shared, "one layer used three times"),
        (
            lambda d: (torch.nn.Linear(64, 64),) * 1 + (torch.nn.Linear(64, 64), torch.nn.Linear(64, 64)),
            "not a fixed number",
        ),
        (lambda d: (torch.nn.Linear(d, d // 2), torch.nn.Linear(d, d // 2), torch.nn.Linear(d, d // 2)), "reads"),
        (lambda d: tuple(torch.nn.Linear(d, d, bias=False) for _ in range(3)), "bias"),
        (lambda d: (torch.nn.Linear(d, d), torch.nn.Linear(d, d)), "three layers"),
        (lambda d: tuple(torch.randn(d, d) for _ in range(3)), "torch.nn.Linear"),
        (_same_start, "same weights"),
        (lambda d: 1 / 0, "ZeroDivisionError"),
    ],
)
def test_qkv_layers_rejects_typical_mistakes(make, hint, capsys):
    assert not check_qkv_layers(make)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED if hint == NOT_ANSWERED else "❌ Not yet: ") and hint in out


def test_qkv_by_hand_solution():
    assert check_qkv_by_hand(_solution_project)
    assert check_qkv_by_hand(lambda X, layer: torch.addmm(layer.bias, X, layer.weight.t()))


@pytest.mark.parametrize(
    "project, hint",
    [
        (None, NOT_ANSWERED),
        (_unanswered, NOT_ANSWERED),
        (lambda X, layer: X @ layer.weight + layer.bias, "X @ layer.weight.T"),  # the transposed-weight mistake
        (lambda X, layer: X @ layer.weight.T, "bias"),
        (lambda X, layer: (X @ layer.weight.T + layer.bias).T, "result is"),
        (lambda X, layer: X @ layer.weight.T - layer.bias, "compare with layer(X)"),
        (lambda X, layer: "q", "return a tensor"),
    ],
)
def test_qkv_by_hand_rejects_typical_mistakes(project, hint, capsys):
    assert not check_qkv_by_hand(project)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED if hint == NOT_ANSWERED else "❌ Not yet: ") and hint in out


def test_transposed_weight_fails_on_a_non_square_layer_too(capsys):
    """Only the 4 -> 3 layer can catch X @ weight (no .T) by its shape; the hint says why."""
    calls = []

    def project(X, layer):
        calls.append(layer.out_features)
        return _solution_project(X, layer) if layer.out_features == 4 else X @ layer.weight + layer.bias

    assert not check_qkv_by_hand(project) and calls == [4, 3]
    assert "weight.T" in capsys.readouterr().out


# ---- exercise 1b is by hand: the layer itself, F.linear and Python loops are refused ----


def _calls_the_layer(X, layer):
    return layer(X)


def _calls_forward(X, layer):
    return layer.forward(X)


def _calls_the_class_forward(X, layer):
    return torch.nn.Linear.forward(layer, X)


def _calls_f_linear(X, layer):
    return torch.nn.functional.linear(X, layer.weight, layer.bias)


def _loops_over_rows(X, layer):
    return torch.stack([layer.weight @ x + layer.bias for x in X])


@pytest.mark.parametrize(
    "project, said",
    [
        (_calls_the_layer, "my_project calls the layer itself"),
        (_calls_forward, "my_project calls the layer itself"),
        (_calls_the_class_forward, "F.linear (or the layer's forward)"),
        (_calls_f_linear, "F.linear (or the layer's forward)"),
        (torch.nn.functional.linear, "F.linear (or the layer's forward)"),
        (_loops_over_rows, "my_project has a Python comprehension"),
    ],
)
def test_qkv_by_hand_refuses_the_layer_doing_the_work(project, said, capsys):
    assert not check_qkv_by_hand(project)
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: " + said) and out.count("\n") == 1, out
    assert "by hand from layer.weight and layer.bias" in out or "one matrix product" in out


def _honest_with_a_name_like_the_shortcut(X, linear):  # a parameter or variable may be called anything
    weight, bias = linear.weight, linear.bias
    layer = X @ weight.t()
    return layer + bias


def test_qkv_by_hand_still_accepts_honest_solutions():
    assert check_qkv_by_hand(_solution_project) and check_qkv_by_hand(_honest_with_a_name_like_the_shortcut)


@pytest.mark.parametrize("wrong", [3, "X @ W", [1.0, 2.0], {"w": 1}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, capsys):
    checks = [
        lambda: check_qkv_layers(wrong),
        lambda: check_qkv_by_hand(wrong),
        lambda: check_same_q_prediction(wrong),
        lambda: check_toy_query(wrong),
        lambda: check_cross_rows(wrong, wrong),
    ]
    for check in checks:
        assert check() is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


def test_same_q_prediction(model, capsys):
    from course_utils.measures.qkv import layer_input

    a, b = (layer_input(model, s)[0][3] for s in ("we want to eat apple", "we want to eat bread"))
    truth = torch.equal(model.encoder[0].self_attn.w_q(a), model.encoder[0].self_attn.w_q(b))
    assert truth is True and check_same_q_prediction(truth)
    assert not check_same_q_prediction(False) and "one row at a time" in capsys.readouterr().out
    assert not check_same_q_prediction(None) and NOT_ANSWERED in capsys.readouterr().out
    assert not check_same_q_prediction("same") and "True or False" in capsys.readouterr().out


# ---- exercise 2: a mixed one-hot query ----


def test_toy_query_solution():
    answer = 0.25 * TOY_WQ[0] + 0.75 * TOY_WQ[2]
    assert torch.equal(answer, (0.25 * one_hot("eat") + 0.75 * one_hot("read")) @ TOY_WQ)
    assert check_toy_query(answer)
    assert check_toy_query([2.5, 0.0, 0.5])


@pytest.mark.parametrize("wrong", [TOY_WQ[2], 0.75 * TOY_WQ[0] + 0.25 * TOY_WQ[2], [2.5, 0.0], None, "q"])
def test_toy_query_wrong(wrong):
    assert not check_toy_query(wrong)


# ---- exercise 3: rows of Q and K in cross-attention ----


def test_cross_rows_solution_matches_the_real_trace(model):
    t = run_with_trace(model, "i can eat bread")
    assert t.translation == ["ich", "kann", "brot", "essen"]
    rows = t["decoder.0.cross.q_input"].shape[0], t["decoder.0.cross.k_input"].shape[0]
    assert rows == (5, 4) and check_cross_rows(*rows)


@pytest.mark.parametrize(
    "q, k, hint",
    [
        (4, 5, "swapped"),
        (4, 4, "<bos>"),
        (5, 5, "different sentences"),
        (6, 4, "one row per decoder input"),
        (None, None, NOT_ANSWERED),
        ("five", 4, "whole numbers"),
    ],
)
def test_cross_rows_wrong(q, k, hint, capsys):
    assert not check_cross_rows(q, k)
    assert hint in capsys.readouterr().out


def test_unanswered_messages_do_not_give_the_answer_away(capsys):
    for check in (check_qkv_layers, check_qkv_by_hand, check_same_q_prediction, check_toy_query):
        assert not check(None)
    assert not check_cross_rows(None, None)
    out = capsys.readouterr().out
    assert "2.5" not in out and "5 rows" not in out and "weight.T" not in out and "True:" not in out
    assert out.count(NOT_ANSWERED) == 5 and "❌" not in out


def test_the_notebooks_worked_solutions_pass(model, capsys):
    """Exec each Solution block of notebook 02 with the names the notebook defines before it."""
    from course_utils.core.toys import one_hot

    X = torch.tensor([[0.1, 0.0, 0.0, 0.9], [0.6, 0.0, 0.9, 0.0], [0.9, 0.1, 0.0, 0.0]])
    ns = {
        "torch": torch,
        "nn": torch.nn,
        "X": X,
        "TOY_WQ": TOY_WQ,
        "one_hot": one_hot,
        "model": model,
        "run_with_trace": run_with_trace,
        "check_qkv_layers": check_qkv_layers,
        "check_qkv_by_hand": check_qkv_by_hand,
        "check_toy_query": check_toy_query,
        "check_cross_rows": check_cross_rows,
    }
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


@pytest.mark.parametrize(
    "check, args",
    [
        (check_cross_rows, ("5", "4")),  # the right numbers, typed as strings
        (check_cross_rows, (5.5, 4)),
        (check_cross_rows, (True, 4)),
        (check_cross_rows, ([5], [4])),
        (check_toy_query, (["2.5", "0", "0.5"],)),
        (check_toy_query, ({"q1": 2.5},)),
        (check_same_q_prediction, ("True",)),
        (check_same_q_prediction, (1,)),
    ],
)
def test_a_right_answer_of_the_wrong_type_is_refused_with_one_line(check, args, capsys):
    assert check(*args) is False
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


@pytest.mark.parametrize("returned", [3, "Q, K, V", [1, 2, 3], {"q": 1, "k": 2, "v": 3}, None])
def test_the_learners_functions_returning_a_wrong_type_get_one_line(returned, capsys):
    assert check_qkv_layers(lambda d: returned) is False
    assert capsys.readouterr().out.startswith("❌ Not yet: ")
    if returned is not None:
        assert check_qkv_by_hand(lambda X, layer: returned) is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


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
