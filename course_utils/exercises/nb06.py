"""Checkers for notebook 06 (epoch-by-epoch clustering of Q, K, V and the attention output)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from course_utils.exercises.framework import Exercise, Mistake
from course_utils.measures.clustering import PAIR, word_vector
from course_utils.measures.similarity import cosine_distance, pairwise_spread, relative_distance

SHARED = ("we", "want", "to", "eat")  # the words both sentences of PAIR share (exercise 2)


def _distances(X) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    return np.linalg.norm(X[:, None] - X[None], axis=-1)


_RNG = np.random.default_rng(6)
_RANDOM = _RNG.normal(size=(12, 8))

# Exercise 1: the pairwise spread written out, with numpy and without a Python loop
SPREAD = Exercise(
    name="my_pairwise_spread",
    todo="write the body of my_pairwise_spread(X) (it returns one number), then re-run it.",
    success="your pairwise spread matches clustering.pairwise_spread (two orthogonal unit vectors: √2 ≈ 1.414).",
    reference=pairwise_spread,
    cases=[
        ("random vectors", (_RANDOM,)),
        ("vectors around one point", (5 + 0.1 * _RNG.normal(size=(7, 4)),)),
        ("two vectors", (np.array([[1.0, 0.0], [0.0, 1.0]]),)),
        ("3 × random vectors", (3 * _RANDOM,)),  # the spread does not change with the scale
    ],
    mistakes=(
        Mistake(
            "count each pair once and leave out a vector's distance to itself.",
            gives=lambda X: _distances(X).mean() / np.linalg.norm(X, axis=1).mean(),
        ),  # fmt: skip
        Mistake(
            "divide the mean pairwise distance by the mean length of the vectors (np.linalg.norm(X, axis=1).mean()).",
            gives=lambda X: _distances(X)[np.triu_indices(len(X), 1)].mean(),
        ),  # fmt: skip
    ),
    returns="one number",
    forbid=("course_utils", "my_spread", "for"),
    forbid_hint="compute the spread yourself with numpy, all (N, N) distances at once with broadcasting "
    "(X[:, None] - X[None]), then the mean over pairs of different rows.",
    atol=1e-6,
)


def check_pairwise_spread(fn) -> bool:
    """Exercise 1: fn(X (N, dim)) -> mean pairwise Euclidean distance / mean vector length (SPREAD), with numpy:
    the course's code, the notebook's my_spread and a Python loop are refused. Used in notebook 06 (its Exercises)."""
    return SPREAD.check(fn)


@functools.cache
def _snapshots(seed: int):
    from course_utils.training.zoo import load_standard_model

    return load_standard_model("learned", seed).snapshots


def _shifts(key: str, epoch: int = 30, distance=relative_distance) -> dict[str, float]:
    snaps = _snapshots(0)[epoch]
    return {w: distance(*(word_vector(snaps[s], key, w) for s in PAIR)) for w in SHARED}


def _compare(my_prediction, want) -> str:
    if my_prediction is None:
        return "You made no prediction; write one down first next time."
    guess = my_prediction.strip().lower() if isinstance(my_prediction, str) else my_prediction
    if isinstance(want, int) and isinstance(guess, str) and guess.isdigit():
        guess = int(guess)  # "1" for head 1
    return "Your prediction was right." if guess == want else f"You predicted {my_prediction!r}."


def _word_numbers(got, want) -> dict[str, float]:
    if not isinstance(got, dict) or set(got) != set(want):
        raise TypeError("not the four words")
    return {w: float(v) for w, v in got.items()}


def most_changed_spec() -> Exercise:
    """Exercise 2's spec: {word: relative distance of its encoder layer-1 x1 between the two sentences of PAIR,
    epoch 30, seed 0}, with its typical mistakes. Used in notebook 06 (an exercise)."""
    return Exercise(
        todo="fill in shifts = {word: relative distance} for we, want, to, eat, then re-run.",
        success="",
        reference=_shifts("encoder.1.self.x1"),
        mistakes=(
            Mistake("these are layer 0's x1 vectors; the exercise asks for layer 1's.", _shifts("encoder.0.self.x1")),
            Mistake(
                "that is the cosine distance; use relative_distance (‖a − b‖ / mean length).",
                _shifts("encoder.1.self.x1", distance=cosine_distance),
            ),  # fmt: skip
            Mistake("that is epoch 1; use the snapshot of epoch 30.", _shifts("encoder.1.self.x1", epoch=1)),
            Mistake("that is epoch 15; use the snapshot of epoch 30.", _shifts("encoder.1.self.x1", epoch=15)),
            Mistake("that is the layer's output; use its x1.", _shifts("encoder.1.layer_out")),
        ),
        otherwise="not these numbers: for each word compare word_vector(snaps[30][A], key, word) with the same word "
        "in snaps[30][B], key 'encoder.1.self.x1'.",
        returns=f"a dict {{word: number}} with exactly the words {', '.join(SHARED)}",
        convert=_word_numbers,
        compare=lambda got, want: all(abs(got[w] - want[w]) < 1e-6 for w in want),
    )


def check_most_changed_word(shifts, my_prediction=None) -> bool:
    """Exercise 2: shifts as most_changed_spec() asks; my_prediction (the word guessed to move most) is compared,
    not graded. Used in notebook 06 (its Exercises section)."""
    spec = most_changed_spec()
    top = max(spec.reference, key=spec.reference.get)
    return dataclasses.replace(spec, success=f"right: {top!r} moves most. {_compare(my_prediction, top)}").check(shifts)


def head_shift(trace_a, trace_b, key: str, head: int, word: str = "eat") -> float:
    """The reference for exercise 3: relative distance between `word`'s vectors of one head in two traces.
    Used in notebook 06 (an exercise)."""
    return relative_distance(word_vector(trace_a, key, word, head), word_vector(trace_b, key, word, head))


def _head_cases():
    s0, s4 = _snapshots(0)[30], _snapshots(4)[30]
    places = [(s0, "encoder.0.self.x1", 0), (s0, "encoder.0.self.x1", 1), (s0, "encoder.1.self.q", 1)]
    places += [(s4, "encoder.1.self.x1", 0), (s4, "encoder.1.self.x1", 1)]
    return [(f"{key}, head {h}", (snaps[PAIR[0]], snaps[PAIR[1]], key, h)) for snaps, key, h in places]


def _eat(a, b, key, head):
    return word_vector(a, key, "eat", head), word_vector(b, key, "eat", head)


HEAD_SHIFT = Exercise(
    name="my_head_shift",
    todo="write the body of my_head_shift (it returns one number), then re-run the cell.",
    success="",
    reference=head_shift,
    cases=_head_cases,
    mistakes=(
        Mistake(
            "that uses both heads' numbers; take one head: trace.vectors(key, head).",
            gives=lambda a, b, key, head: head_shift(a, b, key, None),
        ),  # fmt: skip
        Mistake(
            "that is the cosine distance; divide ‖a − b‖ by the mean length instead.",
            gives=lambda *args: cosine_distance(*_eat(*args)),
        ),  # fmt: skip
        Mistake(
            "that is ‖a − b‖ alone; divide it by the mean length of a and b.",
            gives=lambda *args: float(np.linalg.norm(np.subtract(*_eat(*args)))),
        ),  # fmt: skip
    ),
    otherwise="compare with my_relative_distance.",
    returns="one number",
)


def check_head_shift(fn, my_prediction=None) -> bool:
    """Exercise 3: fn(trace_a, trace_b, key, head, word="eat") as head_shift (HEAD_SHIFT); my_prediction (0 or 1: the
    head of seed 4's encoder layer 1 whose x1 of 'eat' differs more) is compared, not graded.
    Used in notebook 06 (its Exercises section)."""
    d = [head_shift(*args) for _, args in _head_cases()[3:]]
    said = f"seed 4, encoder layer 1: head 0's x1 of 'eat' differs by {d[0]:.2f}, head 1's by {d[1]:.2f}."
    return dataclasses.replace(HEAD_SHIFT, success=f"{said} {_compare(my_prediction, int(np.argmax(d)))}").check(fn)
