"""Checkers for notebook 02 (Q, K and V are three linear layers)."""

from __future__ import annotations

import torch

from course_utils.core.precision import DTYPE
from course_utils.core.toys import TOY_VOCAB, TOY_WQ
from course_utils.exercises import calls_to, check_true_false, feedback, not_answered, python_loops


def _layers(result):
    try:
        layers = tuple(result)
    except TypeError:
        return None
    return layers if len(layers) == 3 else None


def check_qkv_layers(make_layers) -> bool:
    """Exercise 1a: `make_layers(d_model)` returns three nn.Linear layers (w_q, w_k, w_v), each d_model -> d_model
    with a bias, as the course model's attention has them (course_utils.attention.MultiHeadAttention).
    Used in notebook 02 §1 (its exercise)."""
    if make_layers is None:
        return not_answered("write the body of my_qkv_layers(d_model), then re-run the cell.")
    if not callable(make_layers):
        return feedback(
            False,
            "",
            f"pass the function itself, check_qkv_layers(my_qkv_layers), not a value of type {type(make_layers).__name__}.",
        )
    for d_model in (4, 6):
        try:
            layers = make_layers(d_model)
        except NotImplementedError:
            return not_answered("replace `raise NotImplementedError` with your code.")
        except Exception as err:  # the learner's code: say what it raised
            return feedback(False, "", f"my_qkv_layers({d_model}) raised {type(err).__name__}: {err}")
        layers = _layers(layers)
        if layers is None:
            return feedback(False, "", "return three layers: w_q, w_k, w_v.")
        if not all(isinstance(layer, torch.nn.Linear) for layer in layers):
            return feedback(False, "", "each of the three should be a torch.nn.Linear layer.")
        if layers[0] is layers[1] or layers[1] is layers[2] or layers[0] is layers[2]:
            return feedback(
                False, "", "that is one layer used three times: Q, K and V need three layers with their own weights."
            )
        sizes = [(layer.in_features, layer.out_features) for layer in layers]
        if any(size != (d_model, d_model) for size in sizes):
            return feedback(
                False,
                "",
                f"with d_model = {d_model} each layer reads {d_model} numbers and gives {d_model}: "
                f"got (in, out) = {sizes}; use the argument d_model, not a fixed number.",
            )
        if any(layer.bias is None for layer in layers):
            return feedback(False, "", "the course's layers have a bias (nn.Linear's default); keep bias=True.")
        if torch.equal(layers[0].weight, layers[1].weight) or torch.equal(layers[1].weight, layers[2].weight):
            return feedback(False, "", "two layers start with the same weights: create each one on its own.")
    return feedback(True, "three separate nn.Linear(d_model, d_model) layers with bias, as in the course model.", "")


_BY_HAND = "{what}; compute it by hand from layer.weight and layer.bias, with one matrix product, @."


_LAYER_WORK = (torch.nn.functional.linear, torch.nn.Linear.forward, torch.nn.Module.__call__)


def _layer_work(obj) -> bool:
    return any(obj is f for f in _LAYER_WORK)


class _WatchedLinear(torch.nn.Linear):
    """An nn.Linear that notes when it is run: layer(X), layer.forward(X) and nn.Linear.forward(layer, X) all are."""

    called = False

    def forward(self, x):
        self.called = True
        return super().forward(x)


def check_qkv_by_hand(project) -> bool:
    """Exercise 1b: `project(X, layer)` computes what `layer(X)` computes, from layer.weight and layer.bias only:
    X @ weight.T + bias. Tried on a square layer (where the untransposed weight still runs) and a 4 -> 3 layer.
    By hand: a function that calls the layer (layer(X), layer.forward), F.linear, or loops in Python is refused.
    Used in notebook 02 §1 (its exercise)."""
    if project is None:
        return not_answered("write the body of my_project(X, layer), then re-run the cell.")
    if not callable(project):
        return feedback(
            False,
            "",
            f"pass the function itself, check_qkv_by_hand(my_project), not a value of type {type(project).__name__}.",
        )
    if _layer_work(project) or calls_to(project, _layer_work):
        return feedback(False, "", _BY_HAND.format(what="F.linear (or the layer's forward) does the layer's work"))
    loops = python_loops(project)
    if loops:
        return feedback(False, "", f"my_project has a Python {loops[0]}; use one matrix product, @, for all rows.")
    g = torch.Generator().manual_seed(12)
    X = torch.randn(3, 4, generator=g)
    for d_out in (4, 3):
        layer = _WatchedLinear(4, d_out)
        with torch.no_grad():
            layer.weight.copy_(torch.randn(d_out, 4, generator=g))
            layer.bias.copy_(torch.randn(d_out, generator=g))
        want = torch.nn.functional.linear(X, layer.weight, layer.bias).detach()
        try:
            with torch.no_grad():
                got = project(X, layer)
                if layer.called:
                    return feedback(False, "", _BY_HAND.format(what="my_project calls the layer itself"))
        except NotImplementedError:
            return not_answered("replace `raise NotImplementedError` with your code.")
        except RuntimeError as err:
            if "shape" in str(err) or "mat1" in str(err) or "size" in str(err):
                return feedback(
                    False,
                    "",
                    "the shapes do not fit for a 4 -> 3 layer: weight is stored as (out, in), so multiply by its "
                    "transpose, weight.T.",
                )
            return feedback(False, "", f"my_project raised RuntimeError: {err}")
        except Exception as err:  # the learner's code: say what it raised
            return feedback(False, "", f"my_project raised {type(err).__name__}: {err}")
        try:
            got = torch.as_tensor(got, dtype=DTYPE).detach()
        except (TypeError, ValueError, RuntimeError):
            return feedback(False, "", "return a tensor, one row per word.")
        w, b = layer.weight.detach(), layer.bias.detach()
        if got.shape != want.shape:
            return feedback(
                False,
                "",
                f"for X {tuple(X.shape)} and a 4 -> {d_out} layer the result is {tuple(want.shape)}; got {tuple(got.shape)}.",
            )
        if torch.allclose(got, want, atol=1e-5):
            continue
        if d_out == 4 and torch.allclose(got, X @ w + b, atol=1e-5):
            return feedback(False, "", "weight is stored as (out, in): use X @ layer.weight.T, not X @ layer.weight.")
        if torch.allclose(got, X @ w.T, atol=1e-5):
            return feedback(False, "", "almost: nn.Linear also adds its bias.")
        return feedback(False, "", "compare with layer(X): it computes X @ weight.T + bias.")
    return feedback(True, "my_project(X, layer) = layer(X), for a square and for a 4 -> 3 layer.", "")


