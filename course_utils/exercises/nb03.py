"""Checkers for notebook 03 (scaled dot-product attention, step by step)."""

from __future__ import annotations

import math

import torch

from course_utils.core.attention import masked_softmax, scaled_dot_product_attention
from course_utils.core.model import INITS  # the one list of initialisations
from course_utils.core.precision import DTYPE
from course_utils.core.toys import toy_embeddings
from course_utils.exercises.framework import Exercise, Mistake, check_choice, feedback, like, not_answered

TOY_WORDS = ("i", "can", "eat", "apple")


_WINDOW = torch.ones(4, 4, dtype=torch.bool).tril() & torch.ones(4, 4, dtype=torch.bool).triu(-1)
WINDOW_MASK = Exercise(
    todo="build window_mask, a (4, 4) bool tensor, then re-run this cell.",
    success="each word sees itself and its left neighbour: a causal window of width 2.",
    reference=_WINDOW,
    mistakes=(
        Mistake("this is the opposite convention: in the course True means 'may attend'.", gives=~_WINDOW),
        Mistake(
            "that is the full causal mask: word 3 would still see words 0 and 1.",
            gives=torch.ones(4, 4, dtype=torch.bool).tril(),
        ),
    ),
    otherwise="row i must be True exactly at columns i-1 and i (row 0: only column 0).",
    returns="a (4, 4) bool tensor (True = may attend)",
)


def check_window_mask(mask) -> bool:
    """Exercise 3: (4, 4) bool mask, True = may attend: every word sees itself and the word just before it.
    Used in notebook 03 (its Exercises section)."""
    return WINDOW_MASK.check(mask)


# ---- Exercise 1: masked softmax and attention, written by the learner ----


def _cases():
    """Random inputs the learner's functions are compared on: (name, q, k, v, mask); no row is fully masked.

    The sizes differ from one another (Tq, Tk, d_k, d_v), so that a wrong axis or divisor shows."""
    g = torch.Generator().manual_seed(3)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()  # (Tq, Tk), broadcast over batch and heads
    lengths = torch.tensor([5, 3])  # sentence 1 has 2 padding slots
    padding = (torch.arange(5)[None, :] < lengths[:, None])[:, None, None, :]  # (B, 1, 1, Tk)
    cross_pad = (torch.arange(6)[None, :] < torch.tensor([6, 4])[:, None])[:, None, :]  # (B, 1, Tk)

    def r(*shape):
        return torch.randn(*shape, generator=g) * 2.0  # scores of size a few units: softmax is not flat

    return [
        ("no mask", r(4, 6), r(4, 6), r(4, 3), None),
        ("causal mask", r(2, 3, 5, 6), r(2, 3, 5, 6), r(2, 3, 5, 3), causal),
        ("padding mask", r(2, 3, 5, 6), r(2, 3, 5, 6), r(2, 3, 5, 3), padding),
        ("padding mask, Tq ≠ Tk", r(2, 3, 8), r(2, 6, 8), r(2, 6, 2), cross_pad),
    ]


def _masked(wrong):
    """A mistake in the masking: with no mask the learner's softmax is right."""
    return lambda s, m: torch.softmax(s, dim=-1) if m is None else wrong(s, m)


_SOFTMAX_MISTAKES = {  # (scores, mask) -> the weights of a typical mistake, and its hint
    "each query's row must sum to 1: take the softmax over the keys, the last axis (dim=-1), not over the queries.": (
        lambda s, m: torch.softmax(s if m is None else s.masked_fill(~m, float("-inf")), dim=-2)
    ),
    "the course's masks mean True = may attend, so it is the False positions that must get no weight.": (
        _masked(lambda s, m: torch.softmax(s.masked_fill(m, float("-inf")), dim=-1))
    ),
    "a score of 0 still gets weight e⁰ = 1 before normalising; a masked position needs a score whose exponential is "
    "exactly 0.": _masked(lambda s, m: torch.softmax(s.masked_fill(~m, 0.0), dim=-1)),
    "the mask is not used: masked positions still get weight.": _masked(lambda s, m: torch.softmax(s, dim=-1)),
    "zeroing weights after the softmax leaves rows that sum to less than 1; mask the scores before the softmax, so "
    "that it normalises over the allowed keys only.": _masked(lambda s, m: torch.softmax(s, dim=-1) * m),
}
_NAN = Mistake(
    "returns NaN: is a whole row masked by mistake, or inf − inf somewhere?", when=lambda got, *a: got.isnan().any()
)
_READY_MADE = ("course_utils", "masked_softmax", "scaled_dot_product_attention")


