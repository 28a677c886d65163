"""Checkers for notebook 02 (Q, K and V are three linear layers)."""

from __future__ import annotations

import torch
from torch import nn

from course_utils.core.precision import DTYPE
from course_utils.core.toys import TOY_VOCAB, TOY_WQ
from course_utils.exercises.framework import Exercise, Mistake, check_true_false, feedback, uses, whole


def _three_linears(got, want):
    layers = tuple(got)
    if len(layers) != 3 or not all(isinstance(layer, nn.Linear) for layer in layers):
        raise TypeError("not three nn.Linear layers")
    return layers


_LAYER_MISTAKES = (
    Mistake(
        "that is one layer used three times: Q, K and V need three layers with their own weights.",
        when=lambda got, d: got[0] is got[1] or got[1] is got[2] or got[0] is got[2],
    ),
    Mistake(
        "each layer reads d_model numbers and gives d_model: use the argument d_model, not a fixed number.",
        when=lambda got, d: any((layer.in_features, layer.out_features) != (d, d) for layer in got),
    ),
    Mistake(
        "the course's layers have a bias (nn.Linear's default); keep bias=True.",
        when=lambda got, d: any(layer.bias is None for layer in got),
    ),
    Mistake(
        "two layers start with the same weights: create each one on its own.",
        when=lambda got, d: torch.equal(got[0].weight, got[1].weight) or torch.equal(got[1].weight, got[2].weight),
    ),
)
QKV_LAYERS = Exercise(
    name="my_qkv_layers",
    todo="write the body of my_qkv_layers(d_model), then re-run the cell.",
    success="three separate nn.Linear(d_model, d_model) layers with bias, as in the course model.",
    reference=lambda d: (nn.Linear(d, d, device="meta"),) * 3,  # only its sizes are compared
    cases=[(f"d_model = {d}", (d,)) for d in (4, 6)],
    mistakes=_LAYER_MISTAKES,
    returns="three torch.nn.Linear layers, w_q, w_k, w_v",
    convert=_three_linears,
    compare=lambda got, want: not any(m.when(got, want[0].in_features) for m in _LAYER_MISTAKES),
)


def check_qkv_layers(make_layers) -> bool:
    """Exercise 1a: `make_layers(d_model)` returns three nn.Linear layers (w_q, w_k, w_v), each d_model -> d_model
    with a bias, as the course model's attention has them (course_utils.attention.MultiHeadAttention).
    Used in notebook 02 §1 (its exercise)."""
    return QKV_LAYERS.check(make_layers)


_BY_HAND = "compute it by hand from layer.weight and layer.bias, with one matrix product, @."


class _LayerCalled(Exception):
    pass


class _RefusingLinear(nn.Linear):
    """The cases' layer: running it (layer(X), layer.forward(X)) raises, since Exercise 1b is done by hand."""

    def forward(self, x):
        raise _LayerCalled


def _by_hand_cases():
    g = torch.Generator().manual_seed(12)
    X = torch.randn(3, 4, generator=g)
    cases = []
    for d_out in (4, 3):  # a square layer (where the untransposed weight still runs) and a 4 -> 3 layer
        layer = _RefusingLinear(4, d_out)
        with torch.no_grad():
            layer.weight.copy_(torch.randn(d_out, 4, generator=g))
            layer.bias.copy_(torch.randn(d_out, generator=g))
        cases.append((f"a 4 -> {d_out} layer", (X, layer)))
    return cases


def _by_hand_error(exc, args) -> str | None:
    if isinstance(exc, _LayerCalled):
        return "my_project calls the layer itself; " + _BY_HAND
    if isinstance(exc, RuntimeError) and any(w in str(exc) for w in ("shape", "mat1", "size")):
        return "the shapes do not fit for a 4 -> 3 layer: weight is stored as (out, in), so multiply by its transpose, weight.T."
    return None


BY_HAND = Exercise(
    name="my_project",
    todo="write the body of my_project(X, layer), then re-run the cell.",
    success="my_project(X, layer) = layer(X), for a square and for a 4 -> 3 layer.",
    reference=lambda X, layer: nn.functional.linear(X, layer.weight, layer.bias),
    cases=_by_hand_cases,
    mistakes=(
        Mistake(
            "weight is stored as (out, in): use X @ layer.weight.T, not X @ layer.weight.",
            gives=lambda X, layer: X @ layer.weight + layer.bias,
        ),
        Mistake("almost: nn.Linear also adds its bias.", gives=lambda X, layer: X @ layer.weight.T),
    ),
    otherwise="compare with layer(X): it computes X @ weight.T + bias.",
    returns="a tensor, one row per word",
    forbid=("linear", "forward"),
    forbid_hint="F.linear (or the layer's forward) does the layer's work; " + _BY_HAND,
    atol=1e-5,
    on_error=_by_hand_error,
)