SAME_Q = (  # check_same_q_prediction: not answered, wrong, right
    "set my_prediction (the cell above) to True or False, then re-run this cell.",
    "you predicted different, the cell says the same: W^Q reads each word's own vector (word + position), "
    "one row at a time, so the other words cannot change it.",
    "right: a linear layer reads one word's vector at a time, so 'eat' has the same query.",
)


def check_same_q_prediction(prediction) -> bool:
    """Predict before you look: is the layer-0 query of 'eat' exactly the same in 'we want to eat apple' and in
    'we want to eat bread'? (Yes: W^Q reads one word's vector at a time.)
    Used in notebook 02 §2 (its exercise)."""
    return check_true_false(prediction, True, *SAME_Q)


def check_toy_query(query) -> bool:
    """Exercise 2: the toy query of x = 0.25·one_hot('eat') + 0.75·one_hot('read'), i.e. x · TOY_WQ.
    Used in notebook 02 (its More exercises section)."""
    expected = 0.25 * TOY_WQ[TOY_VOCAB.index("eat")] + 0.75 * TOY_WQ[TOY_VOCAB.index("read")]
    if query is None:
        return not_answered("set my_toy_query to a vector of 3 numbers, then re-run.")
    try:
        q = torch.as_tensor(query, dtype=DTYPE).reshape(-1)
    except (TypeError, ValueError, RuntimeError):
        return feedback(False, "", "give a vector of 3 numbers.")
    if q.shape != expected.shape:
        return feedback(False, "", f"x · W^Q has one entry per column of W^Q: 3 numbers (got {tuple(q.shape)}).")
    if torch.allclose(q, TOY_WQ[TOY_VOCAB.index("read")]):
        return feedback(False, "", "that is the query of 'read' alone; x mixes 'eat' (0.25) and 'read' (0.75).")
    if not torch.allclose(q, expected, atol=1e-4):
        return feedback(False, "", "x · W^Q = 0.25 · (row of 'eat') + 0.75 · (row of 'read').")
    return feedback(True, f"{[round(v, 2) for v in expected.tolist()]}: a weighted mix of two rows of W^Q.", "")


def _whole(x) -> int | None:
    """x as an int when it is a whole number (5, 5.0, a 0-d tensor); None for a string, a bool, 4.5, a list..."""
    if isinstance(x, (str, bytes, bool)):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError, RuntimeError):
        return None
    return int(v) if v.is_integer() else None


def check_cross_rows(n_queries, n_keys) -> bool:
    """Exercise 3: in the cross-attention for 'i can eat bread' (decoder input '<bos> ich kann brot essen'), how many
    rows do Q and K have? Q: one per decoder position (5); K: one per English word (4).
    Used in notebook 02 (its More exercises section)."""
    if n_queries is None or n_keys is None:
        return not_answered("give two whole numbers, the rows of Q and of K, then re-run.")
    q, k = _whole(n_queries), _whole(n_keys)
    if q is None or k is None:
        return feedback(False, "", "give two whole numbers: the rows of Q and the rows of K.")
    if (q, k) == (5, 4):
        return feedback(True, "Q: 5 rows (<bos> ich kann brot essen ask); K: 4 rows (i can eat bread answer).", "")
    if (q, k) == (4, 5):
        return feedback(
            False, "", "swapped: in cross-attention the queries come from the German side, keys from the English."
        )
    if (q, k) == (4, 4):
        return feedback(False, "", "the decoder reads <bos> before the German words: count it as a query row.")
    if q == k:
        return feedback(False, "", "Q and K come from different sentences here: count each side on its own.")
    return feedback(False, "", "Q: one row per decoder input token (<bos> + German words); K: one per English word.")
