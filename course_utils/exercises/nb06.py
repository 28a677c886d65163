"""Checkers for notebook 06 (context enters a word only through attention; what Q and K are for)."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from course_utils.exercises.framework import Exercise, Mistake, compared, standard_run
from course_utils.measures.clustering import PAIR, word_vector
from course_utils.measures.similarity import cosine_distance, relative_distance

SHARED = ("we", "want", "to", "eat")  # the words both sentences of PAIR share (exercise 2)
_W = torch.softmax(torch.randn(2, 2, 4, 5, generator=torch.Generator().manual_seed(6)), -1)  # (batch, head, Tq, Tk)


def _even(w, name=""):  # every row of the weights uniform over the keys (no padding in these cases)
    return torch.ones_like(w) / w.shape[-1]


UNIFORM = Exercise(
    name="my_uniform",
    success="every row of your weights is 1/n over the n English words and sums to 1; the shape is unchanged.",
    reference=_even,
    cases=[("one sentence, one head", (_W[:1, :1], "decoder.0.cross.weights")), ("2 sentences, 2 heads", (_W, ""))],
    mistakes=(
        Mistake(
            "each row (the last axis: one German step over the English words) must sum to 1.",
            lambda w, n: torch.ones_like(w) / w.shape[-2],
        ),
        Mistake("divide by the number of English words, so that each row sums to 1.", lambda w, n: torch.ones_like(w)),
        Mistake("that is the trained pattern itself; replace it by the even one.", lambda w, n: w),
    ),
    returns="a tensor shaped like w",
    forbid=("course_utils", "uniform_attention"),
)
check_uniform = UNIFORM.check  # Exercise 1: break the query-key match yourself


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
