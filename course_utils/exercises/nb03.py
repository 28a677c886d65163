"""Checkers for notebook 03 (scaled dot-product attention, step by step)."""

from __future__ import annotations

import math

import torch

from ..model import INITS  # the one list of initialisations
from ..stepwise import score_stats, toy_embeddings
from . import feedback

TOY_WORDS = ("i", "can", "eat", "apple")


def check_window_mask(mask) -> bool:
    """Exercise 3: (4, 4) bool mask, True = may attend: every word sees itself and the word just before it."""
    want = torch.ones(4, 4, dtype=torch.bool).tril() & torch.ones(4, 4, dtype=torch.bool).triu(-1)
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


def check_divisor_256(divisor) -> bool:
    """Exercise 1: a divisor that brings the std of q·k (d = 256, N(0, 1) entries) back to about 1."""
    try:
        divisor = float(divisor)
    except (TypeError, ValueError):
        return feedback(False, "", "give a number, e.g. my_divisor = 3.0.")
    if not divisor > 0:
        return feedback(False, "", "the divisor must be positive.")
    std = score_stats(256, divisor)["score_std"]
    return feedback(
        abs(std - 1) < 0.05,
        f"dividing by {divisor:g} gives std {std:.2f}: that is √256 = 16.",
        f"dividing by {divisor:g} gives std {std:.2f}; the raw std is about √d, so divide by that.",
    )


def toy_weights(W_Q, W_K, words=TOY_WORDS) -> torch.Tensor:
    """(T, T) attention weights of the toy sentence for 2×2 matrices W_Q, W_K (Q = X W_Q, K = X W_K, scale √2)."""
    X = toy_embeddings(words)
    W_Q, W_K = torch.as_tensor(W_Q, dtype=torch.float32), torch.as_tensor(W_K, dtype=torch.float32)
    if W_Q.shape != (2, 2) or W_K.shape != (2, 2):
        raise ValueError(f"W_Q and W_K must be 2×2; got {tuple(W_Q.shape)} and {tuple(W_K.shape)}")
    Q, K = X @ W_Q, X @ W_K
    return torch.softmax(Q @ K.T / math.sqrt(2), dim=-1)


def check_apple_attends_to_eat(W_Q, W_K) -> bool:
    """Exercise 2: 2×2 W_Q, W_K such that 'apple' gives 'eat' its highest weight, above 0.5."""
    try:
        w = toy_weights(W_Q, W_K)
    except (ValueError, TypeError, RuntimeError) as exc:
        return feedback(False, "", str(exc))
    row = w[TOY_WORDS.index("apple")]
    best = TOY_WORDS[int(row.argmax())]
    ok = best == "eat" and row[TOY_WORDS.index("eat")].item() > 0.5
    return feedback(
        ok,
        f"apple -> eat gets {row[2].item():.2f} of apple's attention.",
        f"apple's row is {[round(x, 2) for x in row.tolist()]} (i, can, eat, apple): its top key is {best!r}; "
        "make apple's query point at the 'action' feature that eat's key carries.",
    )


GUESS_PLACEHOLDER = "?"


def check_init_guess(guess, measured: dict) -> bool:
    """Predict, then check: which init gives the larger layer-0 mean row maximum after a short training?

    `guess` is "xavier" or "torch_default" ("?" = not answered yet); `measured` is {init: mean row max} as the
    notebook's cell measured it. Prints one line; True if the guess names the init with the larger value.
    """
    if set(measured) != set(INITS):
        raise ValueError(f"measured must have exactly the keys {INITS}; got {sorted(measured)}")
    if guess is None or guess is Ellipsis or (isinstance(guess, str) and guess.strip() in ("", GUESS_PLACEHOLDER)):
        print('✍ Write your guess first: set my_guess to "xavier" or "torch_default", then run the cells again.')
        return False
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
