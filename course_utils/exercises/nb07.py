"""Checkers for notebook 07 (word order and positional encoding)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from course_utils.exercises.framework import Exercise, Mistake, compared, standard_run, whole
from course_utils.training.zoo import SEEDS  # exercise 3: the shipped seeds of the learned-PE model

MOVED = "can apple we eat"  # exercise 2: "we can eat apple" reordered (perm [1, 3, 0, 2], not its own inverse)
SYMMETRY = {  # exercise 1: what happens to each thing when the English words are reordered
    "encoder output, no PE": "equivariant",
    "decoder output for the same German input, no PE": "invariant",
    "encoder output, learned PE": "neither",
    "encoder layer-0 attention weights, no PE": "equivariant",
    "the translation, no PE": "invariant",
}
FIVE_WORDS, FOUR_WORDS, FOUR_GERMAN = "i can eat apple book", "we can eat apple", "wir können einen apfel essen"


@functools.cache
def _no_pe_weights(sentence: str) -> np.ndarray:
    from course_utils.trace.tracing import run_with_trace

    key = "encoder.0.self.weights"
    return run_with_trace(standard_run("none").model, sentence, names=[key])[key].double().numpy()


MOVED_WEIGHTS = Exercise(
    name="moved",
    success=f"moved(W_a, perm) equals the weights of '{MOVED}': rows and columns both moved with their words, P·W·Pᵀ.",
    reference=lambda W, p: _no_pe_weights(MOVED),
    cases=lambda: [("", (_no_pe_weights(FOUR_WORDS), [1, 3, 0, 2]))],  # perm: MOVED in FOUR_WORDS
    mistakes=(
        Mistake("nothing moved (that is invariance); row i now belongs to the new i-th word.", gives=lambda W, p: W),
        Mistake("only the rows (queries) moved; move the key columns with them too.", gives=lambda W, p: W[:, p]),
        Mistake("only the columns (keys) moved; move the query rows with them too.", gives=lambda W, p: W[:, :, p]),
        Mistake(
            "moved the other way round: row i of the new weights is row perm[i] of the old.",
            gives=lambda W, p: W[:, np.argsort(p)][:, :, np.argsort(p)],
        ),
    ),
    otherwise=f"not the weights of '{MOVED}' yet.",
    returns="an array of weights (heads, queries, keys)",
    run=lambda f, args: f(args[0].copy(), list(args[1])),
    atol=1e-9,
)
check_moved_weights = MOVED_WEIGHTS.check  # Exercise 2


SYMMETRY_SPEC = Exercise(
    todo="fill in each prediction ('invariant', 'equivariant' or 'neither').",
    success="all five right: invariant = unchanged, equivariant = moved along with the words.",
    reference=SYMMETRY,
    mistakes=(
        Mistake(
            "answer each with 'invariant', 'equivariant' or 'neither'.",
            when=lambda got: set(got.values()) - {"invariant", "equivariant", "neither"},
        ),
        Mistake("an encoder output moves with its words: equivariant.", gives=dict.fromkeys(SYMMETRY, "invariant")),
    ),
    otherwise="not all five right yet. Invariant: the same vectors at the same positions. Equivariant: the same vectors, moved with their words. Neither: the vectors change.",
    returns=f"a dict with exactly the keys {list(SYMMETRY)}",
)


def check_symmetry(answers) -> bool:
    """Exercise 1 (SYMMETRY_SPEC), in notebook 07's first section; checked after the trained models. Used in notebook 07."""
    unanswered = isinstance(answers, dict) and all(v is None for v in answers.values())
    return SYMMETRY_SPEC.check(None if unanswered else answers)


@functools.cache
def _counts(model, sentence: str) -> dict:
    from course_utils.measures.probing import distinct_translations

    return distinct_translations(model, sentence)  # {German: how many orderings give it}


DISTINCT = Exercise(
    name="count_translations",
    success="",
    reference=lambda model, sentence: len(_counts(model, sentence)),
    cases=lambda: [(f"seed {s}", (standard_run("learned", s).model, FIVE_WORDS)) for s in SEEDS],
    mistakes=(
        Mistake("120 counts the orderings; count the different outputs (a set).", when=lambda got, *a: got == 120),
    ),
    otherwise="translate every ordering (itertools.permutations) and count the different outputs (a set of strings).",
    returns="one whole number (how many different translations)",
    convert=lambda got, want: whole(got),
    forbid=("distinct_translations", "translate_batch"),
    forbid_hint="that does the counting for you: loop over itertools.permutations yourself, translate each ordering, collect the outputs in a set.",
)


def check_distinct(count_translations, one_each=None) -> bool:
    """Exercise 3 (DISTINCT, five learned-PE seeds); one_each (every seed gives one translation?) is not graded. Used in notebook 07."""
    counts = {s: len(_counts(standard_run("learned", s).model, FIVE_WORDS)) for s in SEEDS}
    success = f"right, {counts}: a model that sees positions may still ignore them; only where training left a "
    success += "choice (two objects) can position decide, and each seed decides its own way. "
    success += compared(one_each, all(n == 1 for n in counts.values()))
    return dataclasses.replace(DISTINCT, success=success).check(count_translations)


def check_orderings(my_orderings, model) -> bool:
    """Prediction: how many of FOUR_WORDS' 24 orderings does `model` translate as FOUR_GERMAN (± 2)? Used in notebook 07."""
    truth = _counts(model, FOUR_WORDS).get(FOUR_GERMAN, 0)
    said = f"the model gives '{FOUR_GERMAN}' for {truth} of the 24 orderings"
    return Exercise(
        todo="write your guess (a whole number from 0 to 24) into my_orderings, then re-run.",
        success=said + ".",
        reference=float(truth),
        otherwise=said + ": it sees the positions, but on this corpus the words alone settle the translation.",
        returns="a whole number from 0 to 24",
        convert=lambda got, want: whole(got),
        atol=2,
    ).check(my_orderings)
