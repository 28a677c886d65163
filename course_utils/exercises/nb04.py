"""Checkers for notebook 04 (multi-head attention)."""

from __future__ import annotations

import torch

from ..attention import MultiHeadAttention
from . import feedback

B, T, D_MODEL, H = 2, 5, 64, 8  # exercises 2 and 3
SHAPES_B, SHAPES_T, SHAPES_H = 3, 7, 16  # exercise 1: not a case that the notebook's shape table shows


def check_head_shapes(q_heads_shape, scores_shape, concat_shape) -> bool:
    """Exercise 1: shapes for B = 3 sentences of T = 7 words, d_model = 64, H = 16 heads."""
    b, t, h = SHAPES_B, SHAPES_T, SHAPES_H
    dh = D_MODEL // h
    want = {"q after the split": (b, h, t, dh), "scores": (b, h, t, t), "concat": (b, t, D_MODEL)}
    got = {}
    for name, shape in zip(want, (q_heads_shape, scores_shape, concat_shape)):
        try:
            got[name] = tuple(int(s) for s in shape)
        except (TypeError, ValueError):
            return feedback(False, "", f"give each shape as a tuple of ints, e.g. (1, 2, 5, 32); {name} is {shape!r}.")
    wrong = [n for n in want if got[n] != want[n]]
    if not wrong:
        return feedback(True, f"q {want['q after the split']}, scores {want['scores']}, concat {want['concat']}.", "")
    name = wrong[0]
    hint = {
        "q after the split": "heads come before positions: (B, H, T, dh) with dh = d_model // H.",
        "scores": "one T×T score matrix per sentence and per head.",
        "concat": "concatenating H heads of dh features gives back d_model features per position.",
    }[name]
    return feedback(False, "", f"{name}: {got[name]} is not right; {hint}")


def check_split_heads(fn) -> bool:
    """Exercise 2: fn(x (B, T, d_model), n_heads) -> (B, H, T, dh), the same as MultiHeadAttention.split_heads."""
    if fn is None or not callable(fn):
        return feedback(False, "", "define my_split_heads(x, n_heads) and pass the function itself.")
    g = torch.Generator().manual_seed(4)
    x = torch.randn(B, T, D_MODEL, generator=g)
    for h in (1, 2, 4, 8):
        want = MultiHeadAttention(D_MODEL, h).split_heads(x)
        try:
            got = fn(x, h)
        except Exception as exc:  # the learner's code may raise anything
            return feedback(False, "", f"my_split_heads(x, {h}) raised {type(exc).__name__}: {exc}")
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return feedback(False, "", f"with {h} heads the result should be {tuple(want.shape)}; got {shape}.")
        if not torch.equal(got, want):
            return feedback(
                False,
                "",
                f"with {h} heads the shape is right but the numbers are in the wrong places: "
                "view as (B, T, H, dh) first (each position's features cut into heads), then swap T and H.",
            )
    return feedback(True, "your split matches MultiHeadAttention.split_heads for 1, 2, 4 and 8 heads.", "")


def check_mha_parameters(n_params, grows_with_heads) -> bool:
    """Exercise 3: parameters of MultiHeadAttention(64, H) (weights and biases of W^Q, W^K, W^V, W^O),
    and whether that number grows with H."""
    want = sum(p.numel() for p in MultiHeadAttention(D_MODEL, H).parameters())  # 4 * (64*64 + 64)
    try:
        n = int(n_params)
    except (TypeError, ValueError):
        return feedback(False, "", f"n_params must be a whole number; got {n_params!r}.")
    if n == 4 * D_MODEL * D_MODEL:
        return feedback(False, "", "close: nn.Linear also has a bias of d_model numbers per layer.")
    if n != want:
        return feedback(
            False, "", "count W^Q, W^K, W^V and W^O: each is a d_model × d_model matrix plus a bias of d_model."
        )
    if not isinstance(grows_with_heads, bool) or grows_with_heads:
        return feedback(
            False, "", "the count is right, but does it change with H? Compare MultiHeadAttention(64, 1) and (64, 8)."
        )
    return feedback(
        True, f"{want} parameters for any number of heads: heads slice the same matrices, they add none.", ""
    )
