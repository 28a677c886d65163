"""Checkers for notebook 04 (multi-head attention)."""

from __future__ import annotations

import functools
import inspect
import math
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from course_utils.core.attention import MultiHeadAttention
from course_utils.exercises import calls_to, feedback, not_answered

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
    if heads_attend_alike is None:
        return not_answered("set heads_attend_alike to True or False in the cell above the heatmaps, then re-run.")
    if not isinstance(heads_attend_alike, (bool, np.bool_)):
        return feedback(False, "", f"answer True or False; got {heads_attend_alike!r}.")
    heads_attend_alike = bool(heads_attend_alike)
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
    Used in notebook 04 (the prediction in its main line, checked under the Claim F7 table)."""
    if one_head_translates_worse is None:
        return not_answered("set one_head_translates_worse to True or False in the cell above the table, then re-run.")
    if not isinstance(one_head_translates_worse, (bool, np.bool_)):
        return feedback(False, "", f"answer True or False; got {one_head_translates_worse!r}.")
    one_head_translates_worse = bool(one_head_translates_worse)
    worse = [s for s, v in two_heads_better.items() if v]
    answer = len(worse) > len(two_heads_better) / 2
    counts = f"the 1-head model scores lower on {len(worse)} of {len(two_heads_better)} seeds"
    if one_head_translates_worse == answer:
        return feedback(True, f"{counts}.", "")
    return feedback(False, "", f"look at the table: {counts}.")


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


# Exercise 2 asks for the steps written out: these do the whole attention (or a head of it) ready-made.
_TORCH_ATTENTION = (F.scaled_dot_product_attention, F.multi_head_attention_forward)
_TORCH_ATTENTION_LAYERS = (
    nn.MultiheadAttention,
    nn.Transformer,
    nn.TransformerEncoder,
    nn.TransformerDecoder,
    nn.TransformerEncoderLayer,
    nn.TransformerDecoderLayer,
)
_PLAIN_LAYERS = (nn.Linear, nn.Softmax, nn.Dropout, nn.Identity)  # what the steps themselves may call
_COURSE = Path(__file__).resolve().parents[1]  # course_utils/
_CHECKERS = Path(__file__).resolve().parent  # course_utils/exercises/: the checker's own code runs too


def _ready_made(obj) -> bool:
    """The course's own code (MultiHeadAttention, scaled_dot_product_attention, masked_softmax, anything of
    course_utils), torch's attention functions and layers, or another layer to hand the work to: what Exercise 2
    asks the learner to write without."""
    module = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
    if isinstance(module, str) and module.split(".")[0] == "course_utils":
        return True
    if any(obj is f for f in _TORCH_ATTENTION):
        return True
    if inspect.isclass(obj):
        return issubclass(obj, nn.Module) and not issubclass(obj, _PLAIN_LAYERS)
    return isinstance(obj, nn.Module) and not isinstance(obj, _PLAIN_LAYERS)


def _named(obj) -> str:
    if isinstance(obj, nn.Module):
        return f"a {type(obj).__name__} layer"
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__


@functools.lru_cache(maxsize=4096)
def _course_code(filename: str) -> bool:
    """Is this file course_utils code other than the checkers?"""
    path = Path(filename).resolve()
    return _COURSE in path.parents and _CHECKERS not in path.parents


@contextmanager
def _watch(allowed):
    """Note what runs inside: course_utils code, torch's attention functions, and any layer (nn.Module) other
    than `allowed` and the plain ones. Yields the list it fills, as names; catches aliases the source hides."""
    seen: list[str] = []
    torch_codes = {F.multi_head_attention_forward.__code__: "F.multi_head_attention_forward"}
    allowed_ids = {id(m) for m in allowed}

    def profile(frame, event, arg):
        if event == "c_call":
            if arg is F.scaled_dot_product_attention:
                seen.append("F.scaled_dot_product_attention")
            return
        if event != "call":
            return
        code = frame.f_code
        if code in torch_codes:
            seen.append(torch_codes[code])
            return
        if code.co_name == "forward":
            me = frame.f_locals.get("self")
            if isinstance(me, nn.Module) and id(me) not in allowed_ids and not isinstance(me, _PLAIN_LAYERS):
                seen.append(f"a {type(me).__name__} layer")
                return
        if _course_code(code.co_filename):
            seen.append(f"{code.co_name} (course_utils)")

    old = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(old)


_WRITE_IT = (
    "my_multi_head uses {what}, which does the attention for you; write the steps yourself with the four layers, "
    "tensor operations and torch.softmax: project, split into heads, masked softmax(q kᵀ / √dh) @ v, join, W_o."
)


def _refuse(used: str) -> bool:
    return feedback(False, "", _WRITE_IT.format(what=used))


def check_multi_head(fn) -> bool:
    """Exercise 2: fn(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None) -> multi-head attention output
    (B, Tq, d_model), queries from x_q, keys and values from x_kv, mask True = may attend (broadcastable to
    (B, H, Tq, Tk)), from four nn.Linear(d_model, d_model) layers; compared with the course's MultiHeadAttention given
    the same weights on MH_CASES. Written out: the course's attention code, torch's attention functions
    (F.scaled_dot_product_attention, F.multi_head_attention_forward) and handing the work to a layer
    (nn.MultiheadAttention, a MultiHeadAttention, any nn.Module but the four layers and the plain ones) are refused,
    read in the source and watched while it runs.
    Used in notebook 04 (its Exercises section)."""
    if fn is None or not callable(fn):
        got = "" if fn is None else f", not a value of type {type(fn).__name__}"
        return feedback(
            False,
            "",
            f"define my_multi_head(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None) and pass the function itself{got}.",
        )
    if _ready_made(fn):
        return _refuse(_named(fn))
    used = calls_to(fn, _ready_made)
    if used:
        return _refuse(used[0])
    for case, n_heads, tq, tk, mask_kind in MH_CASES:
        x_q, x_kv, mask = _case_inputs(tq, tk, mask_kind)
        with torch.random.fork_rng():  # seeded weights, without touching the learner's random state
            torch.manual_seed(n_heads + tk)
            mha = MultiHeadAttention(D_MODEL, n_heads).eval()
            lin = [nn.Linear(D_MODEL, D_MODEL) for _ in range(4)]
        with torch.no_grad():
            for mine, theirs in zip(lin, (mha.w_q, mha.w_k, mha.w_v, mha.w_o)):
                theirs.weight.copy_(mine.weight)
                theirs.bias.copy_(mine.bias)
            want = mha(x_q, x_kv, x_kv, mask)[0]
            variants = _reference_variants(x_q, x_kv, lin, n_heads, mask)
            mine_q = x_q.clone()
            mine_kv = mine_q if x_kv is x_q else x_kv.clone()  # self-attention: the same tensor twice, as in the model
            try:
                with _watch(lin) as ran:
                    got = (
                        fn(mine_q, mine_kv, *lin, n_heads) if mask is None else fn(mine_q, mine_kv, *lin, n_heads, mask)
                    )
            except NotImplementedError:
                return not_answered(
                    "write the body of my_multi_head (it still raises NotImplementedError), then re-run this cell."
                )
            except Exception as exc:  # the learner's code may raise anything
                hint = ""
                if tq != tk:
                    hint = (
                        f" Here Tq = {tq} ≠ Tk = {tk}: the queries come from x_q, the keys and values from x_kv;"
                        " split each with its own length (t.shape[1])."
                    )
                return feedback(False, "", f"{case}: my_multi_head raised {type(exc).__name__}: {exc}.{hint}")
        if ran:
            return _refuse(ran[0])
        if got is None:
            return not_answered("write the body of my_multi_head (it returns None), then re-run this cell.")
        if isinstance(got, tuple) and len(got) == 2:
            got = got[0]  # (out, weights), like MultiHeadAttention: the output is what we compare
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return feedback(
                False,
                "",
                f"{case}: the output should be {tuple(want.shape)}, one row per query position of x_q; got {shape}.",
            )
        got = got.detach()
        if torch.allclose(got, want, atol=1e-5):
            continue
        if torch.isnan(got).any():
            return feedback(
                False,
                "",
                f"{case}: your output has NaN — some query has every key masked (−∞ everywhere, 0/0). In the course "
                "True means *may* attend: fill −∞ where ~mask.",
            )
        for name, variant in variants.items():
            if variant.shape == got.shape and torch.allclose(got, variant, atol=1e-5):
                return feedback(False, "", f"{case}: {_HINTS[name]}")
        return feedback(
            False,
            "",
            f"{case}: the shape is right but the numbers differ from MultiHeadAttention's: project (queries from "
            "x_q, keys and values from x_kv), split into heads (B, H, T, dh), softmax(q kᵀ / √dh) with −∞ where the "
            "mask is False, times v, put the heads side by side again (B, Tq, d_model), then W_o.",
        )
    return feedback(
        True,
        "your multi-head attention equals MultiHeadAttention's output: no mask (2 heads), causal mask and "
        "cross-attention with padding (4 heads).",
        "",
    )


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
