"""Checkers for notebook 06 (epoch-by-epoch clustering of Q, K, V and the attention output)."""

from __future__ import annotations

import inspect

import numpy as np

from course_utils.exercises import (
    calls_to,
    feedback,
    is_course_helper,
    learner_number,
    names_used,
    no_function,
    not_answered,
    python_loops,
)
from course_utils.measures.clustering import PAIR, word_vector
from course_utils.measures.similarity import cosine_distance, pairwise_spread, relative_distance

SHARED = ("we", "want", "to", "eat")  # the words both sentences of PAIR share (exercise 2)


_SPREAD_SHORTCUTS = {  # what exercise 1 asks the learner to write without
    "pairwise_spread": "the course's own copy",
    "my_spread": "the notebook's version with a Python loop",
}


def _spread_shortcut(fn) -> str | None:
    """What exercise 1 refuses in fn, as a sentence part: being or calling a course helper (pairwise_spread,
    pairwise_spread_table, ...: followed through aliases and the learner's own helper functions), or calling
    my_spread or another helper of the learner's that loops in Python."""
    if is_course_helper(fn):
        return f"is or calls {getattr(fn, '__name__', 'a function')}, a course helper"
    named = names_used(fn, _SPREAD_SHORTCUTS)
    if named:
        return f"calls {named[0]}, {_SPREAD_SHORTCUTS[named[0]]}"
    helpers = calls_to(fn, is_course_helper)
    if helpers:
        return f"calls {helpers[0]}, a course helper"
    own = getattr(fn, "__module__", None)  # the learner's own helpers: functions defined beside fn

    def loops_in_python(obj) -> bool:
        return inspect.isfunction(obj) and obj is not fn and obj.__module__ == own and bool(python_loops(obj))

    looping = calls_to(fn, loops_in_python)
    if looping:
        return f"calls {looping[0]}, a function with a Python loop"
    return None


def check_pairwise_spread(fn) -> bool:
    """Exercise 1: fn(X (N, dim)) -> pairwise spread = mean pairwise Euclidean distance / mean vector length,
    without a Python loop and without the course's pairwise_spread, any other course helper, or the notebook's
    my_spread (refused, also behind an alias or a helper of the learner's). Used in notebook 06 (its Exercises)."""
    not_yet = "write the body of my_pairwise_spread(X) (it returns one number), then re-run it."
    if no_function(fn, not_yet, "pass the function itself: check_pairwise_spread(my_pairwise_spread)."):
        return False
    shortcut = _spread_shortcut(fn)
    if shortcut:
        return feedback(
            False,
            "",
            f"your function {shortcut}: compute the spread yourself with numpy, all (N, N) distances at once "
            "with broadcasting (X[:, None] - X[None]), then the mean over pairs of different rows.",
        )
    rng = np.random.default_rng(6)
    cases = {
        "random vectors": rng.normal(size=(12, 8)),
        "vectors around one point": 5 + 0.1 * rng.normal(size=(7, 4)),
        "two vectors": np.array([[1.0, 0.0], [0.0, 1.0]]),
    }
    for name, X in cases.items():
        got = learner_number(fn, X, not_yet, "my_pairwise_spread", f" (on {name}).")
        if got is False:
            return False
        want = pairwise_spread(X)
        if not np.isfinite(got) or abs(got - want) > 1e-6 * max(1.0, want):
            hint = (
                "count each pair once and leave out a vector's distance to itself."
                if abs(got - want * (len(X) - 1) / len(X)) < 1e-6 * max(1.0, want)
                else "divide the mean pairwise distance by the mean length of the vectors (np.linalg.norm(X, axis=1).mean())."
            )
            return feedback(False, "", f"on {name} you get {got:.4f}, expected {want:.4f}: {hint}")
    got2 = learner_number(fn, 3.0 * cases["random vectors"], not_yet, "my_pairwise_spread", " (on 3 × random vectors).")
    if got2 is False:
        return False
    if not abs(got2 - pairwise_spread(cases["random vectors"])) <= 1e-6:
        return feedback(False, "", "scaling all vectors by 3 should not change the pairwise spread.")
    loops = python_loops(fn)
    if loops:
        return feedback(
            False,
            "",
            f"the numbers are right, but there is a Python loop: {', '.join(loops)}. Compute all (N, N) distances "
            "at once with broadcasting (X[:, None] - X[None]) and then take each pair once.",
        )
    return feedback(
        True, "your pairwise spread matches clustering.pairwise_spread (two orthogonal unit vectors: √2 ≈ 1.414).", ""
    )


def _shifts(snapshots, key: str, epoch: int = 30, distance=relative_distance) -> dict[str, float]:
    return {w: distance(*(word_vector(snapshots[epoch][s], key, w) for s in PAIR)) for w in SHARED}


def _compare(my_prediction, want) -> str:
    if my_prediction is None:
        return "You made no prediction; write one down first next time."
    guess = my_prediction.strip().lower() if isinstance(my_prediction, str) else my_prediction
    if isinstance(want, int) and isinstance(guess, str) and guess.isdigit():
        guess = int(guess)  # "1" for head 1
    return "Your prediction was right." if guess == want else f"You predicted {my_prediction!r}."


