"""Checkers for notebook 08 (five probe sentences: proper, nonsense, misleading)."""

from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np

from . import feedback

MISLEADING_AGAIN = "i can eat bread book"  # exercise 2: the misleading sentence with another food
_LOOPS = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.AsyncFor)


def python_loops(fn) -> list[str]:
    """The Python loops (for, while, comprehensions) in fn's source, as 'for (line 3)'; [] when there are none
    or when the source cannot be read (a function typed at a plain interpreter prompt)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    names = {ast.For: "for", ast.AsyncFor: "for", ast.While: "while", ast.GeneratorExp: "generator expression"}
    return [
        f"{names.get(type(node), 'comprehension')} (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, _LOOPS)
    ]


def check_word_spread(fn) -> bool:
    """Exercise 1: my_word_spread(V) -> mean over pairs i < j of 1 - cos(V[i], V[j]), for V of shape (n, dim),
    without a Python loop."""
    from ..probing import mean_pairwise_cosine_distance

    not_yet = "not answered yet: write the body of my_word_spread(V) (it returns one number), then re-run the cell."
    if fn is None:
        return feedback(False, "", not_yet)
    if not callable(fn):
        return feedback(False, "", "pass your function itself, e.g. check_word_spread(my_word_spread).")
    rng = np.random.default_rng(0)
    cases = [
        rng.normal(size=(5, 64)),
        rng.normal(size=(2, 3)),
        3.0 * np.ones((4, 8)),
        np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]]),
    ]
    for V in cases:
        try:
            got = fn(V.copy())
        except Exception as exc:  # the learner's code may fail in any way
            return feedback(False, "", f"your function raised {type(exc).__name__}: {exc}")
        if got is None:
            return feedback(False, "", not_yet)
        try:
            got = float(got)
        except (TypeError, ValueError):
            return feedback(False, "", f"return one number, not {type(got).__name__}.")
        want = mean_pairwise_cosine_distance(V)
        if not abs(got - want) < 1e-6:
            return feedback(
                False,
                "",
                f"for a ({V.shape[0]}, {V.shape[1]}) input you return {got:.4f}, expected {want:.4f}. "
                "Use 1 - cosine (a distance, 0 for equal directions) and only pairs i < j (not i = j).",
            )
    loops = python_loops(fn)
    if loops:
        return feedback(
            False,
            "",
            f"the numbers are right, but your function has a Python loop: {', '.join(loops)}. Build the (n, n) "
            "matrix of all cosines with one matrix product instead, then pick the pairs i < j.",
        )
    return feedback(
        True, "your loop-free word spread matches probing.mean_pairwise_cosine_distance on every input.", ""
    )


def kept_objects(sentence: str = MISLEADING_AGAIN) -> dict[int, str]:
    """{seed: the English object whose German noun is in that seed's translation of `sentence`}."""
    from ..model import translate
    from ..training import SEEDS, load_standard_model

    german = {"brot": "bread", "buch": "book", "apfel": "apple", "zeitung": "newspaper"}
    out = {}
    for s in SEEDS:
        words = translate(load_standard_model("learned", s).model, sentence)
        out[s] = next((german[w] for w in words if w in german), "neither")
    return out


def check_kept_object(kept, my_prediction=None) -> bool:
    """Exercise 2: kept = {seed: "bread" or "book"}, the object each seed keeps in 'i can eat bread book';
    my_prediction: the set of seeds the learner guessed keep 'book' (compared, not graded)."""
    want = kept_objects()
    if kept is None:
        return feedback(
            False, "", "not answered yet: fill in kept = {seed: 'bread' or 'book'} from each seed's translation."
        )
    if not isinstance(kept, dict):
        return feedback(False, "", f"kept should be a dict {{seed: 'bread' or 'book'}}, not {type(kept).__name__}.")
    if sorted(kept) != sorted(want):
        return feedback(False, "", f"give one answer for each seed {sorted(want)}; you have {sorted(kept)}.")
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
