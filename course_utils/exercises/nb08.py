"""Checkers for notebook 08 (five probe sentences: proper, nonsense, misleading)."""

from __future__ import annotations

import numpy as np

from . import feedback

ZERO_PLACE = "decoder L0 self"  # exercise 2


def check_word_spread(fn) -> bool:
    """Exercise 1: my_word_spread(V) -> mean over pairs i < j of 1 - cos(V[i], V[j]), for V of shape (n, dim)."""
    from ..probing import mean_pairwise_cosine_distance

    if not callable(fn):
        return feedback(False, "", "pass your function itself, e.g. check_word_spread(my_word_spread).")
    rng = np.random.default_rng(0)
    cases = [
        rng.normal(size=(5, 64)),
        rng.normal(size=(2, 3)),
        3.0 * np.ones((4, 8)),
        np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]]),
    ]
    for V in cases:
        try:
            got = fn(V.copy())
        except Exception as exc:  # the learner's code may fail in any way
            return feedback(False, "", f"your function raised {type(exc).__name__}: {exc}")
        if got is None:
            return feedback(False, "", "your function returned None: return one number.")
        try:
            got = float(got)
        except (TypeError, ValueError):
            return feedback(False, "", f"return one number, not {type(got).__name__}.")
        want = mean_pairwise_cosine_distance(V)
        if not abs(got - want) < 1e-6:
            return feedback(
                False,
                "",
                f"for a ({V.shape[0]}, {V.shape[1]}) input you return {got:.4f}, expected {want:.4f}. "
                "Use 1 - cosine (a distance, 0 for equal directions) and only pairs i < j (not i = j).",
            )
    return feedback(True, "your word spread matches probing.mean_pairwise_cosine_distance on every test input.", "")


def _normalise(answer) -> str:
    s = str(answer).strip().lower().replace(".", " ").replace("_", " ")
    return " ".join(s.split())


def check_zero_place(answer) -> bool:
    """Exercise 2: the attention place of layer 0 where every kind (q, k, v, x1, out) has word spread 0."""
    if answer is None:
        return feedback(False, "", "give the row name of the spread table, e.g. 'encoder L0 self'.")
    ok = _normalise(answer) in {"decoder l0 self", "decoder 0 self", "decoder self"}
    return feedback(
        ok,
        "right: the decoder's layer-0 self-attention sees only '<bos> ich kann' there, the same in all five.",
        f"{answer!r} has a kind with spread above 0. Look for the row of the spread table whose q, k, v, x1 "
        "and out are all 0.",
    )
