"""Checkers for notebook 04 (multi-head attention)."""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import nn

from course_utils.core.attention import MultiHeadAttention
from course_utils.exercises.framework import Exercise, Mistake, check_true_false, feedback, like, not_answered

B, D_MODEL, H = 2, 64, 8  # exercise 2 (batch size, d_model) and exercise 3 (H)
SHAPES_B, SHAPES_T, SHAPES_H = 3, 7, 16  # exercise 1: not a case that the notebook's shape table shows


def check_head_shapes(q_heads_shape, scores_shape, concat_shape) -> bool:
    """Exercise 1: shapes for B = 3 sentences of T = 7 words, d_model = 64, H = 16 heads.
    Used in notebook 04 (its Exercises section)."""
    b, t, h = SHAPES_B, SHAPES_T, SHAPES_H
    dh = D_MODEL // h
    want = {"q after the split": (b, h, t, dh), "scores": (b, h, t, t), "concat": (b, t, D_MODEL)}
    if q_heads_shape is None and scores_shape is None and concat_shape is None:
        return not_answered("fill in q_heads_shape, scores_shape and concat_shape (tuples of ints), then re-run.")
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
    if name == "q after the split" and got[name] == (b, t, h, dh):
        return feedback(
            False,
            "",
            f"q after the split: {got[name]} is q after the view, before the transpose; the exercise asks for q once"
            " the heads axis is moved in front of the positions.",
        )
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
    Used in notebook 04 §2."""
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
    return check_true_false(
        heads_attend_alike,
        alike,
        "set heads_attend_alike to True or False in the cell above the heatmaps, then re-run.",
        f"read the two heatmaps row by row: {counts}.",
        f"{counts}. Claim F5 below measures this on the whole corpus.",
    )


def check_one_head_worse(one_head_translates_worse, two_heads_better: dict) -> bool:
    """Predict before you look (Claim F7): does the 1-head model translate worse than the 2-head one?

    two_heads_better: {seed: the 2-head model scores higher (train + held-out exact match)}; "worse" = on most seeds.
    Used in notebook 04 (the prediction in its main line, checked under the Claim F7 table)."""
    worse = [s for s, v in two_heads_better.items() if v]
    answer = len(worse) > len(two_heads_better) / 2
    counts = f"the 1-head model scores lower on {len(worse)} of {len(two_heads_better)} seeds"
    return check_true_false(
        one_head_translates_worse,
        answer,
        "set one_head_translates_worse to True or False in the cell above the table, then re-run.",
        f"look at the table: {counts}.",
        f"{counts}.",
    )


# Exercise 2's three cases: (what the case is, n_heads, Tq, Tk, mask kind). Section 1 shows only the first kind
# (self-attention, no mask); the other two need notebook 03's mask and a key length of its own.
MH_CASES = (
    ("self-attention, no mask", 2, 5, 5, None),
    ("self-attention with a causal mask", 4, 5, 5, "causal"),
    ("cross-attention (Tq = 4, Tk = 6) with a padding mask", 4, 4, 6, "padding"),
)


def _case_inputs(tq, tk, mask_kind):
    """x_q (B, Tq, d_model), x_kv (B, Tk, d_model) and the mask (True = may attend) of one checker case."""
    g = torch.Generator().manual_seed(4)
    x_q = torch.randn(B, tq, D_MODEL, generator=g)
    x_kv = x_q if tq == tk and mask_kind != "padding" else torch.randn(B, tk, D_MODEL, generator=g)
    if mask_kind == "causal":
        mask = torch.ones(tq, tk, dtype=torch.bool).tril()  # (Tq, Tk)
    elif mask_kind == "padding":
        lengths = torch.tensor([tk, tk - 2])  # sentence 2 ends in 2 padding slots
        mask = (torch.arange(tk)[None, :] < lengths[:, None])[:, None, None, :]  # (B, 1, 1, Tk)
    else:
        mask = None
    return x_q, x_kv, mask


def _reference_variants(x_q, x_kv, lin, n_heads, mask):
    """The typical mistakes' outputs for the same weights and inputs: {name: (B, Tq, d_model)}.

    A mistake that cannot even run on these inputs is left out (the learner's version would raise).
    """
    W_q, W_k, W_v, W_o = lin
    B_, Tq, d = x_q.shape
    dh = d // n_heads

    def split(t):  # (B, T, d) -> (B, H, T, dh)
        return t.view(B_, t.shape[1], n_heads, dh).transpose(1, 2)

    def merge(t):  # (B, H, T, dh) -> (B, T, d)
        return t.transpose(1, 2).reshape(B_, t.shape[2], d)

    def softmax(scores, how="right"):
        if mask is None or how == "ignored":
            return torch.softmax(scores, dim=-1)
        if how == "inverted":  # PyTorch's nn.MultiheadAttention convention (True = may NOT attend), -1e9 for -inf
            return torch.softmax(scores.masked_fill(mask, -1e9), dim=-1)
        if how == "zero":
            return torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)
        if how == "after":
            return torch.softmax(scores, dim=-1) * mask
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)

    def attend(q, k, v, scale, how="right"):
        return softmax(q @ k.transpose(-2, -1) / scale, how) @ v

    q, k, v = W_q(x_q), W_k(x_kv), W_v(x_kv)
    qh, kh, vh = split(q), split(k), split(v)
    recipes = {
        "one head": lambda: W_o(attend(q, k, v, math.sqrt(d))),
        "one head, √dh": lambda: W_o(attend(q, k, v, math.sqrt(dh))),
        "reshape without transpose": lambda: W_o(
            attend(*(t.reshape(B_, n_heads, t.shape[1], dh) for t in (q, k, v)), math.sqrt(dh)).reshape(B_, Tq, d)
        ),
        "split without transpose": lambda: W_o(  # (B, T, H, dh): attends over heads, not positions
            attend(*(t.view(B_, t.shape[1], n_heads, dh) for t in (q, k, v)), math.sqrt(dh)).reshape(B_, Tq, d)
        ),
        "√d_model": lambda: W_o(merge(attend(qh, kh, vh, math.sqrt(d)))),
        "no scaling": lambda: W_o(merge(attend(qh, kh, vh, 1.0))),
        "no W^O": lambda: merge(attend(qh, kh, vh, math.sqrt(dh))),
        "merge without transpose": lambda: W_o(attend(qh, kh, vh, math.sqrt(dh)).reshape(B_, Tq, d)),
        "heads reversed": lambda: W_o(merge(attend(qh, kh, vh, math.sqrt(dh)).flip(1))),
        "weight not transposed": lambda: (
            merge(
                attend(
                    *(split(t @ W.weight + W.bias) for t, W in ((x_q, W_q), (x_kv, W_k), (x_kv, W_v))), math.sqrt(dh)
                )
            )
            @ W_o.weight
            + W_o.bias
        ),
    }
    if mask is not None:
        for how, name in (
            ("ignored", "mask ignored"),
            ("inverted", "mask inverted"),
            ("zero", "masked scores set to 0"),
            ("after", "mask after the softmax"),
        ):
            recipes[name] = lambda how=how: W_o(merge(attend(qh, kh, vh, math.sqrt(dh), how)))
    out = {}
    for name, recipe in recipes.items():
        try:
            out[name] = recipe()
        except RuntimeError:  # e.g. a mask that does not broadcast to a wrongly split shape
            pass
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
    "mask ignored": "the output is the one without a mask: give the scores where mask is False the value −∞ "
    "before the softmax (notebook 03).",
    "mask inverted": "the mask is read the wrong way round: in the course True means *may* attend, so fill −∞ where "
    "~mask (PyTorch's nn.MultiheadAttention uses the opposite convention, section 4).",
    "masked scores set to 0": "a score of 0 still gets weight e⁰ = 1 in the softmax: masked scores must be −∞.",
    "mask after the softmax": "zeroing weights after the softmax leaves rows that no longer sum to 1: mask the scores "
    "(−∞) before the softmax.",
}


_READY_MADE = (  # Exercise 2 asks for the steps written out: these do the whole attention (or a head of it)
    "course_utils",
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
    "MultiheadAttention",
    "MultiHeadAttention",
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
)


def _mh_cases():
    cases = []
    for case, n_heads, tq, tk, mask_kind in MH_CASES:
        x_q, x_kv, mask = _case_inputs(tq, tk, mask_kind)
        with torch.random.fork_rng():  # seeded weights, without touching the learner's random state
            torch.manual_seed(n_heads + tk)
            lin = [nn.Linear(D_MODEL, D_MODEL) for _ in range(4)]
        cases.append((case, (x_q, x_kv, *lin, n_heads, mask)))
    return cases


def _course_mha(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    """The course's MultiHeadAttention given the case's four layers' weights: the reference."""
    with torch.random.fork_rng(), torch.no_grad():
        mha = MultiHeadAttention(D_MODEL, n_heads).eval()
        for mine, theirs in zip((W_q, W_k, W_v, W_o), (mha.w_q, mha.w_k, mha.w_v, mha.w_o)):
            theirs.weight.copy_(mine.weight)
            theirs.bias.copy_(mine.bias)
        return mha(x_q, x_kv, x_kv, mask)[0]


def _variant(name, x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    """A typical mistake as a learner's function; where it cannot happen (a mask mistake with no mask), the right one."""
    with torch.no_grad():
        variants = _reference_variants(x_q, x_kv, (W_q, W_k, W_v, W_o), n_heads, mask)
    return variants[name] if name in variants else _course_mha(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask)


def _mh_error(exc, args) -> str | None:
    tq, tk = args[0].shape[1], args[1].shape[1]
    if tq == tk:
        return None
    return (
        f"cross-attention: my_multi_head raised {type(exc).__name__}. Here Tq = {tq} ≠ Tk = {tk}: the queries come "
        "from x_q, the keys and values from x_kv; split each with its own length (t.shape[1])."
    )


MULTI_HEAD = Exercise(
    name="my_multi_head",
    todo="write the body of my_multi_head (it still raises NotImplementedError or returns None), then re-run.",
    success="your multi-head attention equals MultiHeadAttention's output: no mask (2 heads), causal mask and "
    "cross-attention with padding (4 heads).",
    reference=_course_mha,
    cases=_mh_cases,
    mistakes=(
        *(Mistake(hint, gives=functools.partial(_variant, name)) for name, hint in _HINTS.items()),
        Mistake(
            "your output has NaN — some query has every key masked (−∞ everywhere, 0/0). In the course True means "
            "*may* attend: fill −∞ where ~mask.",
            when=lambda got, *args: got.isnan().any(),
        ),
    ),
    otherwise="the shape is right but the numbers differ from MultiHeadAttention's: project (queries from x_q, keys "
    "and values from x_kv), split into heads (B, H, T, dh), softmax(q kᵀ / √dh) with −∞ where the mask is False, "
    "times v, put the heads side by side again (B, Tq, d_model), then W_o.",
    returns="the output tensor (B, Tq, d_model), one row per query position of x_q",
    forbid=_READY_MADE,
    forbid_hint="it does the attention for you; write the steps yourself with the four layers, tensor operations and "
    "torch.softmax: project, split into heads, masked softmax(q kᵀ / √dh) @ v, join, W_o.",
    convert=lambda got, want: like(got[0] if isinstance(got, tuple) and len(got) == 2 else got, want),
    atol=1e-5,
    on_error=_mh_error,
)


def check_multi_head(fn) -> bool:
    """Exercise 2: fn(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None) -> multi-head attention output
    (B, Tq, d_model), queries from x_q, keys and values from x_kv, mask True = may attend (broadcastable to
    (B, H, Tq, Tk)), from four nn.Linear(d_model, d_model) layers; compared with the course's MultiHeadAttention given
    the same weights on MH_CASES. Written out: the course's attention code and torch's attention functions and
    layers are refused, read in the source (one static check).
    Used in notebook 04 (its Exercises section)."""
    return MULTI_HEAD.check(fn)


def check_mha_parameters(n_params, grows_with_heads) -> bool:
    """Exercise 3: parameters of MultiHeadAttention(64, H) (weights and biases of W^Q, W^K, W^V, W^O),
    and whether that number grows with H.
    Used in notebook 04 (its Exercises section)."""
    want = sum(p.numel() for p in MultiHeadAttention(D_MODEL, H).parameters())  # 4 * (64*64 + 64)
    if n_params is None and grows_with_heads is None:
        return not_answered("fill in n_params (a whole number) and grows_with_heads (True or False), then re-run.")
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
    if not isinstance(grows_with_heads, (bool, np.bool_)) or grows_with_heads:
        return feedback(
            False, "", "the count is right, but does it change with H? Compare MultiHeadAttention(64, 1) and (64, 8)."
        )
    return feedback(
        True, f"{want} parameters for any number of heads: heads slice the same matrices, they add none.", ""
    )
