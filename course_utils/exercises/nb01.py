"""Checkers for notebook 01 (sentence vectors and dot products)."""

from __future__ import annotations

import math

import numpy as np

from course_utils.core.toys import SENTENCES_2D, SENTENCES_3D
from course_utils.exercises.framework import Exercise, Mistake, check_choice
from course_utils.measures.sentence_vectors import topic
from course_utils.measures.similarity import cosine, dot


def _length(x) -> float:
    return float(np.linalg.norm(x))


def _angle(a, b) -> float:
    return math.acos(max(-1.0, min(1.0, cosine(a, b))))


_PAIRS = [((0.6, 0.5), (0.2, 0.8)), ((3.0, 4.0), (4.0, 3.0)), ((0.8, 0.1, 0.1), (0.9, 0.2, 0.0))]
_PAIRS += [((1.0, 0.0), (-1.0, 0.0)), ((2.0, 0.0), (0.0, 5.0))]  # long, 3-D, opposite, orthogonal
BOTH = "divide by the lengths of BOTH arrows, |a| and |b|."
COSINE = Exercise(  # Exercise 1a: my_cosine(a, b), NumPy only
    name="my_cosine",
    success="my_cosine agrees with a·b / (|a| |b|) on five pairs, long, opposite and orthogonal.",
    reference=cosine,
    cases=[(f"a = {a}, b = {b}", (np.array(a), np.array(b))) for a, b in _PAIRS],
    mistakes=(
        Mistake("that is the dot product; the cosine divides it by both lengths.", gives=dot),
        Mistake(
            "you divide by squared lengths; a length is √(a·a).", gives=lambda a, b: dot(a, b) / dot(a, a) / dot(b, b)
        ),
        Mistake(BOTH, gives=lambda a, b: dot(a, b) / _length(a)),
        Mistake(BOTH, gives=lambda a, b: dot(a, b) / _length(b)),
        Mistake("that is the angle; return its cosine, a·b / (|a| |b|), without arccos.", gives=_angle),
        Mistake("that is the angle in degrees; return its cosine.", gives=lambda a, b: math.degrees(_angle(a, b))),
    ),
    otherwise="a·b / (|a| |b|) is a different number.",
    returns="one number",
    forbid=("course_utils", "torch", "scipy", "sklearn"),
    forbid_hint="that is not NumPy; write it with NumPy only: a @ b (or np.dot) and np.linalg.norm (or np.sqrt).",
    atol=1e-9,
)
check_my_cosine = COSINE.check


_BY_DOT = "that is the largest dot product; by cosine (lengths divided out) another wins."


def check_nearest_to_cake(sentence) -> bool:
    """Exercise 1b: the 3-D sentence (not 'eat cake') with the largest cosine with 'eat cake'. Used in notebook 01."""
    cake, others = SENTENCES_3D["eat cake"], [s for s in SENTENCES_3D if s != "eat cake"]
    by_cos, by_dot = (max(others, key=lambda s, f=f: f(cake, SENTENCES_3D[s])) for f in (cosine, dot))
    c1, c2 = (cosine(cake, SENTENCES_3D[s]) for s in (by_cos, by_dot))
    hints = dict.fromkeys(SENTENCES_3D, "compute my_cosine(cake, v) for all eight other sentences; take the largest.")
    hints |= {"eat cake": "a sentence has cosine 1 with itself; look at the other eight.", by_dot: _BY_DOT}
    return check_choice(
        sentence,
        by_cos,
        hints,
        todo="set my_nearest to a sentence, e.g. 'drink tea', then re-run.",
        success=f"{by_cos!r} (cosine {c1:.4f}), just ahead of {by_dot!r} ({c2:.4f}), which has the larger dot product.",
    )


SAME_TOPIC = Exercise(  # Predict: by dot product, does every same-topic pair of the 2-D sentences beat every other?
    todo="set my_prediction to True or False, then re-run this cell.",
    success="right: by dot product one cross-topic pair beats a same-topic pair (length counts).",
    reference=False,
    otherwise="False: the dot product grows with length; the long 'read newspaper' arrow lifts a cross-topic pair above a same-topic one (table below).",
)
check_same_topic_prediction = SAME_TOPIC.check


def _eat_wins(f, v) -> bool:  # by f, both 'eat' sentences score above every 'drink' and 'read' sentence
    eat = [f(v, u) for s, u in SENTENCES_2D.items() if topic(s) == "eat"]
    return min(eat) > max(f(v, u) for s, u in SENTENCES_2D.items() if topic(s) != "eat")


_CLOSER = " scores an 'eat' sentence no higher than a 'drink' or 'read' one: point the arrow closer to the food axis."
EAT_CAKE = Exercise(  # Exercise 2: a 2-D vector for 'eat cake', closest to the 'eat' sentences by dot AND cosine
    todo="give two numbers (food, reading), not both zero, then re-run.",
    success="'eat cake' is closest to the food sentences by dot product and by cosine.",
    reference=np.array([0.9, 0.0]),
    mistakes=(
        Mistake("an arrow of length 0 has no direction: give two numbers, not both zero.", when=lambda v: not v.any()),
        Mistake("the dot product" + _CLOSER, when=lambda v: not _eat_wins(dot, v)),
        Mistake("the cosine" + _CLOSER, when=lambda v: not _eat_wins(cosine, v)),
    ),
    returns="two numbers (food, reading)",
    compare=lambda v, want: bool(np.isfinite(v).all() and v.any() and _eat_wins(dot, v) and _eat_wins(cosine, v)),
)
check_eat_cake = EAT_CAKE.check
