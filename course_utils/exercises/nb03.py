"""Checkers for notebook 03 (scaled dot-product attention, step by step)."""

from __future__ import annotations

import inspect
import math

import torch
import torch.nn.functional as F

from course_utils.core.attention import masked_softmax, scaled_dot_product_attention
from course_utils.core.model import INITS  # the one list of initialisations
from course_utils.core.precision import DTYPE
from course_utils.core.toys import toy_embeddings
from course_utils.exercises import NOT_ANSWERED, calls_to, feedback, not_answered

TOY_WORDS = ("i", "can", "eat", "apple")


def check_window_mask(mask) -> bool:
    """Exercise 3: (4, 4) bool mask, True = may attend: every word sees itself and the word just before it.
    Used in notebook 03 (its Exercises section)."""
    want = torch.ones(4, 4, dtype=torch.bool).tril() & torch.ones(4, 4, dtype=torch.bool).triu(-1)
    if mask is None:
        return not_answered("build window_mask, a (4, 4) bool tensor, then re-run this cell.")
    if not isinstance(mask, torch.Tensor) or mask.shape != (4, 4):
        return feedback(False, "", "window_mask must be a (4, 4) tensor.")
    if mask.dtype != torch.bool:
        return feedback(False, "", f"course masks are bool (True = may attend); got dtype {mask.dtype}.")
    if torch.equal(mask, ~want):
        return feedback(False, "", "this is the opposite convention: in the course True means 'may attend'.")
    if torch.equal(mask, torch.ones(4, 4, dtype=torch.bool).tril()):
        return feedback(False, "", "that is the full causal mask: word 3 would still see words 0 and 1.")
    if not torch.equal(mask, want):
        return feedback(False, "", "row i must be True exactly at columns i-1 and i (row 0: only column 0).")
    return feedback(True, "each word sees itself and its left neighbour: a causal window of width 2.", "")


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


def _softmax_variants(scores, mask):
    """The typical mistakes of a masked softmax, for the same scores: {name: weights}."""
    if mask is None:
        return {"softmax over the wrong axis": torch.softmax(scores, dim=-2)}
    return {
        "softmax over the wrong axis": torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-2),
        "mask inverted": torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1),
        "masked scores set to 0": torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1),
        "mask forgotten": torch.softmax(scores, dim=-1),
        "zeroed after the softmax": torch.softmax(scores, dim=-1) * mask,
    }


_HINTS = {
    "softmax over the wrong axis": "each query's row must sum to 1: take the softmax over the keys, the last axis "
    "(dim=-1), not over the queries.",
    "mask inverted": "the course's masks mean True = may attend, so it is the False positions that must get no weight.",
    "masked scores set to 0": "a score of 0 still gets weight e⁰ = 1 before normalising; a masked position needs a "
    "score whose exponential is exactly 0.",
    "mask forgotten": "the mask is not used: masked positions still get weight.",
    "zeroed after the softmax": "zeroing weights after the softmax leaves rows that sum to less than 1; mask the "
    "scores before the softmax, so that it normalises over the allowed keys only.",
    "no √d_k": "the scores are not scaled: divide q·kᵀ by √d_k, d_k = q.shape[-1].",
    "divided by d_k": "the scores are divided by d_k; the divisor is its square root, √d_k.",
}


def _call(fn, args, name):
    """(result, message): the learner's fn(*args), or None and a message if it is unanswered or raises."""
    try:
        got = fn(*args)
    except NotImplementedError:
        return None, NOT_ANSWERED + f"write the body of {name} (replace the raise line), then re-run this cell."
    except Exception as exc:  # the learner's code may raise anything
        return None, f"❌ Not yet: {name} raised {type(exc).__name__}: {exc}"
    if got is None:
        return None, NOT_ANSWERED + f"{name} returns None: write its body, then re-run this cell."
    return got, None


