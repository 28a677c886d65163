"""Checkers for notebook 02 (Q, K and V are just linear layers)."""

from __future__ import annotations

import torch

from ..projections import TOY_VOCAB, TOY_WQ, qkv_of_sentence
from . import feedback

HEAD_QUERY_SENTENCE, HEAD_QUERY_WORD, HEAD_QUERY_HEAD = "we want to eat apple", "apple", 1


def _shape(x):
    try:
        return tuple(int(d) for d in x)
    except (TypeError, ValueError):
        return None


def check_cross_shapes(q_shape, k_shape) -> bool:
    """Exercise 1: shapes (H, T, dh) of decoder.0.cross.q and decoder.0.cross.k for
    'i can eat bread' -> decoder input '<bos> ich kann brot essen' (2 heads, dh = 32)."""
    q, k = _shape(q_shape), _shape(k_shape)
    expected_q, expected_k = (2, 5, 32), (2, 4, 32)
    if q is None or k is None:
        return feedback(False, "", "give two shapes as tuples, e.g. (2, 3, 32), (2, 3, 32).")
    if (q, k) == (expected_k, expected_q):
        return feedback(
            False, "", "swapped: in cross-attention the queries come from the German side, keys from the English."
        )
    if q == (2, 4, 32) and k == expected_k:
        return feedback(False, "", "the decoder reads <bos> before the German words: count it as a query position.")
    if len(q) != 3 or len(k) != 3 or q[0] != 2 or k[0] != 2 or q[2] != 32 or k[2] != 32:
        return feedback(False, "", "the shape is (heads, positions, dh) with 2 heads and dh = 64 // 2 = 32.")
    if (q, k) != (expected_q, expected_k):
        return feedback(
            False, "", "queries: one per decoder position (<bos> + German words); keys: one per English word."
        )
    return feedback(True, "q (2, 5, 32): five German positions ask; k (2, 4, 32): four English words answer.", "")


def check_toy_query(query) -> bool:
    """Exercise 2: the toy query of x = 0.25·one_hot('eat') + 0.75·one_hot('read'), i.e. x · TOY_WQ."""
    expected = 0.25 * TOY_WQ[TOY_VOCAB.index("eat")] + 0.75 * TOY_WQ[TOY_VOCAB.index("read")]
    try:
        q = torch.as_tensor(query, dtype=torch.float32).reshape(-1)
    except (TypeError, ValueError, RuntimeError):
        return feedback(False, "", "give a vector of 3 numbers.")
    if q.shape != expected.shape:
        return feedback(False, "", f"x · W^Q has one entry per column of W^Q: 3 numbers (got {tuple(q.shape)}).")
    if torch.allclose(q, TOY_WQ[TOY_VOCAB.index("read")]):
        return feedback(False, "", "that is the query of 'read' alone; x mixes 'eat' (0.25) and 'read' (0.75).")
    if not torch.allclose(q, expected, atol=1e-4):
        return feedback(False, "", "x · W^Q = 0.25 · (row of 'eat') + 0.75 · (row of 'read').")
    return feedback(True, f"{[round(v, 2) for v in expected.tolist()]}: a weighted mix of two rows of W^Q.", "")


def check_head_query(query, model) -> bool:
    """Exercise 3: q of 'apple' for head 1 in 'we want to eat apple' (encoder layer 0), computed from
    w_q.weight and w_q.bias by hand; shape (dh,)."""
    qkv, words = qkv_of_sentence(model, HEAD_QUERY_SENTENCE, 0)
    expected = qkv["q"][HEAD_QUERY_HEAD, words.index(HEAD_QUERY_WORD)]
    try:
        q = torch.as_tensor(query, dtype=torch.float32).detach().reshape(-1)
    except (TypeError, ValueError, RuntimeError):
        return feedback(False, "", "give the 32 numbers of the query as a tensor.")
    if q.shape != expected.shape:
        return feedback(False, "", f"one head's query has dh = {expected.numel()} numbers (got {tuple(q.shape)}).")
    tol = dict(atol=1e-4, rtol=1e-4)
    if torch.allclose(q, expected, **tol):
        return feedback(True, "that is exactly the traced head-1 query of 'apple'.", "")
    attn = model.encoder[0].self_attn
    dh, b = attn.d_head, attn.w_q.bias.detach()
    if torch.allclose(q, expected - b[dh : 2 * dh], **tol):
        return feedback(False, "", "almost: nn.Linear also adds its bias (the head's slice of w_q.bias).")
    other = qkv["q"][1 - HEAD_QUERY_HEAD, words.index(HEAD_QUERY_WORD)] if attn.n_heads == 2 else None
    if other is not None and torch.allclose(q, other, **tol):
        return feedback(False, "", "that is head 0; head 1 uses rows 32..63 of w_q.weight (= columns 32..63 of W^Q).")
    return feedback(
        False,
        "",
        "PyTorch computes x · weightᵀ + bias: head 1 is x @ w_q.weight[32:64].T + w_q.bias[32:64] "
        "(slicing columns of w_q.weight instead of rows is the usual mistake).",
    )
