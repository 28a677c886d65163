"""Checkers for notebook 07 (word order and positional encoding)."""

from __future__ import annotations

import ast
import inspect
import re
import sys

import numpy as np

from course_utils.exercises import feedback, not_answered
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


def no_pe_weights(sentence: str) -> np.ndarray:
    """Encoder layer-0 attention weights (H, T, T) of the shipped no-PE model for one sentence.
    Used in notebook 07 (an exercise)."""
    from course_utils.inspect.tracing import run_with_trace
    from course_utils.training.zoo import load_standard_model

    model = load_standard_model("none").model
    return run_with_trace(model, sentence, names=["encoder.0.self.weights"])["encoder.0.self.weights"].double().numpy()


def check_moved_weights(moved) -> bool:
    """Exercise 2: moved(W_a, perm) turns the no-PE encoder layer-0 weights of "we can eat apple" into those of
    MOVED, with perm[i] = where MOVED's i-th word sits in "we can eat apple".
    Used in notebook 07 (its Exercises section)."""
    from course_utils.measures.probing import TOLERANCE, word_permutation

    old, new = "we can eat apple", MOVED
    perm = word_permutation(old.split(), new.split())
    W_a, W_b = no_pe_weights(old), no_pe_weights(new)
    try:
        got = moved(W_a.copy(), list(perm))
    except NotImplementedError:
        return not_answered("write the body of moved(W_a, perm), then re-run.")
    except Exception as exc:  # a learner's bug: say what happened, no traceback
        return feedback(False, "", f"moved raised {type(exc).__name__}: {exc}")
    if got is None:
        return not_answered("write the body of moved(W_a, perm), then re-run.")
    got = np.asarray(got, dtype=float)
    if got.shape != W_b.shape:
        return feedback(False, "", f"keep the shape (heads, queries, keys) = {W_b.shape}; got {got.shape}.")
    gap = float(np.abs(got - W_b).max())
    if gap < TOLERANCE:
        return feedback(
            True,
            f"moved(W_a, perm) equals the weights of '{new}' (max |Δ| {gap:.0e}): rows and columns both moved "
            "with their words, P·W·Pᵀ.",
            "",
        )
    inverse = list(np.argsort(perm))
    mistakes = [
        (W_a, "nothing moved: that would be invariance. Row i of the new weights belongs to the new i-th word."),
        (
            W_a[:, perm],
            "only the rows (queries) moved; each key column belongs to a word too: move the columns as well.",
        ),
        (
            W_a[:, :, perm],
            "only the columns (keys) moved; each query row belongs to a word too: move the rows as well.",
        ),
        (
            W_a[:, inverse][:, :, inverse],
            "moved the other way round: row i of the new weights is row perm[i] of the old.",
        ),
    ]
    for wrong, hint in mistakes:
        if np.abs(got - wrong).max() < TOLERANCE:
            return feedback(False, "", hint)
    return feedback(False, "", f"differs from the weights of '{new}' by up to {gap:.2f}.")


def check_symmetry(answers) -> bool:
    """Exercise 1: classify each item as "invariant", "equivariant" or "neither".
    Used in notebook 07 (Three positional encodings)."""
    if not isinstance(answers, dict) or set(answers) != set(SYMMETRY):
        return feedback(False, "", f"answer with a dict that has exactly these keys: {list(SYMMETRY)}")
    if all(v is None for v in answers.values()):
        return not_answered("fill in each prediction ('invariant', 'equivariant' or 'neither').")
    given = {k: str(v).strip().lower() if v is not None else None for k, v in answers.items()}
    bad = [k for k, v in given.items() if v not in ("invariant", "equivariant", "neither")]
    if bad:
        return feedback(False, "", f"each value must be 'invariant', 'equivariant' or 'neither'; check: {bad}")
    wrong = [k for k in SYMMETRY if given[k] != SYMMETRY[k]]
    example = f" (e.g. '{wrong[0]}')" if wrong else ""
    return feedback(
        not wrong,
        "all five right: invariant = unchanged, equivariant = moved along with the words.",
        f"{len(wrong)} of 5 not right yet{example}. Invariant: the same vectors at the same positions. "
        "Equivariant: the same vectors, moved with their words. Neither: the vectors change.",
    )


