"""Exercise checkers, one module per notebook: nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10.

Every checker returns True for a right answer and False for a wrong one, and prints one line of feedback:
✅ (right), ❌ (wrong, with a hint) or ✍ (not answered yet: the state the committed notebooks show, without giving
the answer away). `framework` holds the one way a checker is written: an `Exercise` spec (cases, reference, typical
mistakes and their hints, names refused by one static check `uses`), `check_true_false`, `check_choice`, and the
line printers `feedback` and `not_answered`; they are re-exported here.

One older helper is left, `python_loops`, for notebook 02's checker until it moves onto the framework (its
`uses` refuses a Python loop with "for" in `forbid`).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from course_utils.exercises.framework import (  # noqa: F401 - re-exported: the checkers import them from here
    NOT_ANSWERED,
    NOT_YET,
    Exercise,
    Mistake,
    check_choice,
    check_true_false,
    feedback,
    not_answered,
)

_LOOPS = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.AsyncFor)


def python_loops(fn) -> list[str]:
    """The Python loops (for, while, comprehensions) in fn's source, as 'for (line 3)'; [] when there are none
    or when the source cannot be read (a function typed at a plain interpreter prompt).
    Used by the no-loop checker of notebook 02."""
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