def _scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


MASKED_SOFTMAX = Exercise(
    name="my_masked_softmax",
    todo="write the body of my_masked_softmax (replace the raise line), then re-run this cell.",
    success="your masked softmax equals the course's, with no mask, a causal and padding masks.",
    reference=masked_softmax,
    cases=lambda: [(case, (_scores(q, k), mask)) for case, q, k, _, mask in _cases()],
    mistakes=(*(Mistake(hint, gives=f) for hint, f in _SOFTMAX_MISTAKES.items()), _NAN),
    otherwise="right shape, but the numbers differ from the course's.",
    returns="a tensor of weights, the shape of the scores",
    forbid=_READY_MADE,
    forbid_hint="a ready-made version; write the masking (masked_fill or torch.where) and the softmax yourself.",
    atol=1e-5,
)


def check_masked_softmax(fn) -> bool:
    """Exercise 1a: fn(scores, mask) = softmax over the keys where only mask == True counts (True = may attend).
    The course's masked_softmax (or any course_utils helper) is refused. Compared with `attention.masked_softmax`
    on random scores with no mask, a causal and two padding masks.
    Used in notebook 03 §5 (its exercise)."""
    return MASKED_SOFTMAX.check(fn)


def _attention_mistake(weights):
    return lambda q, k, v, mask=None: weights(_scores(q, k), mask) @ v


ATTENTION = Exercise(
    name="my_attention",
    todo="write the body of my_attention (replace the raise line), then re-run this cell.",
    success="your attention equals the course's scaled_dot_product_attention on every case.",
    reference=lambda q, k, v, mask: scaled_dot_product_attention(q, k, v, mask)[0],
    cases=lambda: [(case, (q, k, v, mask)) for case, q, k, v, mask in _cases()],
    mistakes=(
        *(Mistake(hint, gives=_attention_mistake(f)) for hint, f in _SOFTMAX_MISTAKES.items()),
        Mistake(
            "the scores are not scaled: divide q·kᵀ by √d_k, d_k = q.shape[-1].",
            gives=lambda q, k, v, mask: masked_softmax(q @ k.transpose(-2, -1), mask) @ v,
        ),
        Mistake(
            "the scores are divided by d_k; the divisor is its square root, √d_k.",
            gives=lambda q, k, v, mask: masked_softmax(q @ k.transpose(-2, -1) / q.shape[-1], mask) @ v,
        ),
        _NAN,
    ),
    otherwise="right shape, but the numbers differ from the course's.",
    returns="the output tensor (or (output, weights))",
    forbid=_READY_MADE,
    forbid_hint="a ready-made version; write the steps yourself: the scores, the masked softmax, weights @ v.",
    convert=lambda got, want: like(got[0] if isinstance(got, tuple) and len(got) == 2 else got, want),
    atol=1e-5,
)


def check_attention(fn) -> bool:
    """Exercise 1b: fn(q, k, v, mask=None) -> out (or (out, weights)) = softmax(q kᵀ / √d_k, masked) v.
    The course's functions and torch's F.scaled_dot_product_attention are refused. Compared with
    `attention.scaled_dot_product_attention` on the same random inputs as check_masked_softmax.
    Used in notebook 03 §5 (its exercise)."""
    return ATTENTION.check(fn)


# ---- Predict before you look ----


def check_times_ten(prediction, before: float, after: float) -> bool:
    """Predict (section 2): multiply every energy by 10; does eat's weight on apple go "up", "down" or stay "same"?
    `before` and `after` are that weight as the notebook measured it; the checker follows the measurement.
    Used in notebook 03 §2 (its exercise)."""
    truth = "same" if abs(after - before) < 1e-3 else ("up" if after > before else "down")
    numbers = f"eat → apple: {before:.3f} before, {after:.3f} with every energy × 10"
    return check_choice(
        prediction,
        ("up", "down", "same"),
        truth,
        todo='set my_prediction_x10 to "up", "down" or "same", then re-run this cell.',
        success=f"{numbers}. Section 4 shows why this matters.",
        hints={"same": f"{numbers}. softmax normalises e^energy, not the energies: larger gaps give larger ratios."},
        otherwise=f"{numbers}. The largest energy in a row gains the most when all are multiplied.",
    )


