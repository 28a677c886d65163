"""Checkers for notebook 07 (word order and positional encoding)."""

from __future__ import annotations

import dataclasses
import functools
import numbers

import numpy as np

from course_utils.exercises.framework import Exercise, Mistake, feedback, not_answered, short
from course_utils.training.zoo import SEEDS  # exercise 3: the shipped seeds of the learned-PE model

MOVED = "can apple we eat"  # exercise 2: "we can eat apple" reordered (perm [1, 3, 0, 2], not its own inverse)
SYMMETRY = {  # exercise 1: what happens to each thing when the English words are reordered
    "encoder output, no PE": "equivariant",
    "decoder output for the same German input, no PE": "invariant",
    "encoder output, learned PE": "neither",
    "encoder layer-0 attention weights, no PE": "equivariant",
    "the translation, no PE": "invariant",
}
FIVE_WORDS = "i can eat apple book"  # exercise 3
FOUR_WORDS, FOUR_GERMAN = "we can eat apple", "wir können einen apfel essen"  # the prediction before the lineup


@functools.cache
def _model(name: str, seed: int = 0):
    from course_utils.training.zoo import load_standard_model

    return load_standard_model(name, seed).model


@functools.cache
def no_pe_weights(sentence: str) -> np.ndarray:
    """Encoder layer-0 attention weights (H, T, T) of the shipped no-PE model for one sentence (do not change it).
    Used in notebook 07 (an exercise)."""
    from course_utils.trace.tracing import run_with_trace

    key = "encoder.0.self.weights"
    return run_with_trace(_model("none"), sentence, names=[key])[key].double().numpy()


def _moved_cases():
    from course_utils.measures.probing import word_permutation

    return [("", (no_pe_weights(FOUR_WORDS), word_permutation(FOUR_WORDS.split(), MOVED.split())))]


def _back(W, p):
    inverse = list(np.argsort(p))
    return W[:, inverse][:, :, inverse]


MOVED_WEIGHTS = Exercise(
    name="moved",
    todo="write the body of moved(W_a, perm), then re-run.",
    success=f"moved(W_a, perm) equals the weights of '{MOVED}': rows and columns both moved with their words, P·W·Pᵀ.",
    reference=lambda W, p: no_pe_weights(MOVED),
    cases=_moved_cases,
    mistakes=(
        Mistake(
            "nothing moved: that would be invariance. Row i of the new weights belongs to the new i-th word.",
            gives=lambda W, p: W,
        ),  # fmt: skip
        Mistake(
            "only the rows (queries) moved; each key column belongs to a word too: move the columns as well.",
            gives=lambda W, p: W[:, p],
        ),  # fmt: skip
        Mistake(
            "only the columns (keys) moved; each query row belongs to a word too: move the rows as well.",
            gives=lambda W, p: W[:, :, p],
        ),  # fmt: skip
        Mistake("moved the other way round: row i of the new weights is row perm[i] of the old.", gives=_back),
    ),
    otherwise=f"not the weights of '{MOVED}' yet.",
    returns="an array of weights (heads, queries, keys)",
    run=lambda f, args: f(args[0].copy(), list(args[1])),
    atol=1e-9,
)


def check_moved_weights(moved) -> bool:
    """Exercise 2: moved(W_a, perm) turns the no-PE encoder layer-0 weights of FOUR_WORDS into those of MOVED
    (MOVED_WEIGHTS). Used in notebook 07 (its Exercises section)."""
    return MOVED_WEIGHTS.check(moved)


def _classes(got, want) -> dict:
    if not isinstance(got, dict) or set(got) != set(want):
        raise TypeError("not the five items")
    got = {k: str(v).strip().lower() for k, v in got.items()}
    if set(got.values()) - {"invariant", "equivariant", "neither"}:
        raise ValueError("another word")
    return got


SYMMETRY_SPEC = Exercise(
    todo="fill in each prediction ('invariant', 'equivariant' or 'neither').",
    success="all five right: invariant = unchanged, equivariant = moved along with the words.",
    reference=SYMMETRY,
    mistakes=(
        Mistake(
            "not everything is invariant: an encoder output moves along with its words (equivariant).",
            gives=dict.fromkeys(SYMMETRY, "invariant"),
        ),  # fmt: skip
    ),
    otherwise="not all five right yet. Invariant: the same vectors at the same positions. Equivariant: the same "
    "vectors, moved with their words. Neither: the vectors change.",
    returns=f"a dict with exactly the keys {list(SYMMETRY)}, each 'invariant', 'equivariant' or 'neither'",
    convert=_classes,
    compare=lambda got, want: got == want,
)


