"""Exercise checkers, one module per notebook: nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10.

Every checker returns True for a right answer and False for a wrong one, and prints one line of feedback:
✅ (right), ❌ (wrong, with a hint) or ✍ (not answered yet: the state the committed notebooks show, without giving
the answer away). `framework` holds the one way a checker is written: an `Exercise` spec (cases, reference, typical
mistakes and their hints, names refused by one static check `uses`), `check_true_false`, `check_choice`, and the
line printers `feedback` and `not_answered`; they are re-exported here.

Older helpers, still used by the checkers of notebooks 06-10 until those move onto the framework: `no_function`,
`learner_number`, `python_loops` (no Python loop; also notebook 02), `calls_course_helper`, `names_used`,
`calls_to` and `is_course_helper`.
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


_LOOPS = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.AsyncFor)


def python_loops(fn) -> list[str]:
    """The Python loops (for, while, comprehensions) in fn's source, as 'for (line 3)'; [] when there are none
    or when the source cannot be read (a function typed at a plain interpreter prompt).
    Used by the no-loop checkers of notebooks 02, 06 and 08."""
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


def calls_to(fn, forbidden) -> list[str]:
    """The calls in fn's source whose callee, or a name on the way to it ('torch' in torch.linalg.norm), is an
    object for which forbidden(obj) is true, as written ('cosine', 'F.linear'), in order; names are looked up
    where fn was defined (its imports, closure, globals, builtins), so an alias is caught too, and the functions
    it calls that were defined beside it (the learner's own helpers) are read as well, marked 'name (in helper)';
    [] when the source cannot be read. Used by the checkers of notebooks 01, 02 and 03."""
    import builtins
    import sys

    found, seen = [], set()

    def read(f, inside):
        code = getattr(f, "__code__", None)
        if code is None or code in seen:
            return
        seen.add(code)
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(f)))
        except (OSError, TypeError, SyntaxError):
            return
        if f.__name__ == "<lambda>":  # its source is the whole line: read only the lambdas in it
            tree = ast.Module(body=[ast.Expr(n) for n in ast.walk(tree) if isinstance(n, ast.Lambda)], type_ignores=[])
        space = {**vars(builtins), **getattr(f, "__globals__", {})}
        for name, cell in zip(code.co_freevars, getattr(f, "__closure__", None) or ()):
            try:
                space[name] = cell.cell_contents
            except ValueError:  # an empty cell
                pass
        local = set(code.co_varnames) | set(code.co_cellvars)
        for node in ast.walk(tree):  # imports inside the function
            if isinstance(node, ast.Import):
                for a in node.names:
                    name = a.asname or a.name.split(".")[0]
                    space[name] = sys.modules.get(a.name if a.asname else name)
                    local.discard(name)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    space[a.asname or a.name] = getattr(sys.modules.get(node.module), a.name, None)
                local -= {a.asname or a.name for a in node.names}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            parts, target = [], node.func
            while isinstance(target, ast.Attribute):
                parts.insert(0, target.attr)
                target = target.value
            if not isinstance(target, ast.Name) or target.id in local or target.id not in space:
                continue
            written, obj, chain = ".".join([target.id, *parts]), space[target.id], []
            for part in [None, *parts]:
                try:
                    obj = obj if part is None else getattr(obj, part)
                except Exception:  # an attribute that cannot be read
                    break
                chain.append(obj)
            if any(_forbidden(forbidden, o) for o in chain):
                found.append(written + (f" (in {inside})" if inside else ""))
            elif len(chain) == len(parts) + 1 and inspect.isfunction(obj) and obj.__module__ == fn.__module__:
                read(obj, obj.__name__)

    read(fn, "")
    return found


def is_course_helper(obj) -> bool:
    """True for a function, class or module of the course library (course_utils): a predicate for `calls_to` when an
    exercise is written without the course's helpers. Used by the checkers of notebooks 06 and 10."""
    name = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
    return isinstance(name, str) and (name == "course_utils" or name.startswith("course_utils."))


def _forbidden(forbidden, obj) -> bool:
    try:
        return bool(forbidden(obj))
    except Exception:  # an object the predicate cannot judge
        return False
