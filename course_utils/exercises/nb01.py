"""Checkers for notebook 01 (sentence vectors and dot products)."""

from __future__ import annotations

import inspect
import math

import numpy as np

from course_utils.core.toys import SENTENCES_2D, SENTENCES_3D
from course_utils.exercises import calls_to, check_true_false, feedback, not_answered
from course_utils.measures.sentence_vectors import topic
from course_utils.measures.similarity import cosine, dot


def _number(x) -> float | None:
    """x as a finite float; None for anything else (a string such as "22.3" too: a number is asked for)."""
    if isinstance(x, (str, bytes)):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# Exercise 1 tries the learner's cosine on pairs where the typical mistakes give a different number.
_COSINE_CASES = [
    ((0.6, 0.5), (0.2, 0.8)),
    ((3.0, 4.0), (4.0, 3.0)),  # long arrows: a missing division shows
    ((0.8, 0.1, 0.1), (0.9, 0.2, 0.0)),  # 3-D works too
    ((1.0, 0.0), (-1.0, 0.0)),  # opposite: -1
    ((2.0, 0.0), (0.0, 5.0)),  # orthogonal: 0
]


def check_my_cosine(fn) -> bool:
    """Exercise 1a: the learner's `my_cosine(a, b)` (NumPy arrays in, one number out) gives a·b / (|a| |b|).
    NumPy only: a function that calls torch, course_utils (or scipy, sklearn) is refused, whatever it returns.
    Used in notebook 01 (its Exercises section)."""
    if fn is None:
        return not_answered("write the body of my_cosine(a, b), then re-run the cell.")
    if not callable(fn):
        return feedback(
            False, "", f"pass the function itself, check_my_cosine(my_cosine), not a value of type {type(fn).__name__}."
        )
    if _not_numpy(fn):
        return feedback(False, "", f"my_cosine is {_origin(fn)}'s own function; write its body with NumPy only.")
    borrowed = calls_to(fn, _not_numpy)
    if borrowed:
        return feedback(
            False,
            "",
            f"my_cosine calls {borrowed[0]}, which is not NumPy; write it with NumPy only: a @ b (or np.dot) and "
            "np.linalg.norm (or np.sqrt).",
        )
    got = []
    for a, b in _COSINE_CASES:
        try:
            value = fn(np.array(a), np.array(b))
        except NotImplementedError:
            return not_answered("replace `raise NotImplementedError` with your code.")
        except Exception as err:  # the learner's code: say what it raised
            return feedback(False, "", f"my_cosine({a}, {b}) raised {type(err).__name__}: {err}")
        v = _number(value) if np.ndim(value) == 0 else None
        if v is None:
            return feedback(False, "", f"my_cosine({a}, {b}) should return one number, got {value!r}.")
        got.append(v)
    want = [cosine(a, b) for a, b in _COSINE_CASES]
    if np.allclose(got, want, atol=1e-9):
        return feedback(True, "my_cosine agrees with a·b / (|a| |b|) on five pairs, long, opposite and orthogonal.", "")
    if np.allclose(got, [dot(a, b) for a, b in _COSINE_CASES], atol=1e-9):
        return feedback(False, "", "that is the dot product; the cosine divides it by both lengths.")
    lengths = [(np.linalg.norm(a), np.linalg.norm(b)) for a, b in _COSINE_CASES]
    if np.allclose(got, [dot(a, b) / (la**2 * lb**2) for (a, b), (la, lb) in zip(_COSINE_CASES, lengths)], atol=1e-9):
        return feedback(False, "", "you divide by the squared lengths; a length is the square root of a·a.")
    if np.allclose(got, [dot(a, b) / la for (a, b), (la, _) in zip(_COSINE_CASES, lengths)], atol=1e-9) or np.allclose(
        got, [dot(a, b) / lb for (a, b), (_, lb) in zip(_COSINE_CASES, lengths)], atol=1e-9
    ):
        return feedback(False, "", "divide by the lengths of BOTH arrows, |a| and |b|.")
    if np.allclose(got, np.arccos(np.clip(want, -1, 1)), atol=1e-6) or np.allclose(
        got, np.degrees(np.arccos(np.clip(want, -1, 1))), atol=1e-4
    ):
        return feedback(False, "", "that is the angle; return its cosine, a·b / (|a| |b|), without arccos.")
    bad = next(i for i, (g, w) in enumerate(zip(got, want)) if abs(g - w) > 1e-9)
    a, b = _COSINE_CASES[bad]
    return feedback(False, "", f"my_cosine({a}, {b}) gave {got[bad]:.4f}; a·b / (|a| |b|) is a different number.")