def check_causal_top(guess, weights_row, words) -> bool:
    """Predict (section 5): under the causal mask, which word gets eat's largest weight? Follows the measured row.
    Used in notebook 03 §5 (its exercise)."""
    words, row = list(words), torch.as_tensor(weights_row)
    numbers = ", ".join(f"{w} {x:.2f}" for w, x in zip(words, row.tolist()))
    return check_choice(
        guess,
        words,
        words[int(row.argmax())],
        todo="set my_causal_guess to one of the words eat may see, then re-run this cell.",
        success=f"eat's row under the causal mask: {numbers}.",
        hints={w: f"the causal mask hides {w!r} from eat: {numbers}." for w, x in zip(words, row) if x == 0},
        otherwise=f"eat's row under the causal mask: {numbers}. Look at which keys are non-zero.",
    )


def toy_weights(W_Q, W_K, words=TOY_WORDS) -> torch.Tensor:
    """(T, T) attention weights of the toy sentence for 2×2 matrices W_Q, W_K (Q = X W_Q, K = X W_K, scale √2).
    Used in notebook 03 (an exercise)."""
    X = toy_embeddings(words)
    W_Q, W_K = torch.as_tensor(W_Q, dtype=DTYPE), torch.as_tensor(W_K, dtype=DTYPE)
    if W_Q.shape != (2, 2) or W_K.shape != (2, 2):
        raise ValueError(f"W_Q and W_K must be 2×2; got {tuple(W_Q.shape)} and {tuple(W_K.shape)}")
    Q, K = X @ W_Q, X @ W_K
    return torch.softmax(Q @ K.T / math.sqrt(2), dim=-1)


def check_eat_apple_pair(W_Q, W_K) -> bool:
    """Exercise 2: 2×2 W_Q, W_K such that 'eat' gives 'apple' and 'apple' gives 'eat' its largest weight, above 0.5.
    Used in notebook 03 (its Exercises section)."""
    if W_Q is None or W_K is None:
        return not_answered("fill in W_Q2 and W_K2 (2×2 tensors), then re-run this cell.")
    try:
        torch.as_tensor(W_Q, dtype=DTYPE), torch.as_tensor(W_K, dtype=DTYPE)
    except (ValueError, TypeError, RuntimeError):
        return feedback(
            False,
            "",
            f"W_Q2 and W_K2 must be 2×2 tensors of numbers; got {type(W_Q).__name__} and {type(W_K).__name__}.",
        )
    try:
        w = toy_weights(W_Q, W_K)
    except (ValueError, TypeError, RuntimeError) as exc:
        return feedback(False, "", str(exc))
    eat, apple = TOY_WORDS.index("eat"), TOY_WORDS.index("apple")
    ok = {
        (a, b): int(w[a].argmax()) == b and w[a, b].item() > 0.5 for a, b in ((eat, apple), (apple, eat))
    }  # (query, key): the query's largest weight is on the key, above 0.5
    rows = (
        "; ".join(f"{TOY_WORDS[a]}'s row {[round(x, 2) for x in w[a].tolist()]}" for a in (eat, apple))
        + " (keys: i, can, eat, apple)"
    )
    if all(ok.values()):
        return feedback(True, f"eat -> apple {w[eat, apple]:.2f}, apple -> eat {w[apple, eat]:.2f}.", "")
    if ok[apple, eat]:
        hint = (
            "apple looks at eat now, but eat no longer looks at apple. Swapping W^Q and W^K swaps the roles for "
            "every word (section 6); here both features must ask, and both must answer."
        )
    elif ok[eat, apple]:
        hint = "eat looks at apple, but apple does not look at eat: apple's query must point where eat's key is."
    else:
        hint = "neither looks at the other yet: which feature should each word's query ask for?"
    return feedback(False, "", f"{rows}. {hint}")


def check_init_guess(guess, measured: dict) -> bool:
    """Predict, then check: which init gives the larger layer-0 mean row maximum after a short training?

    `guess` is "xavier" or "torch_default" ("?" = not answered yet); `measured` is {init: mean row max} as the
    notebook's cell measured it. Prints one line; True if the guess names the init with the larger value.
    Used in notebook 03 (its Evidence part: Starting weights and the size of the scores)."""
    if set(measured) != set(INITS):
        raise ValueError(f"measured must have exactly the keys {INITS}; got {sorted(measured)}")
    numbers = f"mean row max {measured['torch_default']:.3f} (torch_default) vs {measured['xavier']:.3f} (xavier)"
    return check_choice(
        guess,
        INITS,
        max(INITS, key=lambda init: measured[init]),
        todo='set my_guess to "xavier" or "torch_default", then run the cells again.',
        success=f"{numbers}: the larger the input entries, the larger the scores, and softmax turns large scores into "
        "a hard pick.",
        otherwise=f"{numbers}. Compare the entries' sizes above with section 4: what does softmax do with scores of "
        "std ≫ 1?",
    )
