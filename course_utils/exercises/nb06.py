"""Checkers for notebook 06 (epoch-by-epoch clustering of Q, K, V and the attention output)."""

from __future__ import annotations

import dataclasses

import numpy as np

from course_utils.exercises.framework import Exercise, Mistake, compared, standard_run
from course_utils.measures.clustering import PAIR, word_vector
from course_utils.measures.similarity import cosine_distance, pairwise_spread, relative_distance

SHARED = ("we", "want", "to", "eat")  # the words both sentences of PAIR share (exercise 2)
_RNG = np.random.default_rng(6)
_RANDOM = _RNG.normal(size=(12, 8))


def _unscaled(X, k: int = 1) -> float:  # the mean distance over the pairs above diagonal k
    X = np.asarray(X, dtype=float)
    return np.linalg.norm(X[:, None] - X[None], axis=-1)[np.triu_indices(len(X), k)].mean()


def _mean(X, k: int) -> float:
    return _unscaled(X, k) / np.linalg.norm(X, axis=1).mean()


SPREAD = Exercise(
    name="my_pairwise_spread",
    success="your pairwise spread matches clustering.pairwise_spread (two orthogonal unit vectors: √2 ≈ 1.414).",
    reference=pairwise_spread,
    cases=[
        ("random vectors", (_RANDOM,)),
        ("vectors around one point", (5 + 0.1 * _RNG.normal(size=(7, 4)),)),
        ("two vectors", (np.array([[1.0, 0.0], [0.0, 1.0]]),)),
        ("3 × random vectors", (3 * _RANDOM,)),  # the spread does not change with the scale
    ],
    mistakes=(
        Mistake("count each pair once and leave out a vector's distance to itself.", lambda X: _mean(X, k=0)),
        Mistake("divide by the mean length of the vectors (np.linalg.norm(X, axis=1).mean()).", _unscaled),
    ),
    returns="one number",
    forbid=("course_utils", "my_spread", "for"),
    forbid_hint="compute it with numpy, all (N, N) distances at once by broadcasting (X[:, None] - X[None]), then the mean over pairs of different rows.",
)
check_pairwise_spread = SPREAD.check  # Exercise 1, with numpy and without a Python loop


def _shifts(key: str, epoch: int = 30, distance=relative_distance) -> dict[str, float]:
    snaps = standard_run("learned", 0).snapshots[epoch]
    return {w: distance(*(word_vector(snaps[s], key, w) for s in PAIR)) for w in SHARED}


def most_changed_spec(my_prediction=None) -> Exercise:
    """Exercise 2: {word: relative distance of its encoder layer-1 x1 between PAIR's sentences}, seed 0, epoch 30. Used in notebook 06."""
    key = "encoder.1.self.x1"
    want = _shifts(key)
    top = max(want, key=want.get)
    return Exercise(
        todo="fill in shifts = {word: relative distance} for we, want, to, eat, then re-run.",
        success=f"right: {top!r} moves most. {compared(my_prediction, top)}",
        reference=want,
        mistakes=(
            Mistake("these are layer 0's x1 vectors; the exercise asks for layer 1's.", _shifts("encoder.0.self.x1")),
            Mistake("that is the cosine distance; use relative_distance.", _shifts(key, distance=cosine_distance)),
            Mistake("that is epoch 1; use the snapshot of epoch 30.", _shifts(key, epoch=1)),
            Mistake("that is epoch 15; use the snapshot of epoch 30.", _shifts(key, epoch=15)),
            Mistake("that is the layer's output; use its x1.", _shifts("encoder.1.layer_out")),
        ),
        otherwise="not these numbers: for each word compare word_vector(snaps[30][A], key, word) with snaps[30][B]'s, key 'encoder.1.self.x1'.",
        returns=f"a dict {{word: number}} with exactly the words {', '.join(SHARED)}",
    )


def check_most_changed_word(shifts, my_prediction=None) -> bool:
    """Exercise 2 (most_changed_spec); my_prediction (the word that moves most) is compared, not graded. Used in notebook 06."""
    return most_changed_spec(my_prediction).check(shifts)


def _head_shift(trace_a, trace_b, key: str, head: int, word: str = "eat") -> float:
    return relative_distance(word_vector(trace_a, key, word, head), word_vector(trace_b, key, word, head))


def _head_cases():
    s0, s4 = (standard_run("learned", seed).snapshots[30] for seed in (0, 4))
    places = [(s0, "encoder.0.self.x1", 0), (s0, "encoder.0.self.x1", 1), (s0, "encoder.1.self.q", 1)]
    places += [(s4, "encoder.1.self.x1", 0), (s4, "encoder.1.self.x1", 1)]
    return [(f"{key}, head {h}", (snaps[PAIR[0]], snaps[PAIR[1]], key, h)) for snaps, key, h in places]


def _eat(a, b, key, head):
    return word_vector(a, key, "eat", head), word_vector(b, key, "eat", head)


HEAD_SHIFT = Exercise(
    name="my_head_shift",
    success="",
    reference=_head_shift,
    cases=_head_cases,
    mistakes=(
        Mistake("that uses both heads; take head h's 32 numbers.", lambda a, b, k, h: _head_shift(a, b, k, None)),
        Mistake("that is the cosine distance; use ‖a − b‖ / mean length.", lambda *a: cosine_distance(*_eat(*a))),
        Mistake("that is ‖a − b‖ alone; divide by the mean length.", lambda *a: np.linalg.norm(np.subtract(*_eat(*a)))),
    ),
    otherwise="compare with my_relative_distance.",
    returns="one number",
)


def check_head_shift(fn, my_prediction=None) -> bool:
    """Exercise 3 (HEAD_SHIFT); my_prediction (the head of seed 4's layer 1 where eat's x1 differs more) is not graded. Used in notebook 06."""
    d = [_head_shift(*args) for _, args in _head_cases()[3:]]
    said = f"seed 4, encoder layer 1: head 0's x1 of 'eat' differs by {d[0]:.2f}, head 1's by {d[1]:.2f}."
    return dataclasses.replace(HEAD_SHIFT, success=f"{said} {compared(my_prediction, int(np.argmax(d)))}").check(fn)
