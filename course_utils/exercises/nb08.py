"""Checkers for notebook 08 (five probe sentences: proper, nonsense, misleading)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from course_utils.exercises.framework import Exercise, Mistake, feedback, short
from course_utils.measures.similarity import mean_pairwise_cosine_distance

MISLEADING_AGAIN = "i can eat bread book"  # exercise 3: the misleading sentence with another food
MOVED_KEYS = {"encoder.0.self.x1": "can", "decoder.0.cross.x1": "kann"}  # exercise 2: key -> seed 0's mover
_CHECKED_KEYS = (*MOVED_KEYS, "encoder.1.layer_out", "decoder.1.layer_out")  # more keys: no hard-coded words


def _unit(V):
    return V / np.linalg.norm(V, axis=1, keepdims=True)


_RNG = np.random.default_rng(0)
WORD_SPREAD = Exercise(
    name="my_word_spread",
    todo="write the body of my_word_spread(V) (it returns one number), then re-run the cell.",
    success="your loop-free word spread matches the course's mean_pairwise_cosine_distance on every input.",
    reference=mean_pairwise_cosine_distance,
    cases=[
        (f"a {V.shape} input", (V,))
        for V in (
            _RNG.normal(size=(5, 64)),
            _RNG.normal(size=(2, 3)),
            3.0 * np.ones((4, 8)),
            np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]]),
        )
    ],
    mistakes=(
        Mistake(
            "that is the mean cosine (a similarity); use 1 - cosine, a distance (0 for equal directions).",
            gives=lambda V: 1 - mean_pairwise_cosine_distance(V),
        ),  # fmt: skip
        Mistake(
            "use only the pairs i < j (not i = j: a vector's distance to itself is 0).",
            gives=lambda V: float((1 - _unit(V) @ _unit(V).T).mean()),
        ),  # fmt: skip
        Mistake(
            "that is the Euclidean distance; use 1 - cosine.",
            gives=lambda V: float(np.linalg.norm(V[:, None] - V[None], axis=-1)[np.triu_indices(len(V), 1)].mean()),
        ),  # fmt: skip
    ),
    returns="one number",
    forbid=("course_utils", "scipy", "sklearn", "my_word_spread_of", "for"),
    forbid_hint="write it yourself: one matrix product for all cosines (no Python loop), then the pairs i < j.",
)


def check_word_spread(fn) -> bool:
    """Exercise 1: my_word_spread(V) -> mean over pairs i < j of 1 - cos(V[i], V[j]) (WORD_SPREAD), without a Python
    loop or ready-made code. Used in notebook 08 (its Exercises section)."""
    return WORD_SPREAD.check(fn)


def most_moved_words(seed_traces, key: str) -> dict[int, str]:
    """{seed: the shared word with the largest word spread at `key`} for {seed: five-sentence traces}.
    Used in notebook 08 (an exercise)."""
    from course_utils.measures.probing import word_spread

    return {s: max((sp := word_spread(traces, key)), key=sp.get) for s, traces in seed_traces.items()}


def _least(traces, key: str) -> str:
    from course_utils.measures.probing import word_spread

    return min((sp := word_spread(traces, key)), key=sp.get)


def _shared(got, traces, key) -> bool:
    from course_utils.measures.probing import shared_positions

    return got not in [w for _, w in shared_positions(traces, key)]


def _word(got, want) -> str:
    if not isinstance(got, str):
        raise TypeError("not a word")
    return got


MOST_MOVED = Exercise(
    name="most_moved",
    todo="write the body of most_moved(traces, key) (it returns one word), then re-run the cell.",
    success="",
    reference=lambda traces, key: most_moved_words({0: traces}, key)[0],
    mistakes=(
        Mistake("that is not one of the words all five sentences share.", when=_shared),
        Mistake(
            "that is the word that moves least: return the one with the largest spread (1 - cos: larger means "
            "further apart).",
            gives=_least,
        ),  # fmt: skip
    ),
    otherwise="another shared word moves more. Stack one word's vectors across the five sentences (row i: "
    "traces[i].vectors(key)[position]), not the words of one sentence.",
    returns="the word itself (a str)",
    convert=_word,
    compare=lambda got, want: got == want,
    forbid=("word_spread", "spread_table", "spread_pivot", "most_moved_words"),
    forbid_hint="it does the whole job. Stack each shared word's vectors from the five traces yourself and take "
    "their spread with my_word_spread.",
)


def check_most_moved(fn, seed_traces, predicted_can=None, predicted_kann=None) -> bool:
    """Exercise 2: most_moved(traces, key) -> the shared word whose vectors move most across the sentences
    (MOST_MOVED, on every seed and four keys); predicted_can / predicted_kann: the number of seeds (0-5) the learner
    guessed 'can' (encoder layer-0 x1) / 'kann' (cross-attention layer-0 x1) moves most on (compared, not graded).
    Used in notebook 08 (its Exercises section)."""
    from course_utils.measures.verdicts import seed_verdict
    from course_utils.trace.tracing import Trace

    runs = isinstance(seed_traces, dict) and seed_traces and all(
        isinstance(t, list | tuple) and len(t) == 5 and all(isinstance(x, Trace) for x in t) for t in seed_traces.values()
    )  # fmt: skip
    if not runs:
        return feedback(
            False, "", f"pass the notebook's seed_traces ({{seed: five traces}}), not {short(seed_traces)}."
        )
    for g in (predicted_can, predicted_kann):
        if g is not None and not (isinstance(g, int | np.integer) and not isinstance(g, bool) and 0 <= g <= 5):
            return feedback(False, "", f"predict with a whole number from 0 to 5, such as 3; got {g!r}.")
    lines, said = [], []
    for (key, word), guess in zip(MOVED_KEYS.items(), (predicted_can, predicted_kann)):
        found = most_moved_words(seed_traces, key)
        holds = {s: w == word for s, w in found.items()}
        lines.append(f"{key}: {word!r} moves most — {seed_verdict(holds)} (seed: word {found})")
        if guess is not None:
            n = sum(holds.values())
            said.append(f"{word}: you predicted {guess}, it is {n}" + (" (right)" if guess == n else ""))
    success = "; ".join(lines) + ". " + ("; ".join(said) + "." if said else "You made no prediction.")
    cases = [(f"seed {s}, {key}", (traces, key)) for key in _CHECKED_KEYS for s, traces in seed_traces.items()]
    return dataclasses.replace(MOST_MOVED, success=success, cases=cases).check(fn)


@functools.cache
def kept_objects(sentence: str = MISLEADING_AGAIN) -> dict[int, str]:
    """{seed: the English object whose German noun is in that seed's translation of `sentence`}.
    Used in notebook 08 (an exercise)."""
    from course_utils.core.model import translate
    from course_utils.training.zoo import SEEDS, load_standard_model

    german = {"brot": "bread", "buch": "book", "apfel": "apple", "zeitung": "newspaper"}
    words = {s: translate(load_standard_model("learned", s).model, sentence) for s in SEEDS}
    return {s: next((german[w] for w in words[s] if w in german), "neither") for s in SEEDS}


def _per_seed(got, want) -> dict:
    if not isinstance(got, dict) or set(got) != set(want):
        raise TypeError("not one answer per seed")
    return {s: str(v).strip().lower() for s, v in got.items()}


def check_kept_object(kept, my_prediction=None) -> bool:
    """Exercise 3: kept = {seed: "bread" or "book"}, the object each seed keeps in MISLEADING_AGAIN; my_prediction:
    the set of seeds guessed to keep 'book' (a list or tuple too; compared, not graded).
    Used in notebook 08 (its Exercises section)."""
    seeds = isinstance(my_prediction, set | frozenset | list | tuple) and all(
        isinstance(s, int | np.integer) and not isinstance(s, bool) for s in my_prediction
    )
    if my_prediction is not None and not seeds:
        return feedback(False, "", f"predict with a set of seed numbers, such as {{1, 2}}; got {short(my_prediction)}.")
    want = kept_objects()
    book = {s for s, v in want.items() if v == "book"}
    apple = sorted(s for s, v in kept_objects("i can eat apple book").items() if v == "book")
    guess = "You made no prediction." if my_prediction is None else f"You predicted {sorted(map(int, my_prediction))}."
    return Exercise(
        todo="fill in kept = {seed: 'bread' or 'book'} from each seed's translation.",
        success=f"the book survives on seeds {sorted(book)}, the bread on {sorted(set(want) - book)}; in 'i can eat "
        f"apple book' the book survived on seeds {apple}. {guess}",
        reference=want,
        mistakes=(
            Mistake(
                "answer with the English object ('bread' or 'book'), not the German noun.",
                when=lambda got: bool(set(got.values()) & {"brot", "buch"}),
            ),  # fmt: skip
        ),
        otherwise=f"some seed does not keep that object: translate '{MISLEADING_AGAIN}' with runs[seed].model and "
        "look which German noun is left.",
        returns=f"a dict with one answer for each seed {sorted(want)}, 'bread' or 'book'",
        convert=_per_seed,
        compare=lambda got, want: got == want,
    ).check(kept)