def distinct_counts(sentence: str = FIVE_WORDS) -> dict[int, int]:
    """The true answer of exercise 3: distinct translations over all orderings, per seed of the learned-PE model.
    Used in notebook 07 (an exercise)."""
    from course_utils.measures.probing import distinct_translations
    from course_utils.training.zoo import load_standard_model

    return {s: len(distinct_translations(load_standard_model("learned", s).model, sentence)) for s in SEEDS}


_COUNT_SHORTCUTS = ("distinct_translations", "distinct_counts")  # exercise 3 asks for the loop written out


def _caller_uses(names, depth: int = 2) -> list[str]:
    """The names from `names` used in the code that called the checker: the notebook cell (a cell's code is its
    own module) or the calling function; [] when that code cannot be read. Exercise 3's answer is a dict, not a
    function, so the cell that computes it and calls the checker is the code to read."""
    try:
        source = inspect.getsource(sys._getframe(depth))
    except (OSError, TypeError, ValueError):
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a cell with IPython magics: look for the names as words outside comments
        code = "\n".join(line.split("#")[0] for line in source.splitlines())
        return sorted(n for n in names if re.search(rf"\b{n}\b", code))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return sorted(used & set(names))


def check_distinct(counts, one_each=None) -> bool:
    """Exercise 3: {seed: number of distinct German translations over the 120 orderings of FIVE_WORDS}.
    one_each: the learner's prediction, True if every seed gives a single translation for all 120 orderings;
    judged once the counts are right. The cell that calls it must count with its own loop: a cell that calls
    distinct_translations (or distinct_counts) is refused.
    Used in notebook 07 (its Exercises section)."""
    if not isinstance(counts, dict) or set(counts) != set(SEEDS):
        return feedback(False, "", f"answer with a dict with the seeds {list(SEEDS)} as keys")
    if all(v is None for v in counts.values()):
        return not_answered("write the loop that fills distinct[seed], then re-run.")
    shortcut = _caller_uses(_COUNT_SHORTCUTS)
    if shortcut:
        return feedback(
            False,
            "",
            f"this cell calls {shortcut[0]}, which counts for you: write the loop over itertools.permutations "
            "yourself, translate each ordering and collect the German outputs in a set.",
        )
    if any(not isinstance(v, (int, np.integer)) or isinstance(v, bool) for v in counts.values()):
        return feedback(False, "", "each value must be a whole number (how many different translations).")
    if all(v == 120 for v in counts.values()):
        return feedback(
            False,
            "",
            "120 is the number of orderings. Count the different German outputs: collect them in a set, take its len.",
        )
    truth = distinct_counts()
    wrong = sorted(s for s in SEEDS if counts[s] != truth[s])
    prediction = ""
    if isinstance(one_each, (bool, np.bool_)):
        single = all(n == 1 for n in truth.values())
        verdict = "right" if bool(one_each) == single else "not right"
        prediction = f" Your prediction one_each = {bool(one_each)} was {verdict}."
    elif one_each is not None:
        prediction = f" (one_each should be True or False; got {one_each!r}.)"
    return feedback(
        not wrong,
        "right: a model that sees positions may still ignore them; only where training left a choice "
        "(two objects) can position decide, and each seed decides its own way." + prediction,
        f"not right yet for seed(s) {wrong}. Translate every ordering (itertools.permutations) with each seed's "
        "model and count the different outputs (a set of strings).",
    )


def check_orderings(my_orderings, model) -> bool:
    """Prediction: of the 24 orderings of FOUR_WORDS, how many does `model` translate as FOUR_GERMAN?
    Used in notebook 07 (What the models translate)."""
    from course_utils.measures.probing import distinct_translations

    if my_orderings is None:
        return not_answered("write your guess (a whole number from 0 to 24) into my_orderings, then re-run.")
    if isinstance(my_orderings, bool) or not isinstance(my_orderings, (int, np.integer)) or not 0 <= my_orderings <= 24:
        return feedback(False, "", f"my_orderings must be a whole number from 0 to 24; got {my_orderings!r}.")
    truth = distinct_translations(model, FOUR_WORDS).get(FOUR_GERMAN, 0)
    return feedback(
        abs(int(my_orderings) - truth) <= 2,
        f"you guessed {int(my_orderings)}; the model gives '{FOUR_GERMAN}' for {truth} of the 24 orderings.",
        f"you guessed {int(my_orderings)}, the model gives '{FOUR_GERMAN}' for {truth} of the 24 orderings: "
        "it sees the positions, but on this corpus the words alone settle the translation (see below).",
    )
