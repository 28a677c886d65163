"""Checkers for notebook 04 (multi-head attention)."""

from __future__ import annotations

import math
from functools import partial

import torch
from torch import nn

from course_utils.core.attention import MultiHeadAttention
from course_utils.exercises.framework import Exercise, Mistake, output_of, whole
from course_utils.exercises.nb03 import masked_weights

B, D_MODEL, H = 2, 64, 8  # exercise 2 (batch size, d_model) and exercise 3 (H)
SHAPES = ((3, 16, 7, 4), (3, 16, 7, 7), (3, 7, 64))  # exercise 1, B = 3, T = 7, H = 16: not in the notebook's table
HEAD_SHAPES = Exercise(
    todo="fill in q_heads_shape, scores_shape and concat_shape (tuples of ints), then re-run.",
    success=f"q {SHAPES[0]}, scores {SHAPES[1]}, concat {SHAPES[2]}.",
    reference=SHAPES,
    mistakes=(
        Mistake("q: that is q after the view, before the transpose.", when=lambda g: g[0] == (3, 7, 16, 4)),
        Mistake("q after the split: heads come before positions, (B, H, T, dh).", when=lambda g: g[0] != SHAPES[0]),
        Mistake("scores: one T×T score matrix per sentence and per head.", when=lambda g: g[1] != SHAPES[1]),
    ),
    otherwise="concat: H heads of dh features side by side give back d_model features per position.",
    returns="three shapes, tuples of ints such as (1, 2, 5, 32)",
    convert=lambda got, want: tuple(tuple(whole(n) for n in shape) for shape in got),
)


def check_head_shapes(q_heads_shape, scores_shape, concat_shape) -> bool:
    """Exercise 1: shapes for B = 3 sentences of T = 7 words, d_model = 64, H = 16 heads. Used in notebook 04."""
    shapes = (q_heads_shape, scores_shape, concat_shape)
    return HEAD_SHAPES.check(None if all(s is None for s in shapes) else shapes)


def check_prediction(guess, truth: bool, name: str, why: str) -> bool:
    """A True/False prediction: ✍ until `name` is set, then ✅ or ❌ with `why`. Used in notebook 04 (§4, §8)."""
    spec = Exercise(why, bool(truth), todo=f"set {name} to True or False in its cell, then re-run.", otherwise=why)
    return spec.check(guess)


MH_CASES = (  # exercise 2: (case, n_heads, Tq, Tk, mask kind); section 1 shows only the first kind
    ("self-attention, no mask", 2, 5, 5, None),
    ("self-attention with a causal mask", 4, 5, 5, "causal"),
    ("cross-attention (Tq = 4, Tk = 6) with a padding mask", 4, 4, 6, "padding"),
)


def _mh_cases():  # (case, (x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask)) for MH_CASES, seeded
    cases, g = [], torch.Generator().manual_seed(4)
    for case, n_heads, tq, tk, kind in MH_CASES:
        x_q = torch.randn(B, tq, D_MODEL, generator=g)
        x_kv = x_q if kind != "padding" else torch.randn(B, tk, D_MODEL, generator=g)
        padding = (torch.arange(tk)[None, :] < torch.tensor([tk, tk - 2])[:, None])[:, None, None, :]  # (B,1,1,Tk)
        mask = {"causal": torch.ones(tq, tk, dtype=torch.bool).tril(), "padding": padding}.get(kind)
        with torch.random.fork_rng():  # seeded weights, without touching the learner's random state
            torch.manual_seed(n_heads + tk)
            cases.append((case, (x_q, x_kv, *(nn.Linear(D_MODEL, D_MODEL) for _ in range(4)), n_heads, mask)))
    return cases