_NOT_NUMPY = ("course_utils", "torch", "scipy", "sklearn")  # Exercise 1a is NumPy only


def _origin(obj) -> str:
    """The top-level package an object comes from ('torch', 'course_utils', 'numpy'; '' if unknown)."""
    name = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
    return (name or "").split(".")[0] if isinstance(name, str) else ""


def _not_numpy(obj) -> bool:
    return _origin(obj) in _NOT_NUMPY


CAKE = "eat cake"  # Exercise 1b: its nearest other 3-D sentence by cosine


def check_nearest_to_cake(sentence) -> bool:
    """Exercise 1b: the 3-D sentence (other than 'eat cake' itself) with the largest cosine with 'eat cake'.
    Used in notebook 01 (its Exercises section)."""
    others = {s: v for s, v in SENTENCES_3D.items() if s != CAKE}
    by_cos = max(others, key=lambda s: cosine(SENTENCES_3D[CAKE], others[s]))
    by_dot = max(others, key=lambda s: dot(SENTENCES_3D[CAKE], others[s]))
    if sentence is None:
        return not_answered("set my_nearest to a sentence, e.g. 'drink tea', then re-run.")
    if not isinstance(sentence, str) or sentence not in SENTENCES_3D:
        return feedback(False, "", f"give one of the nine sentences: {', '.join(SENTENCES_3D)}.")
    if sentence == CAKE:
        return feedback(False, "", "every sentence has cosine 1 with itself; look at the other eight.")
    if sentence == by_dot != by_cos:
        return feedback(False, "", "that is the largest dot product; by cosine (lengths divided out) another wins.")
    if sentence != by_cos:
        return feedback(False, "", "compute my_cosine(cake, v) for all eight other sentences and take the largest.")
    c1 = cosine(SENTENCES_3D[CAKE], others[by_cos])
    c2 = cosine(SENTENCES_3D[CAKE], others[by_dot])
    return feedback(
        True,
        f"{by_cos!r} (cosine {c1:.4f}), just ahead of {by_dot!r} ({c2:.4f}), which has the larger dot product.",
        "",
    )


SAME_TOPIC = (  # check_same_topic_prediction: not answered, wrong, right
    "set my_prediction to True or False before the table.",
    "you predicted True, the table says False: the dot product grows with length, and the long "
    "'read newspaper' arrow lifts a cross-topic pair above a same-topic one.",
    "right: by dot product one cross-topic pair beats a same-topic pair (length counts).",
)


def check_same_topic_prediction(prediction) -> bool:
    """Predict before you look: by dot product, does every same-topic pair of the six 2-D sentences beat every
    cross-topic pair? (No: 'drink beer' · 'read newspaper' beats 'eat apple' · 'eat bread'.)
    Used in notebook 01 (Six sentences as arrows)."""
    return check_true_false(prediction, False, *SAME_TOPIC)


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


def check_four_factors(percent) -> bool:
    """Exercise 3: relative change (in %) of 10·20·30·40 when every factor grows by 1.
    Used in notebook 01 (its Exercises section)."""
    p = _number(percent)
    expected = 100 * (math.prod([11, 21, 31, 41]) / math.prod([10, 20, 30, 40]) - 1)
    if percent is None:
        return not_answered("give one number, the change in percent, then re-run.")
    if p is None:
        return feedback(False, "", f"give one number, the change in percent; got {percent!r}.")
    if abs(p - expected / 100) < 0.001:
        return feedback(False, "", "that looks like a fraction; multiply by 100 to get percent.")
    if abs(p - expected) > 0.05:
        return feedback(False, "", "compute 11·21·31·41 / (10·20·30·40) − 1, then × 100.")
    return feedback(True, f"+{expected:.2f} %: a bit more than the sum of the four per-factor changes (+20.83 %).", "")
