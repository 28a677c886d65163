"""Checkers for notebook 04 (multi-head attention)."""

from __future__ import annotations

import math

import torch
from torch import nn

from ..attention import MultiHeadAttention
from . import feedback

B, T, D_MODEL, H = 2, 5, 64, 8  # exercise 2 (B, T, d_model) and exercise 3 (H)
SHAPES_B, SHAPES_T, SHAPES_H = 3, 7, 16  # exercise 1: not a case that the notebook's shape table shows


def check_head_shapes(q_heads_shape, scores_shape, concat_shape) -> bool:
    """Exercise 1: shapes for B = 3 sentences of T = 7 words, d_model = 64, H = 16 heads."""
    b, t, h = SHAPES_B, SHAPES_T, SHAPES_H
    dh = D_MODEL // h
    want = {"q after the split": (b, h, t, dh), "scores": (b, h, t, t), "concat": (b, t, D_MODEL)}
    if q_heads_shape is None and scores_shape is None and concat_shape is None:
        return feedback(
            False, "", "fill in q_heads_shape, scores_shape and concat_shape (tuples of ints), then re-run."
        )
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


def check_heads_alike(heads_attend_alike, weights, tokens) -> bool:
    """Predict before you look (section 2): do the two heads of encoder layer 0 attend alike?

    weights: (H, T, T) one sentence's attention weights; tokens: its T words. "Alike" means that for most query
    words both heads put their largest weight on the same key word.
    """
    if heads_attend_alike is None:
        return feedback(
            False, "", "set heads_attend_alike to True or False in the cell above the heatmaps, then re-run."
        )
    if not isinstance(heads_attend_alike, bool):
        return feedback(False, "", f"answer True or False; got {heads_attend_alike!r}.")
    top = torch.as_tensor(weights).argmax(-1)  # (H, T): each head's strongest key word per query word
    same = [i for i in range(top.shape[1]) if bool((top[:, i] == top[0, i]).all())]
    differ = [i for i in range(top.shape[1]) if i not in same]
    alike = len(same) > top.shape[1] / 2
    example = ""
    if differ:
        i = differ[0]
        example = (
            f" (e.g. the row of '{tokens[i]}': "
            + ", ".join(f"head {h} → '{tokens[int(top[h, i])]}'" for h in range(top.shape[0]))
            + ")"
        )
    counts = f"the heads' strongest word is the same for {len(same)} of {top.shape[1]} query words{example}"
    if heads_attend_alike == alike:
        return feedback(True, f"{counts}. Claim F5 below measures this on the whole corpus.", "")
    return feedback(False, "", f"read the two heatmaps row by row: {counts}.")


def check_one_head_worse(one_head_translates_worse, two_heads_better: dict) -> bool:
    """Predict before you look (Claim F7): does the 1-head model translate worse than the 2-head one?

    two_heads_better: {seed: the 2-head model scores higher (train + held-out exact match)}; "worse" = on most seeds.
    """
    if one_head_translates_worse is None:
        return feedback(
            False, "", "set one_head_translates_worse to True or False in the cell above the table, then re-run."
        )
    if not isinstance(one_head_translates_worse, bool):
        return feedback(False, "", f"answer True or False; got {one_head_translates_worse!r}.")
    worse = [s for s, v in two_heads_better.items() if v]
    answer = len(worse) > len(two_heads_better) / 2
    counts = f"the 1-head model scores lower on {len(worse)} of {len(two_heads_better)} seeds"
    if one_head_translates_worse == answer:
        return feedback(True, f"{counts}.", "")
    return feedback(False, "", f"look at the table: {counts}.")


def _reference_variants(x, lin, n_heads):
    """The right multi-head output and the typical mistakes', for the same weights: {name: (B, T, d_model)}."""
    W_q, W_k, W_v, W_o = lin
    B, T, d = x.shape
    dh = d // n_heads

    def split(t):  # (B, T, d) -> (B, H, T, dh)
        return t.view(B, T, n_heads, dh).transpose(1, 2)

    def merge(t):  # (B, H, T, dh) -> (B, T, d)
        return t.transpose(1, 2).reshape(B, T, d)

    def attend(q, k, v, scale):
        return torch.softmax(q @ k.transpose(-2, -1) / scale, dim=-1) @ v

    q, k, v = W_q(x), W_k(x), W_v(x)
    qh, kh, vh = split(q), split(k), split(v)
    x1 = attend(qh, kh, vh, math.sqrt(dh))
    out = {}
    out["one head"] = W_o(attend(q, k, v, math.sqrt(d)))
    out["one head, √dh"] = W_o(attend(q, k, v, math.sqrt(dh)))
    bad_split = [t.reshape(B, n_heads, T, dh) for t in (q, k, v)]  # reshape without the transpose
    out["reshape without transpose"] = W_o(attend(*bad_split, math.sqrt(dh)).reshape(B, T, d))
    no_swap = [t.view(B, T, n_heads, dh) for t in (q, k, v)]  # (B, T, H, dh): attends over heads, not positions
    out["split without transpose"] = W_o(attend(*no_swap, math.sqrt(dh)).reshape(B, T, d))
    out["√d_model"] = W_o(merge(attend(qh, kh, vh, math.sqrt(d))))
    out["no scaling"] = W_o(merge(attend(qh, kh, vh, 1.0)))
    out["no W^O"] = merge(x1)
    out["merge without transpose"] = W_o(x1.reshape(B, T, d))
    out["heads reversed"] = W_o(merge(x1.flip(1)))
    untransposed = [x @ W.weight + W.bias for W in (W_q, W_k, W_v)]  # x @ weight: (out, in) used as (in, out)
    x1_u = attend(*(split(t) for t in untransposed), math.sqrt(dh))
    out["weight not transposed"] = merge(x1_u) @ W_o.weight + W_o.bias
    return out


