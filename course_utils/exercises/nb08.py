"""Checkers for notebook 08 (five probe sentences: proper, nonsense, misleading)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from course_utils.exercises.framework import Exercise, Mistake, compared, standard_run
from course_utils.measures.similarity import mean_pairwise_cosine_distance

MISLEADING_AGAIN = "i can eat bread book"  # exercise 3: the misleading sentence with another food
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


def _spreads(traces, key: str) -> dict[str, float]:
    from course_utils.measures.probing import word_spread

    return word_spread(traces, key)


def _not_shared(got, traces, key) -> bool:
    from course_utils.measures.probing import shared_positions

    return got not in [w for _, w in shared_positions(traces, key)]


MOST_MOVED = Exercise(
    name="most_moved",
    success="",
    reference=lambda traces, key: max((sp := _spreads(traces, key)), key=sp.get),
    mistakes=(
        Mistake("that is not one of the words all five sentences share.", when=_not_shared),
        Mistake("moves least; take the largest spread.", lambda t, key: min(sp := _spreads(t, key), key=sp.get)),
    ),
    otherwise="another shared word moves more. Stack one word's vectors across the five sentences (row i: traces[i].vectors(key)[position]).",
    returns="the word itself (a str)",
    forbid=("word_spread", "spread_table", "spread_pivot"),
    forbid_hint="it does the whole job. Stack each shared word's vectors from the five traces yourself, then my_word_spread.",
)


def check_most_moved(fn, seed_traces, predicted_can=None, predicted_kann=None) -> bool:
    """Exercise 2 (MOST_MOVED, every seed, four keys); predicted_can / _kann (on how many seeds) are not graded. Used in notebook 08."""
    from course_utils.measures.verdicts import seed_verdict

    said = []
    for (key, word), guess in zip(MOVED_KEYS.items(), (predicted_can, predicted_kann)):
        found = {s: MOST_MOVED.reference(traces, key) for s, traces in seed_traces.items()}
        holds = {s: w == word for s, w in found.items()}
        said.append(f"{key}: {word!r} moves most — {seed_verdict(holds)} (seed: word {found}); {word}: ")
        said[-1] += compared(guess, sum(holds.values()))
    cases = [(f"seed {s}, {key}", (traces, key)) for key in _CHECKED_KEYS for s, traces in seed_traces.items()]
    return dataclasses.replace(MOST_MOVED, success=" ".join(said), cases=cases).check(fn)


@functools.cache
def kept_objects(sentence: str = MISLEADING_AGAIN) -> dict[int, str]:
    """{seed: the English object its translation of `sentence` keeps}. Used in notebook 08 (exercise 3's check)."""
    from course_utils.core.model import translate
    from course_utils.training.zoo import SEEDS

    german = {"brot": "bread", "buch": "book", "apfel": "apple", "zeitung": "newspaper"}
    words = {s: translate(standard_run("learned", s).model, sentence) for s in SEEDS}
    return {s: next((german[w] for w in words[s] if w in german), "neither") for s in SEEDS}


def check_kept_object(kept, my_prediction=None) -> bool:
    """Exercise 3: kept = {seed: "bread" or "book"} in MISLEADING_AGAIN; my_prediction (the 'book' seeds) is not graded. Used in notebook 08."""
    want = kept_objects()
    book = sorted(s for s, v in want.items() if v == "book")
    apple = sorted(s for s, v in kept_objects("i can eat apple book").items() if v == "book")
    return Exercise(
        todo="fill in kept = {seed: 'bread' or 'book'} from each seed's translation.",
        success=f"the book survives on seeds {book}, the bread on {sorted(set(want) - set(book))}; in 'i can eat apple book' on seeds {apple}. {compared(my_prediction, book)}",
        reference=want,
        mistakes=(
            Mistake("answer in English: 'bread' or 'book'.", when=lambda got: set(got.values()) & {"brot", "buch"}),
        ),
        otherwise=f"some seed keeps the other object: translate '{MISLEADING_AGAIN}' with runs[seed].model.",
        returns=f"a dict with one answer for each seed {sorted(want)}, 'bread' or 'book'",
    ).check(kept)
