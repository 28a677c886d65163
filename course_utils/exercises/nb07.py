"""Checkers for notebook 07 (word order and positional encoding)."""

from __future__ import annotations

import numpy as np

from ..training import SEEDS  # exercise 3: the shipped seeds of the learned-PE model
from . import feedback

SCRAMBLED = "can we apple eat"  # exercise 1: "we can eat apple" with both pairs of words swapped
SYMMETRY = {  # exercise 2: what happens to each thing when the English words are reordered
    "encoder output, no PE": "equivariant",
    "decoder output for the same German input, no PE": "invariant",
    "encoder output, learned PE": "neither",
    "encoder layer-0 attention weights, no PE": "equivariant",
    "the translation, no PE": "invariant",
}
FIVE_WORDS = "i can eat apple book"  # exercise 3
FOUR_WORDS, FOUR_GERMAN = "we can eat apple", "wir können einen apfel essen"  # the prediction before the lineup


def check_permutation(perm) -> bool:
    """Exercise 1: perm such that the no-PE encoder output of SCRAMBLED equals out_a[perm] (out_a: "we can eat apple")."""
    from ..probing import TOLERANCE, word_order_traces
    from ..training import load_standard_model

    try:
        perm = [int(i) for i in perm]
    except (TypeError, ValueError):
        return feedback(False, "", "give a list of 4 positions, e.g. [0, 1, 2, 3].")
    if sorted(perm) != [0, 1, 2, 3]:
        return feedback(False, "", f"{perm} is not an ordering of the positions 0, 1, 2, 3.")
    a, b = word_order_traces(load_standard_model("none").model, "we can eat apple", SCRAMBLED)
    out_a, out_b = a["encoder.1.layer_out"].double().numpy(), b["encoder.1.layer_out"].double().numpy()
    gap = float(np.abs(out_b - out_a[perm]).max())
    return feedback(
        gap < TOLERANCE,
        f"out_a[{perm}] equals the encoder output of '{SCRAMBLED}' (max |Δ| below {TOLERANCE}): the output only moved with its words.",
        f"out_a[{perm}] differs from the new output by up to {gap:.2f}. Row i of the new output belongs to "
        f"the i-th word of '{SCRAMBLED}': where does that word sit in 'we can eat apple'?",
    )


def check_symmetry(answers) -> bool:
    """Exercise 2: classify each item as "invariant", "equivariant" or "neither"."""
    if not isinstance(answers, dict) or set(answers) != set(SYMMETRY):
        return feedback(False, "", f"answer with a dict that has exactly these keys: {list(SYMMETRY)}")
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
    """The true answer of exercise 3: distinct translations over all orderings, per seed of the learned-PE model."""
    from ..probing import distinct_translations
    from ..training import load_standard_model

    return {s: len(distinct_translations(load_standard_model("learned", s).model, sentence)) for s in SEEDS}


def check_distinct(counts) -> bool:
    """Exercise 3: {seed: number of distinct German translations over the 120 orderings of FIVE_WORDS}."""
    if not isinstance(counts, dict) or set(counts) != set(SEEDS):
        return feedback(False, "", f"answer with a dict with the seeds {list(SEEDS)} as keys")
    if any(not isinstance(v, (int, np.integer)) or isinstance(v, bool) for v in counts.values()):
        return feedback(False, "", "each value must be a whole number (how many different translations).")
    truth = distinct_counts()
    wrong = sorted(s for s in SEEDS if counts[s] != truth[s])
    return feedback(
        not wrong,
        "right: a model that sees positions may still ignore them; only where training left a choice "
        "(two objects) can position decide, and each seed decides its own way.",
        f"not right yet for seed(s) {wrong}. Translate every ordering (itertools.permutations) with each seed's "
        "model and count the different outputs (a set of strings).",
    )


def check_orderings(my_orderings, model) -> bool:
    """Prediction: of the 24 orderings of FOUR_WORDS, how many does `model` translate as FOUR_GERMAN?"""
    from ..probing import distinct_translations

    if my_orderings is None:
        return feedback(
            False,
            "",
            "not answered yet: write your guess (a whole number from 0 to 24) into my_orderings, then re-run.",
        )
    if isinstance(my_orderings, bool) or not isinstance(my_orderings, (int, np.integer)) or not 0 <= my_orderings <= 24:
        return feedback(False, "", f"my_orderings must be a whole number from 0 to 24; got {my_orderings!r}.")
    truth = distinct_translations(model, FOUR_WORDS).get(FOUR_GERMAN, 0)
    return feedback(
        abs(int(my_orderings) - truth) <= 2,
        f"you guessed {int(my_orderings)}; the model gives '{FOUR_GERMAN}' for {truth} of the 24 orderings.",
        f"you guessed {int(my_orderings)}, the model gives '{FOUR_GERMAN}' for {truth} of the 24 orderings: "
        "it sees the positions, but on this corpus the words alone settle the translation (see below).",
    )