_HINTS = {
    "one head": "this is one head over all d_model features: cut q, k and v into n_heads slices of dh = d_model // n_heads.",
    "one head, √dh": "the heads are never split: cut q, k and v into n_heads slices of dh = d_model // n_heads.",
    "reshape without transpose": "reshaping (B, T, d_model) straight to (B, H, T, dh) mixes positions into heads: "
    "view as (B, T, H, dh) first, then transpose(1, 2).",
    "split without transpose": "with (B, T, H, dh) each position attends over the heads, not over the positions: "
    "transpose(1, 2) so that the heads come first, (B, H, T, dh).",
    "√d_model": "each head's scores are divided by √dh (its own width), not by √d_model.",
    "no scaling": "divide the scores by √dh before the softmax.",
    "no W^O": "after concatenating the heads, W^O mixes them: apply W_o to the concatenation.",
    "merge without transpose": "x1 is (B, H, T, dh): transpose(1, 2) back to (B, T, H, dh) before reshaping to "
    "(B, T, d_model), otherwise positions and heads are mixed.",
    "heads reversed": "the heads are concatenated in the wrong order: head 0's dh features come first.",
    "weight not transposed": "an nn.Linear stores its weight as (out, in): call the layer, W_q(x), or use x @ W_q.weight.T + W_q.bias.",
}


def check_multi_head(fn) -> bool:
    """Exercise 2: fn(x, W_q, W_k, W_v, W_o, n_heads) -> self-attention output (B, T, d_model) with n_heads heads,
    from four nn.Linear(d_model, d_model) layers; compared with the course's MultiHeadAttention given the same weights."""
    if fn is None or not callable(fn):
        return feedback(False, "", "define my_multi_head(x, W_q, W_k, W_v, W_o, n_heads) and pass the function itself.")
    g = torch.Generator().manual_seed(4)
    x = torch.randn(B, T, D_MODEL, generator=g)
    for n_heads in (2, 4):
        with torch.random.fork_rng():  # seeded weights, without touching the learner's random state
            torch.manual_seed(n_heads)
            mha = MultiHeadAttention(D_MODEL, n_heads).eval()
            lin = [nn.Linear(D_MODEL, D_MODEL) for _ in range(4)]
        with torch.no_grad():
            for mine, theirs in zip(lin, (mha.w_q, mha.w_k, mha.w_v, mha.w_o)):
                theirs.weight.copy_(mine.weight)
                theirs.bias.copy_(mine.bias)
            want = mha(x, x, x)[0]
            variants = _reference_variants(x, lin, n_heads)
            try:
                got = fn(x.clone(), *lin, n_heads)
            except NotImplementedError:
                return feedback(
                    False,
                    "",
                    "write the body of my_multi_head (it still raises NotImplementedError), then re-run this cell.",
                )
            except Exception as exc:  # the learner's code may raise anything
                return feedback(False, "", f"my_multi_head(x, ..., {n_heads}) raised {type(exc).__name__}: {exc}")
        if got is None:
            return feedback(False, "", "write the body of my_multi_head (it returns None), then re-run this cell.")
        if isinstance(got, tuple) and len(got) == 2:
            got = got[0]  # (out, weights), like MultiHeadAttention: the output is what we compare
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return feedback(False, "", f"with {n_heads} heads the output should be {tuple(want.shape)}; got {shape}.")
        got = got.detach()
        if torch.allclose(got, want, atol=1e-5):
            continue
        for name, variant in variants.items():
            if variant.shape == got.shape and torch.allclose(got, variant, atol=1e-5):
                return feedback(False, "", f"with {n_heads} heads: {_HINTS[name]}")
        return feedback(
            False,
            "",
            f"with {n_heads} heads the shape is right but the numbers differ from MultiHeadAttention's: "
            "project with the three layers, split into heads (B, H, T, dh), softmax(q kᵀ / √dh) v per head, "
            "put the heads side by side again (B, T, d_model), then W_o.",
        )
    return feedback(True, "your multi-head attention equals MultiHeadAttention's output for 2 and 4 heads.", "")


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
