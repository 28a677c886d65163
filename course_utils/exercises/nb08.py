"""Checkers for notebook 08 (five probe sentences: proper, nonsense, misleading)."""

from __future__ import annotations

import inspect

import numpy as np

from course_utils.exercises import (
    calls_course_helper,
    calls_to,
    feedback,
    learner_number,
    no_function,
    not_answered,
    python_loops,
)

MISLEADING_AGAIN = "i can eat bread book"  # exercise 3: the misleading sentence with another food
MOVED_KEYS = {"encoder.0.self.x1": "can", "decoder.0.cross.x1": "kann"}  # exercise 2: key -> seed 0's mover
_CHECKED_KEYS = (*MOVED_KEYS, "encoder.1.layer_out", "decoder.1.layer_out")  # more keys: no hard-coded words


SPREAD_HELPER = (
    "the numbers are right, but your function calls {name}, which computes the spread for you (with a loop inside). "
    "Write it yourself: one matrix product for all cosines, then the pairs i < j."
)
WHOLE_JOB = (
    "your function calls the course's {name}, which does the whole job. Stack each shared word's vectors from the "
    "five traces yourself and take their spread with my_word_spread (or my_word_spread_of)."
)


def _course_code(obj, allowed=()) -> bool:
    """The course's own code (any function of course_utils, except `allowed` by name) or a library's ready-made
    pairwise distance (scipy.spatial.distance, sklearn.metrics): what the exercises ask the learner to write."""
    if inspect.ismodule(obj) or getattr(obj, "__name__", None) in allowed:
        return False
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and module.split(".")[0] == "course_utils" or module in _LIBRARY_DISTANCES


_LIBRARY_DISTANCES = ("scipy.spatial.distance", "sklearn.metrics.pairwise", "sklearn.metrics._pairwise")


def _ready_made(fn, allowed, what: str) -> bool:
    """True (and the ❌ line printed) when fn is, or calls, the course's own code or a library distance."""
    used = (
        [getattr(fn, "__name__", "it")]
        if _course_code(fn, allowed)
        else calls_to(fn, lambda o: _course_code(o, allowed))
    )
    if used:
        feedback(False, "", f"your function uses {used[0]}, ready-made code; {what}")
    return bool(used)


def _prediction(guess, low: int, high: int, example: str):
    """None (no guess), an int from low to high, or False with a ❌ line printed (any other type or value)."""
    if guess is None or isinstance(guess, (int, np.integer)) and not isinstance(guess, bool) and low <= guess <= high:
        return guess
    return feedback(False, "", f"predict with a whole number from {low} to {high}, such as {example}; got {guess!r}.")


def _five_sentence_runs(seed_traces) -> bool:
    """True when seed_traces is {seed: [five Traces]}, as the notebook builds it; else False with a ❌ line."""
    from course_utils.trace.tracing import Trace

    if (
        isinstance(seed_traces, dict)
        and seed_traces
        and all(
            isinstance(t, (list, tuple)) and len(t) == 5 and all(isinstance(x, Trace) for x in t)
            for t in seed_traces.values()
        )
    ):
        return True
    return feedback(
        False, "", f"pass the notebook's seed_traces ({{seed: five traces}}), not {type(seed_traces).__name__}."
    )


