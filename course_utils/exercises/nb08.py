"""Checkers for notebook 08 (probe sentences: what changes when one word changes; the KV cache)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import torch

from course_utils.exercises.framework import Exercise, Mistake, check_choice, compared
from course_utils.measures.probing import shared_positions, word_spread
from course_utils.measures.similarity import mean_pairwise_cosine_distance

MOVED_KEYS = {"encoder.0.self.x1": "can", "decoder.0.cross.x1": "kann"}  # exercise 2: key -> seed 0's mover
_CHECKED_KEYS = (*MOVED_KEYS, "encoder.1.layer_out", "decoder.1.layer_out")  # more keys: no hard-coded words


def _unit(V):
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def _euclidean(V):
    return float(np.linalg.norm(V[:, None] - V[None], axis=-1)[np.triu_indices(len(V), 1)].mean())


_RNG = np.random.default_rng(0)
_OPPOSITE = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]])  # cos = -1 for a pair
_INPUTS = (_RNG.normal(size=(5, 64)), _RNG.normal(size=(2, 3)), 3.0 * np.ones((4, 8)), _OPPOSITE)
WORD_SPREAD = Exercise(
    name="my_word_spread",
    success="your loop-free word spread matches the course's mean_pairwise_cosine_distance on every input.",
    reference=mean_pairwise_cosine_distance,
    cases=[(f"a {V.shape} input", (V,)) for V in _INPUTS],
    mistakes=(
        Mistake("that is the mean cosine; use 1 - cosine.", lambda V: 1 - mean_pairwise_cosine_distance(V)),
        Mistake("use only the pairs i < j (not i = j).", gives=lambda V: float((1 - _unit(V) @ _unit(V).T).mean())),
        Mistake("that is the Euclidean distance; use 1 - cosine.", gives=_euclidean),
    ),
    returns="one number",
    forbid=("course_utils", "scipy", "sklearn", "my_word_spread_of", "for"),
    forbid_hint="write it yourself: one matrix product for all cosines (no Python loop), then the pairs i < j.",
)
check_word_spread = WORD_SPREAD.check  # Exercise 1


MOST_MOVED = Exercise(
    name="most_moved",
    success="",
    reference=lambda traces, key: max((sp := word_spread(traces, key)), key=sp.get),
    mistakes=(
        Mistake(
            "that is not one of the words all five sentences share.",
            when=lambda got, t, key: got not in dict(shared_positions(t, key)).values(),
        ),
        Mistake("moves least; take the largest spread.", lambda t, key: min(sp := word_spread(t, key), key=sp.get)),
    ),
    otherwise="another shared word moves more. Stack one word's vectors across the five sentences (row i: traces[i].vectors(key)[position]).",
    returns="the word itself (a str)",
    forbid=("word_spread", "spread_table", "spread_pivot"),
    forbid_hint="it does the whole job. Stack each shared word's vectors from the five traces yourself, then my_word_spread.",
)


def check_most_moved(fn, seed_traces, predicted_can=None, predicted_kann=None) -> bool:
    """Exercise 2 (MOST_MOVED, every seed, four keys); predicted_can / _kann (on how many seeds) are not graded. Used in notebook 08."""
    said = []
    for (key, word), guess in zip(MOVED_KEYS.items(), (predicted_can, predicted_kann)):
        found = {s: MOST_MOVED.reference(traces, key) for s, traces in seed_traces.items()}
        said.append(f"{key}: the word that moves most on each seed {found}; {word}: ")
        said[-1] += compared(guess, sum(w == word for w in found.values()))
    cases = [(f"seed {s}, {key}", (traces, key)) for key in _CHECKED_KEYS for s, traces in seed_traces.items()]
    return dataclasses.replace(MOST_MOVED, success=" ".join(said), cases=cases).check(fn)


def check_earlier_output(my_prediction) -> bool:
    """The cache section's prediction: "changes" or "stays" (an earlier word's output, causal mask, a word appended). Used in notebook 08."""
    return check_choice(
        my_prediction,
        "stays",
        {"stays": "", "changes": "with the causal mask an earlier row cannot see a later word."},
        todo='set my_prediction to "changes" or "stays", then re-run this cell.',
        success="with the causal mask an earlier row may only look at itself and the words before it: it reads the same keys and values as before, so its output stays. The next cells show it.",
    )


def _step(q, k, v, K, V, grow=True, scale=True):  # the reference (and its mistakes): one step of cached attention
    K2, V2 = torch.cat([K, k], -2), torch.cat([V, v], -2)
    keys, values = (K2, V2) if grow else (K, V)
    return torch.softmax(q @ keys.transpose(-2, -1) / (q.shape[-1] ** 0.5 if scale else 1), -1) @ values, K2, V2


_QKV = [torch.as_tensor(_RNG.normal(size=(2, n, 4))) for n in (1, 1, 1, 3, 3, 0, 0)]
CACHED_STEP = Exercise(
    name="cached_step",
    success="out is the last row of causal attention over all the words so far, and each cache grew by one row.",
    reference=_step,
    cases=[("a cache of 3 words", tuple(_QKV[:5])), ("the first step, an empty cache", (*_QKV[:3], *_QKV[5:]))],
    mistakes=(
        Mistake("append k and v first: the new word sees itself.", gives=functools.partial(_step, grow=False)),
        Mistake("divide the scores by √dh, as in notebook 03.", gives=functools.partial(_step, scale=False)),
        Mistake("return the grown caches.", gives=lambda q, k, v, K, V: (_step(q, k, v, K, V)[0], K, V)),
    ),
    returns="(out, K, V): three tensors",
)
check_cached_step = CACHED_STEP.check  # Exercise 3
