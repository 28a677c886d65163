"""Checkers for notebook 03 (scaled dot-product attention, step by step)."""

import math
from functools import partial

import torch

from course_utils.core import masked_softmax, scaled_dot_product_attention, toy_embeddings
from course_utils.core.model import INITS  # the one list of initialisations
from course_utils.exercises.framework import Exercise, Mistake, check_choice, output_of

TOY_WORDS = ("i", "can", "eat", "apple")
_ONES = torch.ones(4, 4, dtype=torch.bool)
WINDOW_MASK = Exercise(  # Exercise 3: (4, 4) bool mask, True = may attend: each word sees itself and the word before
    todo="build window_mask, a (4, 4) bool tensor, then re-run this cell.",
    success="each word sees itself and its left neighbour: a causal window of width 2.",
    reference=_ONES.tril() & _ONES.triu(-1),
    mistakes=(
        Mistake("the opposite convention: in the course True means 'may attend'.", ~_ONES.tril() | ~_ONES.triu(-1)),
        Mistake("that is the full causal mask: word 3 would still see words 0 and 1.", gives=_ONES.tril()),
    ),
    otherwise="row i must be True exactly at columns i-1 and i (row 0: only column 0).",
    returns="a (4, 4) bool tensor (True = may attend)",
)
check_window_mask = WINDOW_MASK.check


def _cases():  # (case, q, k, v, mask): sizes that differ, so that a wrong axis or divisor shows; no row fully masked
    g = torch.Generator().manual_seed(3)
    padding = (torch.arange(5)[None, :] < torch.tensor([5, 3])[:, None])[:, None, None, :]  # (B, 1, 1, Tk)
    cross_pad = (torch.arange(6)[None, :] < torch.tensor([6, 4])[:, None])[:, None, :]  # (B, 1, Tk)
    r = lambda *shape: torch.randn(*shape, generator=g) * 2.0  # noqa: E731 - scores of a few units
    return [
        ("no mask", r(4, 6), r(4, 6), r(4, 3), None),
        ("causal mask", r(2, 3, 5, 6), r(2, 3, 5, 6), r(2, 3, 5, 3), torch.ones(5, 5, dtype=torch.bool).tril()),
        ("padding mask", r(2, 3, 5, 6), r(2, 3, 5, 6), r(2, 3, 5, 3), padding),
        ("padding mask, Tq ≠ Tk", r(2, 3, 8), r(2, 6, 8), r(2, 6, 2), cross_pad),
    ]


def masked_weights(s, m, dim=-1, hide="~m", fill=-math.inf, after=False):
    """The masked softmax of scores s; a keyword off its default is a typical mistake. Used in notebooks 03 and 04."""
    if m is not None and hide and not after:
        s = s.masked_fill(~m if hide == "~m" else m, fill)
    return torch.softmax(s, dim=dim) * (m if after and m is not None else 1)


def _attend(q, k, v, mask=None, power=0.5, **mistake):  # attention, the scores divided by d_k ** power
    return masked_weights(q @ k.transpose(-2, -1) / q.shape[-1] ** power, mask, **mistake) @ v


_SOFTMAX_MISTAKES = (  # masked_weights' keyword arguments for a typical mistake, and its hint
    (dict(dim=-2), "each query's row must sum to 1: take the softmax over the keys, the last axis (dim=-1)."),
    (dict(hide="m"), "the course's masks mean True = may attend: the False positions must get no weight."),
    (dict(fill=0.0), "a score of 0 still gets weight e⁰ = 1: a masked position needs the score −∞."),
    (dict(hide=None), "the mask is not used: masked positions still get weight."),
    (dict(after=True), "zeroing weights after the softmax leaves rows that sum to less than 1: mask the scores."),
)
_SCALE_MISTAKES = (
    (dict(power=0), "the scores are not scaled: divide q·kᵀ by √d_k, d_k = q.shape[-1]."),
    (dict(power=1), "the scores are divided by d_k; the divisor is its square root, √d_k."),
)
_NAN = Mistake("returns NaN: is a whole row masked, or inf − inf somewhere?", when=lambda g, *a: g.isnan().any())
_READY_MADE = ("course_utils", "masked_softmax", "scaled_dot_product_attention")
_AS_THE_COURSE = dict(otherwise="right shape, but the numbers differ from the course's.", forbid=_READY_MADE, atol=1e-5)
MASKED_SOFTMAX = Exercise(  # Exercise 1a: my_masked_softmax(scores, mask), softmax over the keys where mask is True
    name="my_masked_softmax",
    success="your masked softmax equals the course's, with no mask, a causal and padding masks.",
    reference=masked_softmax,
    cases=lambda: [(case, (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, m)) for case, q, k, _, m in _cases()],
    mistakes=(*(Mistake(hint, gives=partial(masked_weights, **kw)) for kw, hint in _SOFTMAX_MISTAKES), _NAN),
    returns="a tensor of weights, the shape of the scores",
    forbid_hint="a ready-made version; write the masking (masked_fill or torch.where) and the softmax yourself.",
    **_AS_THE_COURSE,  # otherwise, forbid, atol
)
check_masked_softmax = MASKED_SOFTMAX.check
ATTENTION = Exercise(  # Exercise 1b: my_attention(q, k, v, mask=None) -> out (or (out, weights))
    name="my_attention",
    success="your attention equals the course's scaled_dot_product_attention on every case.",
    reference=lambda q, k, v, mask: scaled_dot_product_attention(q, k, v, mask)[0],
    cases=lambda: [(case, (q, k, v, mask)) for case, q, k, v, mask in _cases()],
    mistakes=(*(Mistake(h, gives=partial(_attend, **kw)) for kw, h in _SOFTMAX_MISTAKES + _SCALE_MISTAKES), _NAN),
    returns="the output tensor (or (output, weights))",
    forbid_hint="a ready-made version; write the steps yourself: the scores, the masked softmax, weights @ v.",
    convert=output_of,
    **_AS_THE_COURSE,
)
check_attention = ATTENTION.check


