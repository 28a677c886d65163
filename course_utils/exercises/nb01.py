"""Checkers for notebook 01 (sentence vectors and dot products)."""

from __future__ import annotations

import math

import numpy as np

from ..vectors import SENTENCES_2D, cosine, dot, topic
from . import feedback


def _number(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def check_dot_cosine(dot_value, cosine_value) -> bool:
    """Exercise 1: dot product and cosine of 'drink water' and 'read book' (2 decimals are enough)."""
    a, b = SENTENCES_2D["drink water"], SENTENCES_2D["read book"]
    d, c = _number(dot_value), _number(cosine_value)
    if d is None or c is None:
        return feedback(False, "", "give two numbers: the dot product and the cosine.")
    if abs(d - dot(a, b)) > 0.006:
        return feedback(False, "", "the dot product multiplies matching coordinates and adds: x1·x2 + y1·y2.")
    if abs(c - cosine(a, b)) > 0.006:
        return feedback(False, "", "the dot product is right; for the cosine divide it by both lengths √(x² + y²).")
    return feedback(True, f"dot = {dot(a, b):.2f}, cosine = {cosine(a, b):.2f}.", "")


def check_eat_cake(vector) -> bool:
    """Exercise 2: a 2-D vector for 'eat cake' whose dot product AND cosine with both 'eat' sentences beat
    those with every 'drink' and 'read' sentence."""
    try:
        v = np.asarray(vector, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        v = np.zeros(0)
    if v.shape != (2,) or not np.all(np.isfinite(v)) or np.linalg.norm(v) == 0:
        return feedback(False, "", "give two numbers (x, y), not both zero, e.g. (0.5, 0.5).")
    for name, f in (("dot product", dot), ("cosine", cosine)):
        same = min(f(v, u) for s, u in SENTENCES_2D.items() if topic(s) == "eat")
        worst, other = max((f(v, u), s) for s, u in SENTENCES_2D.items() if topic(s) != "eat")
        if same <= worst:
            return feedback(
                False,
                "",
                f"by {name}, {other!r} ({worst:.2f}) scores at least as high as an 'eat' "
                f"sentence ({same:.2f}); point the arrow closer to the food axis.",
            )
    return feedback(True, "'eat cake' is closest to the food sentences by dot product and by cosine.", "")


def check_four_factors(percent) -> bool:
    """Exercise 3: relative change (in %) of 10·20·30·40 when every factor grows by 1."""
    p = _number(percent)
    expected = 100 * (math.prod([11, 21, 31, 41]) / math.prod([10, 20, 30, 40]) - 1)
    if p is None:
        return feedback(False, "", "give one number, the change in percent.")
    if abs(p - expected / 100) < 0.001:
        return feedback(False, "", "that looks like a fraction; multiply by 100 to get percent.")
    if abs(p - expected) > 0.05:
        return feedback(False, "", "compute 11·21·31·41 / (10·20·30·40) − 1, then × 100.")
    return feedback(True, f"+{expected:.2f} %: a bit more than the sum of the four per-factor changes (+20.83 %).", "")