def _compare(name, case, got, want, variants) -> str | None:
    """None if got == want, else a one-line hint (the typical mistake it matches, if any)."""
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        return f"{name} ({case}) should return shape {tuple(want.shape)}; got {shape}."
    got = got.detach().to(want.dtype)
    if torch.allclose(got, want, atol=1e-5):
        return None
    for mistake, variant in variants.items():
        if variant.shape == got.shape and torch.allclose(got, variant, atol=1e-5, equal_nan=True):
            return f"{name} ({case}): {_HINTS[mistake]}"
    if torch.isnan(got).any():
        return f"{name} ({case}) returns NaN: is a whole row masked by mistake, or inf − inf somewhere?"
    return f"{name} ({case}): right shape, but the numbers differ from the course's."


def _ready_made(obj) -> bool:
    """The course's own code (masked_softmax, scaled_dot_product_attention, anything of course_utils) or torch's
    scaled_dot_product_attention: what Exercise 1 asks the learner to write without."""
    module = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
    return obj is F.scaled_dot_product_attention or (isinstance(module, str) and module.split(".")[0] == "course_utils")


_OWN_VERSION = {
    "my_masked_softmax": "write the masking (masked_fill or torch.where) and the softmax yourself",
    "my_attention": "write the steps yourself: the scores, the masked softmax, weights @ v",
}


def _own_version(fn, name: str) -> bool:
    """True (and the ❌ line printed) when fn is, or calls, the ready-made code Exercise 1 asks to write without."""
    used = [getattr(fn, "__name__", "a ready-made function")] if _ready_made(fn) else calls_to(fn, _ready_made)
    if used:
        feedback(False, "", f"{name} uses {used[0]}, a ready-made version; {_OWN_VERSION[name]}.")
    return bool(used)


def check_masked_softmax(fn) -> bool:
    """Exercise 1a: fn(scores, mask) = softmax over the keys where only mask == True counts (True = may attend).

    The course's masked_softmax (or any course_utils helper) is refused, called or passed as it is.
    Compared with `attention.masked_softmax` on random scores with no mask, a causal and two padding masks.
    Used in notebook 03 §5 (its exercise)."""
    if not callable(fn):
        return feedback(False, "", "pass the function itself: check_masked_softmax(my_masked_softmax).")
    if _own_version(fn, "my_masked_softmax"):
        return False
    for case, q, k, _, mask in _cases():
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        got, message = _call(fn, (scores.clone(), mask), "my_masked_softmax")
        if message:
            print(message)
            return False
        hint = _compare("my_masked_softmax", case, got, masked_softmax(scores, mask), _softmax_variants(scores, mask))
        if hint:
            return feedback(False, "", hint)
    return feedback(True, "your masked softmax equals the course's, with no mask, a causal and padding masks.", "")


def check_attention(fn) -> bool:
    """Exercise 1b: fn(q, k, v, mask=None) -> out (or (out, weights)) = softmax(q kᵀ / √d_k, masked) v.

    The course's functions and torch's F.scaled_dot_product_attention are refused, called or passed as they are.
    Compared with `attention.scaled_dot_product_attention` on the same random inputs as check_masked_softmax.
    Used in notebook 03 §5 (its exercise)."""
    if not callable(fn):
        return feedback(False, "", "pass the function itself: check_attention(my_attention).")
    if _own_version(fn, "my_attention"):
        return False
    for case, q, k, v, mask in _cases():
        want_out, want_w = scaled_dot_product_attention(q, k, v, mask)
        got, message = _call(fn, (q.clone(), k.clone(), v.clone(), mask), "my_attention")
        if message:
            print(message)
            return False
        got_w = None
        if isinstance(got, tuple) and len(got) == 2:
            got, got_w = got  # (out, weights), like the course's function
        raw = q @ k.transpose(-2, -1)
        d_k = q.shape[-1]
        variants = {mistake: weights @ v for mistake, weights in _softmax_variants(raw / math.sqrt(d_k), mask).items()}
        variants["no √d_k"] = masked_softmax(raw, mask) @ v
        variants["divided by d_k"] = masked_softmax(raw / d_k, mask) @ v
        hint = _compare("my_attention", case, got, want_out, variants)
        if hint:
            return feedback(False, "", hint)
        if got_w is not None and _compare("my_attention's weights", case, got_w, want_w, {}):
            return feedback(
                False, "", f"my_attention ({case}): the output is right but the weights it returns are not."
            )
    return feedback(True, "your attention equals the course's scaled_dot_product_attention on every case.", "")