def check_word_spread(fn) -> bool:
    """Exercise 1: my_word_spread(V) -> mean over pairs i < j of 1 - cos(V[i], V[j]), for V of shape (n, dim),
    without a Python loop.
    Used in notebook 08 (its Exercises section)."""
    from course_utils.measures.similarity import mean_pairwise_cosine_distance

    not_yet = "write the body of my_word_spread(V) (it returns one number), then re-run the cell."
    if no_function(fn, not_yet, "pass your function itself, e.g. check_word_spread(my_word_spread)."):
        return False
    rng = np.random.default_rng(0)
    cases = [
        rng.normal(size=(5, 64)),
        rng.normal(size=(2, 3)),
        3.0 * np.ones((4, 8)),
        np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]]),
    ]
    for V in cases:
        got = learner_number(fn, V.copy(), not_yet)
        if got is False:
            return False
        want = mean_pairwise_cosine_distance(V)
        if not abs(got - want) < 1e-6:
            return feedback(
                False,
                "",
                f"for a ({V.shape[0]}, {V.shape[1]}) input you return {got:.4f}, expected {want:.4f}. "
                "Use 1 - cosine (a distance, 0 for equal directions) and only pairs i < j (not i = j).",
            )
    ready_made = ("my_word_spread_of", "mean_pairwise_cosine_distance", "word_spread")
    if calls_course_helper(fn, ready_made, SPREAD_HELPER):
        return False
    if _ready_made(fn, (), "write it yourself: one matrix product for all cosines, then the pairs i < j."):
        return False
    loops = python_loops(fn)
    if loops:
        return feedback(
            False,
            "",
            f"the numbers are right, but your function has a Python loop: {', '.join(loops)}. Build the (n, n) "
            "matrix of all cosines with one matrix product instead, then pick the pairs i < j.",
        )
    return feedback(
        True, "your loop-free word spread matches the course's mean_pairwise_cosine_distance on every input.", ""
    )


def most_moved_words(seed_traces, key: str) -> dict[int, str]:
    """{seed: the shared word with the largest word spread at `key`} for {seed: five-sentence traces}.
    Used in notebook 08 (an exercise)."""
    from course_utils.measures.probing import word_spread

    out = {}
    for s, traces in seed_traces.items():
        spreads = word_spread(traces, key)
        out[s] = max(spreads, key=spreads.get)
    return out


def check_most_moved(fn, seed_traces, predicted_can=None, predicted_kann=None) -> bool:
    """Exercise 2: most_moved(traces, key) -> the shared word whose vectors move most across the sentences
    (largest word spread), written without the course's spread helpers; predicted_can / predicted_kann: the number
    of seeds (0-5) the learner guessed 'can' (encoder layer-0 X1) / 'kann' (cross-attention layer-0 X1) moves
    most on (compared, not graded).
    Used in notebook 08 (its Exercises section)."""
    from course_utils.measures.probing import shared_positions, word_spread
    from course_utils.measures.tables import seed_verdict

    not_yet = "write the body of most_moved(traces, key) (it returns one word), then re-run the cell."
    if no_function(fn, not_yet, "pass your function itself, e.g. check_most_moved(most_moved, seed_traces, ...)."):
        return False
    if not _five_sentence_runs(seed_traces):
        return False
    guesses = []
    for g in (predicted_can, predicted_kann):
        guesses.append(_prediction(g, 0, 5, "3"))
        if guesses[-1] is False:
            return False
    helpers = ("word_spread", "spread_table", "spread_pivot", "most_moved_words")
    if calls_course_helper(fn, helpers, WHOLE_JOB):
        return False
    mine = "stack each shared word's vectors yourself and take their spread with my_word_spread."
    if _ready_made(fn, ("shared_positions", "mean_pairwise_cosine_distance"), mine):
        return False
    found = {}
    for key in _CHECKED_KEYS:
        for s, traces in seed_traces.items():
            try:
                got = fn(traces, key)
            except Exception as exc:  # the learner's code may fail in any way
                return feedback(False, "", f"seed {s}, {key}: your function raised {type(exc).__name__}: {exc}")
            if got is None:
                return not_answered(not_yet)
            words = [w for _, w in shared_positions(traces, key)]
            if not isinstance(got, str):
                return feedback(False, "", f"return the word itself (one of {words}), not {type(got).__name__}.")
            if got not in words:
                return feedback(False, "", f"seed {s}, {key}: {got!r} is not one of the shared words {words}.")
            spreads = word_spread(traces, key)
            if got != max(spreads, key=spreads.get):
                hint = (
                    "that is the word that moves least: return the one with the largest spread (1 - cos: larger "
                    "means further apart)."
                    if got == min(spreads, key=spreads.get)
                    else "another shared word moves more. Stack one word's vectors across the five sentences "
                    "(row i: traces[i].vectors(key)[position]), not the words of one sentence."
                )
                return feedback(False, "", f"seed {s}, {key}: you return {got!r}, but {hint}")
            found[(key, s)] = got
    lines, said = [], []
    for (key, word), guess in zip(MOVED_KEYS.items(), guesses):
        holds = {s: found[(key, s)] == word for s in seed_traces}
        movers = ", ".join(f"{s}: {found[(key, s)]}" for s in seed_traces)
        lines.append(f"{key}: {word!r} moves most — {seed_verdict(holds)} (seed: word {movers})")
        n = sum(holds.values())
        if guess is not None:
            said.append(f"{word}: you predicted {guess}, it is {n}" + (" (right)" if guess == n else ""))
    guess = "; ".join(said) + "." if said else "You made no prediction; write one down first next time."
    return feedback(True, "; ".join(lines) + ". " + guess, "")


