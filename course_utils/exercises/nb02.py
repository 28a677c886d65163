"""Checkers for notebook 02 (Q, K and V are three linear layers)."""

from __future__ import annotations

import torch
from torch import nn

from course_utils.exercises.framework import Exercise, Mistake, like, whole

_LAYER_MISTAKES = (
    Mistake("that is one layer three times: Q, K and V each need their own.", when=lambda g, d: len(set(g)) < 3),
    Mistake("use the argument d_model, not a number.", when=lambda g, d: any(x.weight.shape != (d, d) for x in g)),
    Mistake("keep nn.Linear's bias (bias=True).", when=lambda g, d: any(x.bias is None for x in g)),
    Mistake(
        "two layers start with the same weights: create each one on its own.",
        when=lambda g, d: any(torch.equal(a.weight, b.weight) for a, b in zip(g, g[1:])),
    ),
)
QKV_LAYERS = Exercise(  # Exercise 1a: my_qkv_layers(d_model) -> w_q, w_k, w_v, as in the course model's attention
    name="my_qkv_layers",
    success="three separate nn.Linear(d_model, d_model) layers with bias, as in the course model.",
    reference=lambda d: (nn.Linear(d, d, device="meta"),) * 3,  # only its sizes are compared
    cases=[(f"d_model = {d}", (d,)) for d in (4, 6)],
    mistakes=_LAYER_MISTAKES,
    returns="three torch.nn.Linear layers, w_q, w_k, w_v",
    convert=lambda got, want: like(got if all(isinstance(x, nn.Linear) for x in got) else (), want),  # 3 layers
    compare=lambda got, want: not any(m.when(got, want[0].in_features) for m in _LAYER_MISTAKES),
)
check_qkv_layers = QKV_LAYERS.check

_Called = type("_Called", (Exception,), {})


class _ByHand(nn.Linear):  # the cases' layer: Exercise 1b is done by hand, so running the layer raises
    def forward(self, x):
        raise _Called


with torch.random.fork_rng():  # a square layer (where the untransposed weight still runs) and a 4 -> 3 layer
    torch.manual_seed(12)
    _X, _LAYERS = torch.randn(3, 4), (_ByHand(4, 4), _ByHand(4, 3))


def _by_hand_error(exc, args) -> str | None:
    if isinstance(exc, _Called):
        return "my_project calls the layer itself: compute X @ layer.weight.T + layer.bias by hand."
    if any(word in str(exc) for word in ("shape", "mat1", "size")):
        return "the shapes do not fit a 4 -> 3 layer: weight is stored as (out, in), so use weight.T."
    return None


BY_HAND = Exercise(  # Exercise 1b: my_project(X, layer) = layer(X), from layer.weight and layer.bias, with @
    name="my_project",
    success="my_project(X, layer) = layer(X), for a square and for a 4 -> 3 layer.",
    reference=lambda X, layer: nn.functional.linear(X, layer.weight, layer.bias),
    cases=[(f"a 4 -> {layer.out_features} layer", (_X, layer)) for layer in _LAYERS],
    mistakes=(
        Mistake("weight is stored as (out, in): use layer.weight.T.", lambda X, layer: X @ layer.weight + layer.bias),
        Mistake("almost: nn.Linear also adds its bias.", gives=lambda X, layer: X @ layer.weight.T),
    ),
    otherwise="compare with layer(X): it computes X @ weight.T + bias.",
    returns="a tensor, one row per word",
    forbid=("linear", "forward", "for"),
    forbid_hint="compute it by hand, one matrix product for all rows: X @ layer.weight.T + layer.bias.",
    atol=1e-5,
    on_error=_by_hand_error,
)
check_qkv_by_hand = BY_HAND.check

SAME_Q = Exercise(  # Predict: is layer 0's query of 'eat' the same in 'we want to eat apple' and 'they ... bread'? Yes
    todo="set my_prediction (the cell above) to True or False, then re-run this cell.",
    success="right: a linear layer reads one word's vector at a time, so 'eat' has the same query.",
    reference=True,
    otherwise="not so: W^Q reads each word's own vector (word + position), one row at a time, so the query is the same.",
)
check_same_q_prediction = SAME_Q.check

SHARPNESS = Exercise(  # Exercise 2: W^Q reads 'action' times 1, not 3: scores 1, 0, 0, want's weight on i e / (e + 2)
    todo="set my_weight_on_i to one number, then re-run.",
    success="0.576 = e / (e + 2): scores 1, 0, 0 lie closer together than 3, 0, 0, so the weights are softer.",
    reference=torch.e / (torch.e + 2),
    mistakes=(
        Mistake("that is the weight with the factor 3: divide W_Q by 3 first.", torch.e**3 / (torch.e**3 + 2)),
        Mistake("that is the weight on each other word; the question asks for i, word 0.", 1 / (torch.e + 2)),
        Mistake("a softmax never gives one key all the weight: compute it with soft_lookup.", 1.0),
    ),
    otherwise="with the factor 1 the scores are 1, 0, 0: compute the weights with soft_lookup.",
    returns="one number",
    atol=1e-3,
)
check_sharpness = SHARPNESS.check

CROSS_ROWS = Exercise(  # Exercise 3: rows of Q (<bos> ich kann brot essen) and K (i can eat bread) in cross-attention
    todo="give two whole numbers, the rows of Q and of K, then re-run.",
    success="Q: 5 rows (<bos> ich kann brot essen ask); K: 4 rows (i can eat bread answer).",
    reference=(5, 4),
    mistakes=(
        Mistake("swapped: in cross-attention the queries come from the German side, keys from the English.", (4, 5)),
        Mistake("the decoder reads <bos> before the German words: count it as a query row.", gives=(4, 4)),
        Mistake("Q and K come from different sentences here: count each side on its own.", when=lambda g: g[0] == g[1]),
    ),
    otherwise="Q: one row per decoder input token (<bos> + German words); K: one per English word.",
    returns="two whole numbers, the rows of Q and the rows of K",
    convert=lambda got, want: (whole(got[0]), whole(got[1])),
)


def check_cross_rows(n_queries, n_keys) -> bool:
    """Exercise 3: the rows of Q and of K in the cross-attention of 'i can eat bread' (5 and 4). Used in notebook 02 (its More exercises section)."""
    return CROSS_ROWS.check(None if n_queries is None or n_keys is None else (n_queries, n_keys))