def _course_mha(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # the reference: the course's, these weights
    with torch.random.fork_rng(), torch.no_grad():
        mha = MultiHeadAttention(D_MODEL, n_heads).eval()
        for mine, theirs in zip((W_q, W_k, W_v, W_o), (mha.w_q, mha.w_k, mha.w_v, mha.w_o)):
            theirs.load_state_dict(mine.state_dict())
        return mha(x_q, x_kv, x_kv, mask)[0]


def mha_steps(x_q, x_kv, *case, one=0, div="dh", split="view", merge=1, w_o=1, flip=0, w_t=1, **masking):
    """Multi-head attention written out; a keyword off its default is a typical mistake. Used in notebook 04 (ex. 2)."""
    *layers, n_heads, mask = case  # the four layers, n_heads, the mask
    b, tq, d = x_q.shape
    h, dh = (1, d) if one else (n_heads, d // n_heads)
    lin = [lambda x, W=W: x @ (W.weight.T if w_t else W.weight) + W.bias for W in layers]

    def heads(x):  # (B, T, d) -> (B, H, T, dh); the mistakes reshape straight there, or keep (B, T, H, dh)
        x = x.reshape(b, h, -1, dh) if split == "reshape" else x.view(b, -1, h, dh)
        return x.transpose(1, 2) if split == "view" else x

    q, k, v = (heads(f(x)) for f, x in zip(lin, (x_q, x_kv, x_kv)))
    scores = q @ k.transpose(-2, -1) / {"dh": math.sqrt(d // n_heads), "d": math.sqrt(d), 1: 1}[div]
    weights = masked_weights(scores, mask, **masking)  # masking: masked_weights' keywords for a masking mistake
    out = (weights @ v).flip(1) if flip else weights @ v
    out = (out.transpose(1, 2) if merge and split == "view" else out).reshape(b, tq, d)
    return lin[3](out) if w_o else out


_MH_MISTAKES = (  # mha_steps' keyword arguments for a typical mistake, and its hint
    (dict(one=1, div="d"), "this is one head over all d_model features: cut q, k and v into n_heads slices of dh."),
    (dict(one=1), "the heads are never split: cut q, k and v into n_heads slices of dh = d_model // n_heads."),
    (dict(split="reshape", merge=0), "reshaping straight to (B, H, T, dh) mixes positions into heads."),
    (dict(split="heads"), "with (B, T, H, dh) each position attends over the heads: transpose(1, 2) first."),
    (dict(div="d"), "each head's scores are divided by √dh (its own width), not by √d_model."),
    (dict(div=1), "divide the scores by √dh before the softmax."),
    (dict(w_o=0), "after concatenating the heads, W^O mixes them: apply W_o to the concatenation."),
    (dict(merge=0), "transpose(1, 2) back to (B, T, H, dh) before reshaping to (B, T, d_model)."),
    (dict(flip=1), "the heads are concatenated in the wrong order: head 0's dh features come first."),
    (dict(w_t=0), "an nn.Linear stores its weight as (out, in): call the layer, W_q(x)."),
    (dict(hide=None), "the mask is not used: give the scores where mask is False the value −∞."),
    (
        dict(hide="m", fill=-1e9),
        "in the course True means *may* attend: fill −∞ where ~mask (torch's is the opposite).",
    ),
    (dict(fill=0.0), "a score of 0 still gets weight e⁰ = 1 in the softmax: masked scores must be −∞."),
    (dict(after=True), "zeroing weights after the softmax leaves rows that do not sum to 1: mask the scores."),
)
_READY_MADE = ("course_utils", "scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention")
_READY_MADE += ("MultiHeadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder")
_READY_MADE += ("TransformerEncoderLayer", "TransformerDecoderLayer")


def _mh_error(exc, args) -> str | None:
    tq, tk = args[0].shape[1], args[1].shape[1]
    return None if tq == tk else f"cross-attention (Tq = {tq}, Tk = {tk}): split keys and values with x_kv's length."


MULTI_HEAD = Exercise(  # Exercise 2: my_multi_head(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None)
    name="my_multi_head",
    success="your multi-head attention equals MultiHeadAttention's: no mask, a causal mask, cross-attention with padding.",
    reference=_course_mha,
    cases=_mh_cases,
    mistakes=(
        *(Mistake(hint, gives=partial(mha_steps, **kw)) for kw, hint in _MH_MISTAKES),
        Mistake("NaN: a query has every key masked; True means *may* attend.", when=lambda got, *a: got.isnan().any()),
    ),
    otherwise="the numbers differ: project, split into heads, masked softmax(q kᵀ / √dh) @ v, heads side by side, W_o.",
    returns="the output tensor (B, Tq, d_model), one row per query position of x_q",
    forbid=_READY_MADE,
    forbid_hint="it does the attention for you; write the steps yourself with the four layers and torch.softmax.",
    convert=output_of,
    atol=1e-5,
    on_error=_mh_error,
)
check_multi_head = MULTI_HEAD.check

_MHA = 4 * (D_MODEL * D_MODEL + D_MODEL)  # W^Q, W^K, W^V, W^O with their biases, for any H
MHA_PARAMETERS = Exercise(  # Exercise 3: the parameters of MultiHeadAttention(64, 8); do they grow with H?
    todo="fill in n_params (a whole number) and grows_with_heads (True or False), then re-run.",
    success=f"{_MHA} parameters for any number of heads: heads slice the same matrices, they add none.",
    reference=(_MHA, False),
    mistakes=(
        Mistake("close: each nn.Linear also has a bias of d_model.", when=lambda g: g[0] == 4 * D_MODEL**2),
        Mistake("count W^Q, W^K, W^V, W^O: each d_model × d_model plus a bias.", when=lambda g: g[0] != _MHA),
    ),
    otherwise="the count is right, but does it change with H? Compare MultiHeadAttention(64, 1) and (64, 8).",
    returns="a whole number and True or False",
)


def check_mha_parameters(n_params, grows_with_heads) -> bool:
    """Exercise 3: parameters of MultiHeadAttention(64, 8), and whether that number grows with H. Used in notebook 04."""
    return MHA_PARAMETERS.check(None if (answer := (n_params, grows_with_heads)) == (None, None) else answer)
