"""Exercise checkers, one module per notebook: nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10.

Every checker returns True for a right answer and False for a wrong one, and prints one line of
feedback; `tests/` checks that wrong answers are rejected. Three kinds of line, one vocabulary:
`feedback` prints ✅ (right) or ❌ (wrong, with a hint); `not_answered` prints ✍ for an exercise the
learner has not answered yet (the state the committed notebooks show), without giving the answer away.
Two source readers serve the checkers that ask for code written a certain way: `python_loops` (no Python
loop) and `names_used` (not the course's own helper).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np

NOT_ANSWERED = "✍ Not answered yet: "  # the prefix of every unanswered line (checkers that return messages use it)


def feedback(ok: bool, success: str, hint: str) -> bool:
    """Print ✅ success or ❌ hint and return ok.
    Used by every checker (notebooks 01-10, their exercises)."""
    print(("✅ " + success) if ok else ("❌ Not yet: " + hint))
    return bool(ok)


def not_answered(what: str) -> bool:
    """Print "✍ Not answered yet: " + what (what to do to answer) and return False.
    Used by every checker (notebooks 01-10, their exercises)."""
    print(NOT_ANSWERED + what)
    return False


def no_function(fn, not_yet: str, usage: str) -> bool:
    """True (and the one line printed) when fn is not an answer yet: None -> "✍ not answered: not_yet", not a
    function -> "❌ usage". The checkers that take a function start with `if no_function(...): return False`.
    Used by the checkers of notebooks 06 and 08."""
    if fn is None:
        return not not_answered(not_yet)
    if not callable(fn):
        return not feedback(False, "", usage)
    return False


def learner_number(fn, arg, not_yet: str, name: str = "your function", where: str = ""):
    """fn(arg) as a float; or False, with its one line printed, when fn raised ("❌ {name} raised E: ...{where}"),
    returned None (✍ not_yet: its body is not written yet) or returned something that is not one number.
    Callers test `if got is False` (a result of 0.0 is a number). Used by the checkers of notebooks 06 and 08."""
    try:
        got = fn(arg)
    except Exception as exc:  # the learner's code may raise anything
        return feedback(False, "", f"{name} raised {type(exc).__name__}: {exc}{where}")
    if got is None:
        return not_answered(not_yet)
    try:
        return float(got)
    except (TypeError, ValueError):
        return feedback(False, "", f"return one number, not {type(got).__name__}.")


def check_true_false(prediction, answer: bool, not_yet: str, wrong: str, right: str) -> bool:
    """A True/False prediction: not answered (None), not a bool, wrong (prints `wrong`) or right (`right`).
    Used by the prediction checkers of notebooks 01 and 02."""
    if prediction is None:
        return not_answered(not_yet)
    if not isinstance(prediction, (bool, np.bool_)):
        return feedback(False, "", "predict with True or False.")
    return feedback(bool(prediction) == answer, right, wrong)


_LOOPS = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.AsyncFor)


def python_loops(fn) -> list[str]:
    """The Python loops (for, while, comprehensions) in fn's source, as 'for (line 3)'; [] when there are none
    or when the source cannot be read (a function typed at a plain interpreter prompt).
    Used by the no-loop checkers of notebooks 06 and 08."""
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


def calls_course_helper(fn, names, message: str) -> bool:
    """True (and ❌ message printed, with {name} the first helper found and {names} all of them) when fn's source
    calls one of the course's own helpers `names` that the exercise asks the learner to write without.
    Used by the checkers of notebooks 08 and 09."""
    found = names_used(fn, names)
    if found:
        feedback(False, "", message.format(name=found[0], names=", ".join(found)))
    return bool(found)


def names_used(fn, names) -> list[str]:
    """The names from `names` that fn's source uses (as `name` or `module.name`), sorted; [] when the source
    cannot be read (a lambda inside a longer line, a function typed at a prompt).
    Used by the checkers that refuse the course's own helper (notebooks 08, 09)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return sorted(used & set(names))