# ---- Predict before you look ----


def check_times_ten(prediction, before: float, after: float) -> bool:
    """Predict (section 2): multiply every energy by 10; does eat's weight on apple go "up", "down" or stay "same"?

    `before` and `after` are that weight as the notebook measured it; the checker follows the measurement.
    Used in notebook 03 §2 (its exercise)."""
    if prediction is None:
        return not_answered('set my_prediction_x10 to "up", "down" or "same", then re-run this cell.')
    answer = str(prediction).strip().lower()
    if answer not in ("up", "down", "same"):
        return feedback(False, "", f'answer "up", "down" or "same"; got {prediction!r}.')
    truth = "same" if abs(after - before) < 1e-3 else ("up" if after > before else "down")
    numbers = f"eat → apple: {before:.3f} before, {after:.3f} with every energy × 10"
    if answer == truth:
        return feedback(True, f"{numbers}. Section 4 shows why this matters.", "")
    if answer == "same":
        return feedback(
            False, "", f"{numbers}. softmax normalises e^energy, not the energies: larger gaps give larger ratios."
        )
    return feedback(False, "", f"{numbers}. The largest energy in a row gains the most when all are multiplied.")


def check_causal_top(guess, weights_row, words) -> bool:
    """Predict (section 5): under the causal mask, which word gets eat's largest weight? Follows the measured row.
    Used in notebook 03 §5 (its exercise)."""
    if guess is None:
        return not_answered("set my_causal_guess to one of the words eat may see, then re-run this cell.")
    words = list(words)
    if guess not in words:
        return feedback(False, "", f"give one of the words {words}; got {guess!r}.")
    row = torch.as_tensor(weights_row)
    top = words[int(row.argmax())]
    numbers = ", ".join(f"{w} {x:.2f}" for w, x in zip(words, row.tolist()))
    if guess == top:
        return feedback(True, f"eat's row under the causal mask: {numbers}.", "")
    if row[words.index(guess)] == 0:
        return feedback(False, "", f"the causal mask hides {guess!r} from eat: {numbers}.")
    return feedback(False, "", f"eat's row under the causal mask: {numbers}. Look at which keys are non-zero.")


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


GUESS_PLACEHOLDER = "?"


def check_init_guess(guess, measured: dict) -> bool:
    """Predict, then check: which init gives the larger layer-0 mean row maximum after a short training?

    `guess` is "xavier" or "torch_default" ("?" = not answered yet); `measured` is {init: mean row max} as the
    notebook's cell measured it. Prints one line; True if the guess names the init with the larger value.
    Used in notebook 03 (its Evidence part: Starting weights and the size of the scores)."""
    if set(measured) != set(INITS):
        raise ValueError(f"measured must have exactly the keys {INITS}; got {sorted(measured)}")
    if guess is None or guess is Ellipsis or (isinstance(guess, str) and guess.strip() in ("", GUESS_PLACEHOLDER)):
        return not_answered('set my_guess to "xavier" or "torch_default", then run the cells again.')
    if not isinstance(guess, str) or guess.strip().lower().replace(" ", "_").replace("-", "_") not in INITS:
        return feedback(False, "", f'my_guess must be "xavier" or "torch_default"; got {guess!r}.')
    guess = guess.strip().lower().replace(" ", "_").replace("-", "_")
    larger = max(INITS, key=lambda init: measured[init])
    numbers = f"mean row max {measured['torch_default']:.3f} (torch_default) vs {measured['xavier']:.3f} (xavier)"
    return feedback(
        guess == larger,
        f"{numbers}: the larger the input entries, the larger the scores, and softmax turns large scores into a hard pick.",
        f"{numbers}. Compare the entries' sizes above with section 4: what does softmax do with scores of std ≫ 1?",
    )
