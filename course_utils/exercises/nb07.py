"""Checkers for notebook 07 (word order and positional encoding)."""

from __future__ import annotations

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
    from course_utils.trace.tracing import run_with_trace
    from course_utils.training.zoo import load_standard_model

    model = load_standard_model("none").model
    return run_with_trace(model, sentence, names=["encoder.0.self.weights"])["encoder.0.self.weights"].double().numpy()


def check_moved_weights(moved) -> bool:
    """Exercise 2: moved(W_a, perm) turns the no-PE encoder layer-0 weights of "we can eat apple" into those of
    MOVED, with perm[i] = where MOVED's i-th word sits in "we can eat apple".
    Used in notebook 07 (its Exercises section)."""
    from course_utils.core.precision import below
    from course_utils.measures.probing import TOLERANCE, word_permutation

    not_yet = "write the body of moved(W_a, perm), then re-run."
    if moved is None:
        return not_answered(not_yet)
    if not callable(moved):
        return feedback(
            False,
            "",
            f"pass your function itself, check_moved_weights(moved), not a value of type {type(moved).__name__}.",
        )
    old, new = "we can eat apple", MOVED
    perm = word_permutation(old.split(), new.split())
    W_a, W_b = no_pe_weights(old), no_pe_weights(new)
    try:
        got = moved(W_a.copy(), list(perm))
    except NotImplementedError:
        return not_answered(not_yet)
    except Exception as exc:  # a learner's bug: say what happened, no traceback
        return feedback(False, "", f"moved raised {type(exc).__name__}: {exc}")
    if got is None:
        return not_answered(not_yet)
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return feedback(False, "", f"return an array of weights (heads, queries, keys), not {type(got).__name__}.")
    if got.shape != W_b.shape:
        return feedback(False, "", f"keep the shape (heads, queries, keys) = {W_b.shape}; got {got.shape}.")
    gap = float(np.abs(got - W_b).max())
    if gap < TOLERANCE:
        return feedback(
            True,
            f"moved(W_a, perm) equals the weights of '{new}' (largest difference {below(gap, TOLERANCE)}): rows and "
            "columns both moved with their words, P·W·Pᵀ.",
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


_COUNT_SHORTCUTS = ("distinct_translations", "distinct_counts", "translate_batch")  # the course counts/batches


def _counting_helper(obj) -> bool:
    """The course's own helpers that would do exercise 3's loop: the counters, the batch translator, and any
    function of the measures modules (they hold the course's measures of 07, distinct_translations among them)."""
    from course_utils.core.model import translate_batch
    from course_utils.measures.probing import distinct_translations

    if obj is distinct_translations or obj is distinct_counts or obj is translate_batch:
        return True
    return callable(obj) and str(getattr(obj, "__module__", "")).startswith("course_utils.measures")


def _is_model(model) -> bool:
    return hasattr(model, "src_vocab") and hasattr(model, "tgt_vocab") and callable(model)


def check_distinct(count_translations, one_each=None) -> bool:
    """Exercise 3: count_translations(model, sentence) -> how many different German translations `model` gives
    over all orderings of the words of `sentence`, with the loop over the orderings written out: a function that
    is, or calls, the course's distinct_translations, distinct_counts, translate_batch (or any course measure)
    is refused. Run on the five seeds of the learned-PE course model with FIVE_WORDS. one_each: the learner's
    prediction, True if every seed gives a single translation for all 120 orderings; judged once the counts are right.
    Used in notebook 07 (its Exercises section)."""
    from course_utils.exercises import calls_to, names_used
    from course_utils.training.zoo import load_standard_model

    not_yet = "write the body of count_translations(model, sentence), then re-run."
    if count_translations is None:
        return not_answered(not_yet)
    if not callable(count_translations):
        return feedback(
            False,
            "",
            "pass your function itself, check_distinct(count_translations, one_each), "
            f"not a value of type {type(count_translations).__name__}.",
        )
    if _counting_helper(count_translations):
        shortcut = [getattr(count_translations, "__name__", "a course helper")]
    else:
        shortcut = calls_to(count_translations, _counting_helper) or names_used(count_translations, _COUNT_SHORTCUTS)
    if shortcut:
        return feedback(
            False,
            "",
            f"your function uses the course's {shortcut[0]}, which does the counting for you: write the loop over "
            "itertools.permutations yourself, translate each ordering and collect the German outputs in a set.",
        )
    counts = {}
    for s in SEEDS:
        try:
            got = count_translations(load_standard_model("learned", s).model, FIVE_WORDS)
        except NotImplementedError:
            return not_answered(not_yet)
        except Exception as exc:  # a learner's bug: say what happened, no traceback
            return feedback(False, "", f"count_translations raised {type(exc).__name__}: {exc}")
        if got is None:
            return not_answered(not_yet)
        if isinstance(got, (bool, np.bool_)) or not isinstance(got, (int, np.integer)):
            return feedback(
                False, "", f"return one whole number (how many different translations), not {type(got).__name__}."
            )
        counts[s] = int(got)
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
        prediction = f" (one_each should be True or False; got {type(one_each).__name__}.)"
    return feedback(
        not wrong,
        f"right, {counts}: a model that sees positions may still ignore them; only where training left a choice "
        "(two objects) can position decide, and each seed decides its own way." + prediction,
        f"not right yet for seed(s) {wrong} (you counted {counts}). Translate every ordering "
        "(itertools.permutations) and count the different outputs (a set of strings).",
    )


def check_orderings(my_orderings, model) -> bool:
    """Prediction: of the 24 orderings of FOUR_WORDS, how many does `model` translate as FOUR_GERMAN?
    Used in notebook 07 (What the models translate)."""
    from course_utils.measures.probing import distinct_translations

    if my_orderings is None:
        return not_answered("write your guess (a whole number from 0 to 24) into my_orderings, then re-run.")
    if isinstance(my_orderings, bool) or not isinstance(my_orderings, (int, np.integer)) or not 0 <= my_orderings <= 24:
        shown = my_orderings if isinstance(my_orderings, (int, float, np.number)) else type(my_orderings).__name__
        return feedback(False, "", f"my_orderings must be a whole number from 0 to 24; got {shown}.")
    if not _is_model(model):
        return feedback(
            False, "", f"pass a course model as the second argument (runs[0].model), not {type(model).__name__}."
        )
    truth = distinct_translations(model, FOUR_WORDS).get(FOUR_GERMAN, 0)
    return feedback(
        abs(int(my_orderings) - truth) <= 2,
        f"you guessed {int(my_orderings)}; the model gives '{FOUR_GERMAN}' for {truth} of the 24 orderings.",
        f"you guessed {int(my_orderings)}, the model gives '{FOUR_GERMAN}' for {truth} of the 24 orderings: "
        "it sees the positions, but on this corpus the words alone settle the translation (see below).",
    )