def check_symmetry(answers) -> bool:
    """Exercise 1: classify each item of SYMMETRY as "invariant", "equivariant" or "neither" (SYMMETRY_SPEC).
    Used in notebook 07 (Three positional encodings)."""
    unanswered = isinstance(answers, dict) and all(v is None for v in answers.values())
    return SYMMETRY_SPEC.check(None if unanswered else answers)


@functools.cache
def _distinct(model, sentence: str) -> int:
    from course_utils.measures.probing import distinct_translations

    return len(distinct_translations(model, sentence))


def distinct_counts(sentence: str = FIVE_WORDS) -> dict[int, int]:
    """The true answer of exercise 3: distinct translations over all orderings, per seed of the learned-PE model.
    Used in notebook 07 (an exercise)."""
    return {s: _distinct(_model("learned", s), sentence) for s in SEEDS}


def _count(got, want) -> int:
    if isinstance(got, bool) or not isinstance(got, numbers.Integral):
        raise TypeError("not a whole number")
    return int(got)


DISTINCT = Exercise(
    name="count_translations",
    todo="write the body of count_translations(model, sentence), then re-run.",
    success="",
    reference=_distinct,
    cases=lambda: [(f"seed {s}", (_model("learned", s), FIVE_WORDS)) for s in SEEDS],
    mistakes=(
        Mistake(
            "120 is the number of orderings. Count the different German outputs: collect them in a set.",
            when=lambda got, model, sentence: got == 120,
        ),  # fmt: skip
    ),
    otherwise="translate every ordering (itertools.permutations) and count the different outputs (a set of strings).",
    returns="one whole number (how many different translations)",
    convert=_count,
    compare=lambda got, want: got == want,
    forbid=("distinct_translations", "distinct_counts", "translate_batch"),
    forbid_hint="that does the counting for you: write the loop over itertools.permutations yourself, translate each "
    "ordering and collect the German outputs in a set.",
)


def check_distinct(count_translations, one_each=None) -> bool:
    """Exercise 3: count_translations(model, sentence) -> how many different German translations over all orderings
    of the words (DISTINCT), on the five learned-PE seeds with FIVE_WORDS; one_each: the learner's prediction, True if
    every seed gives a single translation, judged once the counts are right. Used in notebook 07 (its Exercises)."""
    prediction = ""
    if isinstance(one_each, bool | np.bool_):
        single = all(n == 1 for n in distinct_counts().values())
        prediction = f" Your prediction one_each = {bool(one_each)} was {'' if one_each == single else 'not '}right."
    elif one_each is not None:
        prediction = f" (one_each should be True or False; got {short(one_each)}.)"
    success = f"right, {distinct_counts()}: a model that sees positions may still ignore them; only where training "
    success += "left a choice (two objects) can position decide, and each seed decides its own way." + prediction
    return dataclasses.replace(DISTINCT, success=success).check(count_translations)


def check_orderings(my_orderings, model) -> bool:
    """Prediction: of the 24 orderings of FOUR_WORDS, how many does `model` translate as FOUR_GERMAN (within 2)?
    Used in notebook 07 (What the models translate)."""
    from course_utils.measures.probing import distinct_translations

    if my_orderings is None:
        return not_answered("write your guess (a whole number from 0 to 24) into my_orderings, then re-run.")
    if isinstance(my_orderings, bool) or not isinstance(my_orderings, numbers.Integral) or not 0 <= my_orderings <= 24:
        return feedback(False, "", f"my_orderings must be a whole number from 0 to 24; got {short(my_orderings)}.")
    if not (hasattr(model, "src_vocab") and callable(model)):
        return feedback(False, "", f"pass a course model as the second argument (runs[0].model), not {short(model)}.")
    truth = distinct_translations(model, FOUR_WORDS).get(FOUR_GERMAN, 0)
    said = f"you guessed {int(my_orderings)}; the model gives '{FOUR_GERMAN}' for {truth} of the 24 orderings"
    return feedback(abs(int(my_orderings) - truth) <= 2, said + ".", said + ": it sees the positions, but on this "
                    "corpus the words alone settle the translation (see below).")  # fmt: skip
