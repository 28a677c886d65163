"""Checkers for notebook 01 (sentence vectors and dot products)."""

from __future__ import annotations

import math

import numpy as np

from course_utils.core.toys import SENTENCES_2D, SENTENCES_3D
from course_utils.exercises.framework import Exercise, Mistake, check_choice, check_true_false, feedback, not_answered
from course_utils.measures.sentence_vectors import topic
from course_utils.measures.similarity import cosine, dot


def _length(x) -> float:
    return float(np.linalg.norm(x))


# Exercise 1a: pairs on which the typical mistakes give another number; NumPy only.
COSINE = Exercise(
    name="my_cosine",
    todo="write the body of my_cosine(a, b) (replace `raise NotImplementedError`), then re-run the cell.",
    success="my_cosine agrees with a·b / (|a| |b|) on five pairs, long, opposite and orthogonal.",
    reference=cosine,
    cases=[
        (f"a = {a}, b = {b}", (np.array(a), np.array(b)))
        for a, b in [
            ((0.6, 0.5), (0.2, 0.8)),
            ((3.0, 4.0), (4.0, 3.0)),  # long arrows: a missing division shows
            ((0.8, 0.1, 0.1), (0.9, 0.2, 0.0)),  # 3-D works too
            ((1.0, 0.0), (-1.0, 0.0)),  # opposite: -1
            ((2.0, 0.0), (0.0, 5.0)),  # orthogonal: 0
        ]
    ],
    mistakes=(
        Mistake("that is the dot product; the cosine divides it by both lengths.", gives=dot),
        Mistake(
            "you divide by the squared lengths; a length is the square root of a·a.",
            gives=lambda a, b: dot(a, b) / (_length(a) ** 2 * _length(b) ** 2),
        ),
        Mistake("divide by the lengths of BOTH arrows, |a| and |b|.", gives=lambda a, b: dot(a, b) / _length(a)),
        Mistake("divide by the lengths of BOTH arrows, |a| and |b|.", gives=lambda a, b: dot(a, b) / _length(b)),
        Mistake(
            "that is the angle; return its cosine, a·b / (|a| |b|), without arccos.",
            gives=lambda a, b: math.acos(max(-1.0, min(1.0, cosine(a, b)))),
        ),
        Mistake(
            "that is the angle in degrees; return its cosine, a·b / (|a| |b|), without arccos.",
            gives=lambda a, b: math.degrees(math.acos(max(-1.0, min(1.0, cosine(a, b))))),
        ),
    ),
    otherwise="a·b / (|a| |b|) is a different number.",
    returns="one number",
    forbid=("course_utils", "torch", "scipy", "sklearn"),
    forbid_hint="that is not NumPy; write it with NumPy only: a @ b (or np.dot) and np.linalg.norm (or np.sqrt).",
    atol=1e-9,
)


def check_my_cosine(fn) -> bool:
    """Exercise 1a: the learner's `my_cosine(a, b)` (NumPy arrays in, one number out) gives a·b / (|a| |b|).
    NumPy only: a function that uses torch, course_utils (or scipy, sklearn) is refused, whatever it returns.
    Used in notebook 01 (its Exercises section)."""
    return COSINE.check(fn)


CAKE = "eat cake"  # Exercise 1b: its nearest other 3-D sentence by cosine


def check_nearest_to_cake(sentence) -> bool:
    """Exercise 1b: the 3-D sentence (other than 'eat cake' itself) with the largest cosine with 'eat cake'.
    Used in notebook 01 (its Exercises section)."""
    others = {s: v for s, v in SENTENCES_3D.items() if s != CAKE}
    by_cos = max(others, key=lambda s: cosine(SENTENCES_3D[CAKE], others[s]))
    by_dot = max(others, key=lambda s: dot(SENTENCES_3D[CAKE], others[s]))
    c1, c2 = cosine(SENTENCES_3D[CAKE], others[by_cos]), cosine(SENTENCES_3D[CAKE], others[by_dot])
    return check_choice(
        sentence,
        list(SENTENCES_3D),
        by_cos,
        todo="set my_nearest to a sentence, e.g. 'drink tea', then re-run.",
        success=f"{by_cos!r} (cosine {c1:.4f}), just ahead of {by_dot!r} ({c2:.4f}), which has the larger dot product.",
        hints={
            CAKE: "every sentence has cosine 1 with itself; look at the other eight.",
            by_dot: "that is the largest dot product; by cosine (lengths divided out) another wins.",
        },
        otherwise="compute my_cosine(cake, v) for all eight other sentences and take the largest.",
    )


def check_same_topic_prediction(prediction) -> bool:
    """Predict before you look: by dot product, does every same-topic pair of the six 2-D sentences beat every
    cross-topic pair? (No: 'drink beer' · 'read newspaper' beats 'eat apple' · 'eat bread'.)
    Used in notebook 01 (Six sentences as arrows)."""
    return check_true_false(
        prediction,
        False,
        "set my_prediction to True or False before the table.",
        "you predicted True, the table says False: the dot product grows with length, and the long "
        "'read newspaper' arrow lifts a cross-topic pair above a same-topic one.",
        "right: by dot product one cross-topic pair beats a same-topic pair (length counts).",
    )


def check_eat_cake(vector) -> bool:
    """Exercise 2: a 2-D vector for 'eat cake' whose dot product AND cosine with both 'eat' sentences beat
    those with every 'drink' and 'read' sentence.
    Used in notebook 01 (its Exercises section)."""
    if vector is None:
        return not_answered("give two numbers (food, reading), not both zero, then re-run.")
    try:
        v = np.zeros(0) if np.asarray(vector).dtype.kind in "USO" else np.asarray(vector, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        v = np.zeros(0)
    if v.shape != (2,) or not np.all(np.isfinite(v)) or np.linalg.norm(v) == 0:
        return feedback(False, "", f"give two numbers (food, reading), not both zero; got {vector!r}.")
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


_CHANGE = 100 * (math.prod([11, 21, 31, 41]) / math.prod([10, 20, 30, 40]) - 1)
FOUR_FACTORS = Exercise(
    todo="give one number, the change in percent, then re-run.",
    success=f"+{_CHANGE:.2f} %: a bit more than the sum of the four per-factor changes (+20.83 %).",
    reference=_CHANGE,
    mistakes=(Mistake("that looks like a fraction; multiply by 100 to get percent.", gives=_CHANGE / 100),),
    otherwise="compute 11·21·31·41 / (10·20·30·40) − 1, then × 100.",
    returns="one number, the change in percent",
    atol=0.05,
)


def check_four_factors(percent) -> bool:
    """Exercise 3: relative change (in %) of 10·20·30·40 when every factor grows by 1.
    Used in notebook 01 (its Exercises section)."""
    return FOUR_FACTORS.check(percent)