def kept_objects(sentence: str = MISLEADING_AGAIN) -> dict[int, str]:
    """{seed: the English object whose German noun is in that seed's translation of `sentence`}.
    Used in notebook 08 (an exercise)."""
    from course_utils.core.model import translate
    from course_utils.training.zoo import SEEDS, load_standard_model

    german = {"brot": "bread", "buch": "book", "apfel": "apple", "zeitung": "newspaper"}
    out = {}
    for s in SEEDS:
        words = translate(load_standard_model("learned", s).model, sentence)
        out[s] = next((german[w] for w in words if w in german), "neither")
    return out


def check_kept_object(kept, my_prediction=None) -> bool:
    """Exercise 3: kept = {seed: "bread" or "book"}, the object each seed keeps in 'i can eat bread book';
    my_prediction: the set of seeds the learner guessed keep 'book' (compared, not graded; a list or tuple of seed
    numbers is read as a set, anything else gets a ❌ line asking for a set).
    Used in notebook 08 (its Exercises section)."""
    if my_prediction is not None:
        if not isinstance(my_prediction, (set, frozenset, list, tuple)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in my_prediction
        ):
            return feedback(
                False,
                "",
                f"predict with a set of seed numbers, such as {{1, 2}}; got {my_prediction!r} "
                f"({type(my_prediction).__name__}).",
            )
        my_prediction = {int(s) for s in my_prediction}
    want = kept_objects()
    if kept is None:
        return not_answered("fill in kept = {seed: 'bread' or 'book'} from each seed's translation.")
    if not isinstance(kept, dict):
        return feedback(False, "", f"kept should be a dict {{seed: 'bread' or 'book'}}, not {type(kept).__name__}.")
    if set(kept) != set(want):
        return feedback(False, "", f"give one answer for each seed {sorted(want)}; you have {sorted(kept, key=str)}.")
    values = {s: str(v).strip().lower() for s, v in kept.items()}
    if set(values.values()) & {"brot", "buch"}:
        return feedback(False, "", "answer with the English object ('bread' or 'book'), not the German noun.")
    wrong = [s for s in want if values[s] != want[s]]
    if wrong:
        return feedback(
            False,
            "",
            f"seed {wrong[0]} does not keep {values[wrong[0]]!r}: translate '{MISLEADING_AGAIN}' with "
            f"runs[{wrong[0]}].model and look which German noun is left.",
        )
    book = {s for s, v in want.items() if v == "book"}
    apple_book = {s for s, v in kept_objects("i can eat apple book").items() if v == "book"}
    if my_prediction is None:
        guess = "You made no prediction; write one down first next time."
    elif set(my_prediction) == book:
        guess = "Your prediction was right."
    else:
        guess = f"You predicted {sorted(my_prediction)}."
    return feedback(
        True,
        f"the book survives on seeds {sorted(book)}, the bread on {sorted(set(want) - book)}; in 'i can eat apple "
        f"book' the book survived on seeds {sorted(apple_book)}. {guess}",
        "",
    )