def check_most_changed_word(shifts, my_prediction=None) -> bool:
    """Exercise 2: shifts = {word: relative distance of its encoder layer-1 x1 between the two sentences, epoch 30,
    seed 0} for the shared words; my_prediction (the word guessed to move most) is compared, not graded.
    Used in notebook 06 (its Exercises section)."""
    from course_utils.training.zoo import load_standard_model

    if shifts is None:
        return not_answered("fill in shifts = {word: relative distance} for we, want, to, eat, then re-run.")
    if not isinstance(shifts, dict):
        return feedback(False, "", f"shifts should be a dict {{word: number}}, not {type(shifts).__name__}.")
    if set(shifts) != set(SHARED):
        return feedback(False, "", f"give exactly the words both sentences share: {', '.join(SHARED)}.")
    snaps = load_standard_model().snapshots
    want = _shifts(snaps, "encoder.1.self.x1")
    try:
        got = {w: float(v) for w, v in shifts.items()}
    except (TypeError, ValueError):
        return feedback(False, "", "every value of shifts should be one number (a relative distance).")

    def same(other):
        return all(abs(got[w] - other[w]) < 1e-6 for w in SHARED)

    if not same(want):
        mistakes = [
            (_shifts(snaps, "encoder.0.self.x1"), "these are layer 0's x1 vectors; the exercise asks for layer 1's"),
            (
                _shifts(snaps, "encoder.1.self.x1", distance=cosine_distance),
                "that is the cosine distance; use relative_distance (‖a − b‖ / mean length)",
            ),
            (_shifts(snaps, "encoder.1.self.x1", epoch=1), "that is epoch 1; use the snapshot of epoch 30"),
            (_shifts(snaps, "encoder.1.self.x1", epoch=15), "that is epoch 15; use the snapshot of epoch 30"),
            (_shifts(snaps, "encoder.1.layer_out"), "that is the layer's output; use its x1"),
        ]
        hint = next((h for other, h in mistakes if same(other)), None)
        return feedback(
            False,
            "",
            (
                hint
                or "not these numbers: for each word compare word_vector(snaps[30][A], key, word) with the same "
                "word in snaps[30][B], key 'encoder.1.self.x1'"
            )
            + ".",
        )
    top = max(want, key=want.get)
    return feedback(True, f"right: {top!r} moves most. {_compare(my_prediction, top)}", "")


def head_shift(trace_a, trace_b, key: str, head: int, word: str = "eat") -> float:
    """The reference for exercise 3: relative distance between `word`'s vectors of one head in two traces.
    Used in notebook 06 (an exercise)."""
    return relative_distance(word_vector(trace_a, key, word, head), word_vector(trace_b, key, word, head))


def _head_cases():
    from course_utils.training.zoo import load_standard_model

    s0, s4 = (load_standard_model("learned", s).snapshots[30] for s in (0, 4))
    return [
        (s0, "encoder.0.self.x1", 0),
        (s0, "encoder.0.self.x1", 1),
        (s0, "encoder.1.self.q", 1),
        (s4, "encoder.1.self.x1", 0),
        (s4, "encoder.1.self.x1", 1),
    ]


def check_head_shift(fn, my_prediction=None) -> bool:
    """Exercise 3: fn(trace_a, trace_b, key, head, word="eat") -> the relative distance between word's vectors of
    one head in two traces; my_prediction (0 or 1: the head of seed 4's encoder layer 1 whose x1 of 'eat' differs
    more) is compared, not graded.
    Used in notebook 06 (its Exercises section)."""
    not_yet = "write the body of my_head_shift (it returns one number), then re-run the cell."
    if no_function(fn, not_yet, "pass the function itself: check_head_shift(my_head_shift, my_prediction)."):
        return False
    cases = _head_cases()
    for snaps, key, head in cases:
        a, b = (snaps[s] for s in PAIR)
        try:
            got = fn(a, b, key, head)
        except Exception as exc:  # the learner's code may raise anything
            return feedback(False, "", f"my_head_shift raised {type(exc).__name__}: {exc} (key {key}, head {head}).")
        if got is None:
            return not_answered(not_yet)
        try:
            got = float(got)
        except (TypeError, ValueError):
            return feedback(False, "", f"my_head_shift should return one number, not {type(got).__name__}.")
        want = head_shift(a, b, key, head)
        if abs(got - want) > 1e-6:
            va, vb = (word_vector(t, key, "eat", head) for t in (a, b))
            mistakes = [
                (head_shift(a, b, key, None), "that uses both heads' numbers; take one head: trace.vectors(key, head)"),
                (cosine_distance(va, vb), "that is the cosine distance; divide ‖a − b‖ by the mean length instead"),
                (float(np.linalg.norm(va - vb)), "that is ‖a − b‖ alone; divide it by the mean length of a and b"),
            ]
            hint = next((h for m, h in mistakes if abs(got - m) < 1e-6), "compare with my_relative_distance")
            return feedback(False, "", f"for {key}, head {head} you get {got:.4f}, expected {want:.4f}: {hint}.")
    s4, key, _ = cases[3]
    d = [head_shift(s4[PAIR[0]], s4[PAIR[1]], key, h) for h in (0, 1)]
    top = int(np.argmax(d))
    return feedback(
        True,
        f"seed 4, encoder layer 1: head 0's x1 of 'eat' differs by {d[0]:.2f}, head 1's by {d[1]:.2f}. "
        f"{_compare(my_prediction, top)}",
        "",
    )