def check_qkv_by_hand(project) -> bool:
    """Exercise 1b: `project(X, layer)` computes what `layer(X)` computes, from layer.weight and layer.bias only:
    X @ weight.T + bias. Tried on a square layer and a 4 -> 3 layer. By hand: a function that calls the layer
    (its cases' layers refuse to run), uses F.linear or a forward, or loops in Python is refused.
    Used in notebook 02 §1 (its exercise)."""
    loop = uses(project, ("for",)) if callable(project) else None
    if loop:
        return feedback(False, "", f"my_project has {loop}; use one matrix product, @, for all rows.")
    return BY_HAND.check(project)


def check_same_q_prediction(prediction) -> bool:
    """Predict before you look: is the layer-0 query of 'eat' exactly the same in 'we want to eat apple' and in
    'we want to eat bread'? (Yes: W^Q reads one word's vector at a time.)
    Used in notebook 02 §2 (its exercise)."""
    return check_true_false(
        prediction,
        True,
        "set my_prediction (the cell above) to True or False, then re-run this cell.",
        "you predicted different, the cell says the same: W^Q reads each word's own vector (word + position), "
        "one row at a time, so the other words cannot change it.",
        "right: a linear layer reads one word's vector at a time, so 'eat' has the same query.",
    )


def _vector(got, want):
    if isinstance(got, (str, bytes)) or (isinstance(got, (list, tuple)) and any(isinstance(x, str) for x in got)):
        raise TypeError("text")
    return torch.as_tensor(got, dtype=want.dtype).reshape(-1)


_EAT, _READ = TOY_WQ[TOY_VOCAB.index("eat")], TOY_WQ[TOY_VOCAB.index("read")]
TOY_QUERY = Exercise(
    todo="set my_toy_query to a vector of 3 numbers, then re-run.",
    success=f"{[round(v, 2) for v in (0.25 * _EAT + 0.75 * _READ).tolist()]}: a weighted mix of two rows of W^Q.",
    reference=(0.25 * _EAT + 0.75 * _READ).to(DTYPE),
    mistakes=(
        Mistake("that is the query of 'read' alone; x mixes 'eat' (0.25) and 'read' (0.75).", gives=_READ.to(DTYPE)),
    ),
    otherwise="x · W^Q = 0.25 · (row of 'eat') + 0.75 · (row of 'read').",
    returns="a vector of 3 numbers",
    convert=_vector,
    atol=1e-4,
)


def check_toy_query(query) -> bool:
    """Exercise 2: the toy query of x = 0.25·one_hot('eat') + 0.75·one_hot('read'), i.e. x · TOY_WQ.
    Used in notebook 02 (its More exercises section)."""
    return TOY_QUERY.check(query)


CROSS_ROWS = Exercise(
    todo="give two whole numbers, the rows of Q and of K, then re-run.",
    success="Q: 5 rows (<bos> ich kann brot essen ask); K: 4 rows (i can eat bread answer).",
    reference=(5, 4),
    mistakes=(
        Mistake("swapped: in cross-attention the queries come from the German side, keys from the English.", (4, 5)),
        Mistake("the decoder reads <bos> before the German words: count it as a query row.", gives=(4, 4)),
        Mistake(
            "Q and K come from different sentences here: count each side on its own.", when=lambda got: got[0] == got[1]
        ),
    ),
    otherwise="Q: one row per decoder input token (<bos> + German words); K: one per English word.",
    returns="two whole numbers, the rows of Q and the rows of K",
    convert=lambda got, want: (whole(got[0]), whole(got[1])),
)


def check_cross_rows(n_queries, n_keys) -> bool:
    """Exercise 3: in the cross-attention for 'i can eat bread' (decoder input '<bos> ich kann brot essen'), how many
    rows do Q and K have? Q: one per decoder position (5); K: one per English word (4).
    Used in notebook 02 (its More exercises section)."""
    return CROSS_ROWS.check(None if n_queries is None or n_keys is None else (n_queries, n_keys))