def check_times_ten(prediction, before: float, after: float) -> bool:
    """Predict: with every score × 10, does eat's weight on apple (before, after) go up, down or stay? Used in notebook 03 §1."""
    truth = "same" if abs(after - before) < 1e-3 else ("up" if after > before else "down")
    why = f"eat → apple: {before:.3f} before, {after:.3f} after. × 10 widens the gaps between scores, and softmax normalises e^score, not the scores: e^x turns wider gaps into larger ratios."
    todo = 'set my_prediction_x10 to "up", "down" or "same", then re-run this cell.'
    return check_choice(prediction, truth, dict.fromkeys(("up", "down", "same"), why), todo=todo, success=why)


def check_causal_top(guess, weights_row, words) -> bool:
    """Predict: under the causal mask, which word gets eat's largest weight (the measured row)? Used in notebook 03 §6."""
    row = dict(zip(words, torch.as_tensor(weights_row).tolist()))
    numbers = "eat's row under the causal mask: " + ", ".join(f"{w} {x:.2f}" for w, x in row.items())
    hints = {w: f"the causal mask hides {w!r} ({numbers})." if x == 0 else numbers for w, x in row.items()}
    todo = "set my_causal_guess to one of the words eat may see, then re-run this cell."
    return check_choice(guess, max(row, key=row.get), hints, todo=todo, success=numbers + ".")


def toy_weights(W_Q, W_K, words=TOY_WORDS) -> torch.Tensor:
    """(T, T) attention weights of the toy sentence for 2×2 W_Q, W_K (Q = X W_Q, K = X W_K, scale √2). Used in notebook 03 (an exercise)."""
    X = toy_embeddings(words)
    W_Q, W_K = (torch.as_tensor(W, dtype=X.dtype) for W in (W_Q, W_K))
    if W_Q.shape != (2, 2) or W_K.shape != (2, 2):
        raise ValueError(f"W_Q and W_K must be 2×2; got {tuple(W_Q.shape)} and {tuple(W_K.shape)}")
    return torch.softmax((X @ W_Q) @ (X @ W_K).T / math.sqrt(2), dim=-1)


def _looks(w, a: str, b: str) -> bool:  # a's largest weight is on b, above 0.5
    i, j = TOY_WORDS.index(a), TOY_WORDS.index(b)
    return int(w[i].argmax()) == j and w[i, j].item() > 0.5


EAT_APPLE = Exercise(  # Exercise 2: 2×2 W_Q, W_K such that eat looks at apple and apple at eat, each above 0.5
    todo="fill in W_Q2 and W_K2 (2×2 tensors), then re-run this cell.",
    success="eat's largest weight is on apple and apple's on eat, each above 0.5.",
    reference=toy_weights(torch.tensor([[0.0, 2.0], [2.0, 0.0]]), 2 * torch.eye(2)),
    mistakes=(
        Mistake("apple looks at eat, eat not at apple: W^Q and W^K swapped?", when=lambda w: _looks(w, "apple", "eat")),
        Mistake("eat looks at apple, but apple does not look at eat yet.", when=lambda w: _looks(w, "eat", "apple")),
    ),
    otherwise="neither looks at the other yet: which feature should each word's query ask for?",
    returns="two 2×2 tensors of numbers, W_Q2 and W_K2",
    convert=lambda got, want: toy_weights(*got),
    compare=lambda w, want: _looks(w, "eat", "apple") and _looks(w, "apple", "eat"),
)


def check_eat_apple_pair(W_Q, W_K) -> bool:
    """Exercise 2: 2×2 W_Q, W_K such that eat looks at apple and apple at eat. Used in notebook 03 (its Exercises)."""
    return EAT_APPLE.check(None if W_Q is None or W_K is None else (W_Q, W_K))


def check_init_guess(guess, measured: dict) -> bool:
    """Predict: which init gives the larger layer-0 mean row max (`measured`: {init: value})? Used in notebook 03 §4."""
    if set(measured) != set(INITS):
        raise ValueError(f"measured must have exactly the keys {INITS}; got {sorted(measured)}")
    numbers = f"mean row max {measured['torch_default']:.3f} (torch_default) vs {measured['xavier']:.3f} (xavier)"
    hint = f"{numbers}. How large is layer 0's input under each init (below)? What does softmax do with large scores?"
    success = f"{numbers}: the larger the input entries, the larger the scores; softmax makes large scores a hard pick."
    todo = 'set my_guess to "xavier" or "torch_default", then run the cells again.'
    return check_choice(guess, max(INITS, key=measured.get), dict.fromkeys(INITS, hint), todo=todo, success=success)
