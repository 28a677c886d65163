"""Notebook 02's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍
(the helpers of measures/qkv.py and measures/weight_maps.py are tested in tests/test_qkv.py)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import pytest
import torch
from notebook_cells import solution_blocks  # tests/ is on sys.path under pytest

from course_utils.exercises import nb02
from course_utils.exercises.framework import NOT_ANSWERED, NOT_YET, learner
from course_utils.trace.tracing import run_with_trace
from course_utils.training.zoo import load_standard_model


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
        (lambda X, layer: layer.forward(X), "my_project uses forward: compute it by hand"),
        (lambda X, layer: torch.nn.Linear.forward(layer, X), "my_project uses forward"),
        (lambda X, layer: torch.nn.functional.linear(X, layer.weight, layer.bias), "my_project uses linear"),
        (torch.nn.functional.linear, "my_project uses linear"),
        (lambda X, layer: torch.stack([layer.weight @ x + layer.bias for x in X]), "uses a Python loop"),
        (lambda X, layer: "q", "should return a tensor"),
    ]:
        assert not nb02.check_qkv_by_hand(project)
        out = capsys.readouterr().out
        assert out.startswith(NOT_YET) and said in out and out.count("\n") == 1, out


def test_same_q_prediction(model, capsys):
    from course_utils.measures.qkv import layer_input

    a, b = (layer_input(model, s)[0][3] for s in ("we want to eat apple", "they want to eat bread"))
    truth = torch.equal(model.encoder[0].self_attn.w_q(a), model.encoder[0].self_attn.w_q(b))
    assert truth is True and nb02.check_same_q_prediction(truth)
    assert not nb02.check_same_q_prediction(False) and "one row at a time" in capsys.readouterr().out


def _toy():  # the notebook's toy: i want apples; W^Q reads action x 3, W^K person, W^V many
    X = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    W_Q, W_K, W_V = (
        torch.tensor([[0.0], [0.0], [3.0]]),
        torch.tensor([[1.0], [0.0], [0.0]]),
        torch.tensor([[0.0], [1.0], [0.0]]),
    )

    def soft_lookup(q, K, V):
        weights = torch.softmax(K @ q, dim=0)
        return weights @ V, K @ q, weights

    return {"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "soft_lookup": soft_lookup}


def test_sharpness(capsys):
    toy = _toy()
    weights = toy["soft_lookup"](toy["X"][1] @ (toy["W_Q"] / 3), toy["X"] @ toy["W_K"], toy["X"] @ toy["W_V"])[2]
    assert nb02.check_sharpness(weights[0]) and nb02.check_sharpness(0.576) and nb02.check_sharpness(weights[0].item())
    for mistake in nb02.SHARPNESS.mistakes:
        assert not nb02.check_sharpness(mistake.gives) and mistake.hint in capsys.readouterr().out
    assert not nb02.check_sharpness(1 / 3) and nb02.SHARPNESS.otherwise in capsys.readouterr().out
    for wrong in ("0.576", [0.576, 0.212]):
        assert not nb02.check_sharpness(wrong) and "one number" in capsys.readouterr().out


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
    nb02.check_sharpness,
    lambda x: nb02.check_cross_rows(x, x),
]


def test_unanswered_prints_one_line_each_and_gives_nothing_away(capsys):
    for check in CHECKS:
        assert check(None) is False
    for fn in (lambda d: None, lambda X, layer: None):
        assert not (nb02.check_qkv_layers if fn.__code__.co_argcount == 1 else nb02.check_qkv_by_hand)(fn)
    out = capsys.readouterr().out
    assert out.count(NOT_ANSWERED) == len(out.splitlines()) == 7
    assert "0.576" not in out and "5 rows" not in out and "weight.T" not in out and "True:" not in out


def test_the_notebooks_worked_solutions_pass(model, capsys):
    """Exec each Solution block of notebook 02 with the names the notebook defines before it."""
    ns = {"torch": torch, "nn": torch.nn, "model": model, **_toy()}
    ns.update(run_with_trace=run_with_trace, ex=nb02)
    blocks = solution_blocks("02_qkv_linear_layers.ipynb")
    assert len(blocks) == 3
    for code in blocks:
        exec(code, ns)
    out = capsys.readouterr().out
    assert out.count("✅") >= 4 and "❌" not in out
