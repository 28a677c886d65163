"""One checker framework for every exercise: an exercise is a short spec, `Exercise(...)`, and `spec.check(answer)`.

A function exercise calls the learner's function and the reference on the same cases and compares the results
(tolerance, shape, dtype); a value exercise (no `cases`) compares one value. The first thing that is not right gives
ONE line, never a traceback: "✍ Not answered yet: <todo>" (None, a NotImplementedError body, a function returning
None); "❌ Not yet: <hint>" (an error the learner's code raised, a wrong type, shape or dtype, the first listed
`Mistake` the answer matches, else `otherwise`); "✅ <success>". `forbid` names what the learner's source may not
use (one static check, `uses`); `check_choice` is a multiple choice, `compared` a prediction that is not graded.
Tests parametrize over `SPEC.mistakes`: `SPEC.check(learner(m.gives))` prints `m.hint`. A complete spec:

    DOUBLE = Exercise(name="my_double", success="my_double(x) = 2 x on every case.", reference=lambda x: 2 * x,
                      cases=[("a vector", (torch.tensor([1.0, -2.0]),))], forbid=("course_utils",),
                      mistakes=(Mistake("that is x squared; double it: 2 * x.", gives=lambda x: x * x),))
"""

from __future__ import annotations

import builtins
import dis
import functools
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

NOT_ANSWERED = "✍ Not answered yet: "  # the prefix of every unanswered line
NOT_YET = "❌ Not yet: "  # the prefix of every wrong answer's line
WRONG_TYPE = (TypeError, ValueError, RuntimeError, IndexError, AttributeError)  # a converter refusing a result


def feedback(ok: bool, success: str, hint: str) -> bool:
    """Print ✅ success or ❌ hint and return ok (every checker). Used by the checkers of notebooks 01-10."""
    print(("✅ " + success) if ok else (NOT_YET + hint))
    return bool(ok)


def short(x) -> str:
    """A learner's value on one line (the wrong-type line): its type and at most 60 characters of repr.
    Used by the checkers of notebooks 01-10."""
    text = " ".join(repr(x).split())
    return f"{type(x).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def first_line(exc: Exception) -> str:
    """An error's message, its first line only: the checker's reply stays one line.
    Used by the checkers of notebooks 01-10."""
    return (str(exc).strip().splitlines() or [""])[0]


def number(x) -> float:
    """x as one finite float (a 0-d tensor or array too); TypeError for a string, a bool, several numbers, nan.
    Used by the checkers of notebooks 01-10."""
    if isinstance(x, (str, bytes, bool, np.bool_)) or np.ndim(x) != 0:
        raise TypeError("not one number")
    value = float(x.detach() if isinstance(x, torch.Tensor) else x)  # a loss tensor too, without a warning
    if not math.isfinite(value):
        raise TypeError("not finite")
    return value


def whole(x) -> int:
    """x as an int when it is one whole number (5, 5.0, a 0-d tensor); TypeError otherwise.
    Used by the checkers of notebooks 01-10."""
    value = number(x)
    if not value.is_integer():
        raise TypeError("not whole")
    return int(value)


def like(got, want):
    """The learner's result as the reference's kind (tensor, array, bool, number, tuple, lower-case word, dict with the
    same keys); raises one of WRONG_TYPE when it cannot be. Every Exercise's default `convert`.
    Used by the checkers of notebooks 01-10."""
    if isinstance(want, torch.Tensor):
        if isinstance(got, (str, bytes)):
            raise TypeError("a string")
        return (got if isinstance(got, torch.Tensor) else torch.as_tensor(got)).detach()
    if isinstance(want, np.ndarray):
        return np.asarray(got, dtype=want.dtype)
    if isinstance(want, (bool, np.bool_)):
        if not isinstance(got, (bool, np.bool_)):
            raise TypeError("not a bool")
        return bool(got)
    if isinstance(want, (int, float, np.number)):
        return number(got)
    if isinstance(want, tuple):
        if isinstance(got, (str, bytes)) or len(got) != len(want):
            raise TypeError("not as many parts")
        return tuple(like(g, w) for g, w in zip(got, want))
    if isinstance(want, str):
        if not isinstance(got, str):
            raise TypeError("not a word")
        return got.strip().lower()
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            raise TypeError("not the same keys")
        return {k: like(got[k], w) for k, w in want.items()}
    return got


def wrong_shape(got, want) -> str | None:
    """'has shape …; the answer has shape …' (or a dtype line) when a tensor or array does not fit the reference.
    Used by the checkers of notebooks 01-10."""
    if not isinstance(want, (torch.Tensor, np.ndarray)):
        return None
    if tuple(got.shape) != tuple(want.shape):
        return f"has shape {tuple(got.shape)}; the answer has shape {tuple(want.shape)}."
    if isinstance(want, torch.Tensor) and got.dtype != want.dtype:
        if not (got.dtype.is_floating_point and want.dtype.is_floating_point):
            return f"has dtype {got.dtype}; the answer has dtype {want.dtype}."
    return None


def close(got, want, atol: float = 1e-6, rtol: float = 1e-5) -> bool:
    """got equals want within atol + rtol·|want| (tensors, arrays, numbers, tuples and dicts of them); == otherwise.
    Used by the checkers of notebooks 01-10."""
    try:
        if isinstance(want, torch.Tensor):
            if not want.dtype.is_floating_point:
                return torch.equal(got, want)
            return torch.allclose(got.to(want.dtype), want, rtol=rtol, atol=atol, equal_nan=True)
        if isinstance(want, np.ndarray):
            return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))
        if isinstance(want, (float, np.floating)):
            return abs(float(got) - want) <= atol + rtol * abs(want)
        if isinstance(want, (tuple, list)) and not isinstance(got, str):
            return len(got) == len(want) and all(close(g, w, atol, rtol) for g, w in zip(got, want))
        if isinstance(want, dict):
            return got.keys() == want.keys() and all(close(got[k], w, atol, rtol) for k, w in want.items())
        return bool(got == want)
    except WRONG_TYPE:  # a mistake's answer of another shape or kind
        return False


def uses(fn, forbid) -> str | None:
    """The first name in fn's code (or its own helpers') that `forbid` refuses, as written ('torch', 'norm (in _my_norm)'),
    or None: a name in forbid or under a forbidden package root, an alias of one, or an object from a forbidden package;
    "for" refuses a Python loop. One static check: nothing is watched running.
    Used by the checkers of notebooks 01-10."""
    forbid = set(forbid)
    while isinstance(fn, functools.partial):
        fn = fn.func
    if forbid and _refused(fn, getattr(fn, "__name__", ""), forbid):
        return fn.__name__
    seen = set()

    def read(f, inside):
        code = getattr(f, "__code__", None)
        if code is None or code in seen:
            return None
        seen.add(code)
        if "for" in forbid and _loops(code):
            return "a Python loop" + (f" (in {inside})" if inside else "")
        space = {**vars(builtins), **getattr(f, "__globals__", {})}
        for name, cell in zip(code.co_freevars, getattr(f, "__closure__", None) or ()):
            try:
                space[name] = cell.cell_contents
            except ValueError:  # an empty cell
                pass
        for name in _names(code):
            obj = space.get(name)
            if _refused(obj, name, forbid):
                return name + (f" (in {inside})" if inside else "")
            if inspect.isfunction(obj) and obj.__module__ == fn.__module__:
                found = read(obj, obj.__name__)
                if found:
                    return found
        return None

    return read(fn, "") if forbid else None


def _names(code) -> list[str]:
    """The global, attribute, imported and free names of a code object and of the code nested in it (lambdas)."""
    names = [*code.co_names, *code.co_freevars]
    for const in code.co_consts:
        if inspect.iscode(const):
            names += _names(const)
    return names


def _loops(code) -> bool:
    """Does the code object (or code nested in it: a comprehension, a lambda) loop: a backward jump or FOR_ITER?"""
    if any(i.opname == "FOR_ITER" or "BACKWARD" in i.opname for i in dis.get_instructions(code)):
        return True
    return any(_loops(c) for c in code.co_consts if inspect.iscode(c))


def _refused(obj, name: str, forbid) -> bool:
    named = getattr(obj, "__name__", None) if inspect.isfunction(obj) or inspect.isbuiltin(obj) else None
    if name in forbid or name.split(".")[0] in forbid or named in forbid:  # named: a refused name under an alias
        return True
    if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismodule(obj) or inspect.isbuiltin(obj)):
        return False
    module = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
    return isinstance(module, str) and module.split(".")[0] in forbid


@dataclass(frozen=True)
class Mistake:
    """A typical mistake and its hint: `gives` computes the wrong answer on a case's arguments (a value exercise: the
    wrong value), or `when(got, *args)` is true for the learner's converted result.
    Used by the checkers of notebooks 01-10."""

    hint: str
    gives: Any = None
    when: Callable | None = None


class learner:  # a class: its objects have no code for `uses` to read
    """fn as a callable with no code for `uses` to read: how tests hand a reference or a Mistake's `gives` to a checker.
    Used by the checkers of notebooks 01-10."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def _fresh(args) -> tuple:
    """The case's arguments, tensors cloned: nobody's in-place change reaches the next call."""
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


@dataclass(frozen=True)
class Exercise:
    """An exercise's spec (see the module docstring): `check(answer)` prints one line and returns True or False.
    Used by the checkers of notebooks 01-10."""

    success: str  # the ✅ line
    reference: Any  # the right function (cases given) or the right value
    cases: Any = None  # [(label, args), ...] or a function returning them; None: a value exercise
    name: str = "your function"  # the learner's function as the notebook names it
    todo: str = ""  # the ✍ line: what to do to answer; a function exercise's default: write the body of `name`
    mistakes: tuple = ()  # Mistake(...), in the order they are tried
    otherwise: str = "not the right answer yet; compare with the exercise's text again."
    returns: str = ""  # for the wrong-type line: 'one number', 'a (4, 4) tensor'; a bool reference: 'True or False'
    forbid: tuple = ()  # names and package roots refused by `uses`
    forbid_hint: str = "write it yourself."
    convert: Callable | None = None  # (got, want) -> comparable; raises WRONG_TYPE for a wrong type; default `like`
    compare: Callable | None = None  # (got, want) -> bool; default `close` with atol, rtol
    atol: float = 1e-6
    rtol: float = 1e-5
    run: Callable = lambda f, args: f(*args)  # noqa: E731 - how the learner's function (and the others) is called
    on_error: Callable | None = None  # (exception, args) -> a hint line for an error the learner's code raised, or None
    # (torch raises NotImplementedError for some wrong calls: on_error's hint is given before the ✍ line)

    def check(self, answer) -> bool:
        """Print one line for the learner's answer; True when it is right."""
        line = self.judge(answer)
        if line is None:
            return feedback(True, self.success, "")
        print(line)
        return False

    def judge(self, answer) -> str | None:
        """None when the answer is right, else the line to print (✍ or ❌)."""
        todo = self.todo or f"write the body of {self.name}, then re-run this cell."
        if answer is None:
            return NOT_ANSWERED + todo
        if self.cases is None:
            return self.result_line(answer, self.reference, (), "", "")
        if not callable(answer):
            return NOT_YET + f"pass the function itself, {self.name} (no brackets), not {short(answer)}."
        used = uses(answer, self.forbid)
        if used:
            return NOT_YET + f"{self.name} uses {used}: {self.forbid_hint}"
        for label, args in self.cases() if callable(self.cases) else self.cases:
            where = f"{self.name} ({label})" if label else self.name
            want = self.run(self.reference, _fresh(args))
            try:
                got = self.run(answer, _fresh(args))
            except Exception as exc:  # the learner's code may raise anything: one line, never a traceback
                hint = self.on_error(exc, args) if self.on_error else None
                if hint is None and isinstance(exc, NotImplementedError):  # the placeholder body
                    return NOT_ANSWERED + todo
                return NOT_YET + (hint or f"{where} raised {type(exc).__name__}: {first_line(exc)}")
            if got is None:
                return NOT_ANSWERED + todo
            line = self.result_line(got, want, args, label, where)
            if line:
                return line
        return None

    def result_line(self, got, want, args, label, where) -> str | None:
        """None when got is right, else its ❌ line: wrong type, shape or dtype, the first mistake it matches, otherwise."""
        subject = f"{where} should return" if where else "give"
        try:
            got = (self.convert or like)(got, want)
        except WRONG_TYPE:
            what = self.returns or ("True or False" if isinstance(want, bool) else "the answer the exercise asks for")
            return NOT_YET + f"{subject} {what}; got {short(got)}."
        shape = wrong_shape(got, want)
        if shape:
            return NOT_YET + f"{where or 'your answer'} {shape}"
        if self.same(got, want):
            return None
        for mistake in self.mistakes:
            if self.matches(mistake, got, want, args):
                return NOT_YET + (f"{label}: " if label else "") + mistake.hint
        return NOT_YET + (f"{where}: " if where else "") + self.otherwise

    def same(self, got, want) -> bool:
        """The spec's comparison: `compare`, else `close` within atol and rtol."""
        return self.compare(got, want) if self.compare else close(got, want, self.atol, self.rtol)

    def matches(self, mistake: Mistake, got, want, args) -> bool:
        """Does the converted result match this mistake here? A mistake that cannot run here does not."""
        try:
            if mistake.when is not None:
                return bool(mistake.when(got, *args))
            wrong = self.run(mistake.gives, _fresh(args)) if self.cases is not None else mistake.gives
            wrong = (self.convert or like)(wrong, want)
            return not self.same(wrong, want) and self.same(got, wrong)
        except Exception:  # noqa: BLE001 - a mistake's recipe that does not fit these inputs
            return False


def output_of(got, want):
    """The output of an (output, weights) pair, or got itself, as `like` converts it. Used by notebooks 03 and 04."""
    return like(got[0] if isinstance(got, tuple) and len(got) == 2 else got, want)


def check_choice(answer, right, hints: dict, *, todo: str, success: str) -> bool:
    """A multiple choice among the keys of hints, {choice: its line when wrongly chosen}: None, '', '?' or ... is not
    answered; a string is compared ignoring case, spaces and hyphens ('Torch default' is 'torch_default').
    Used by the checkers of notebooks 01-10."""
    if answer is None or answer is Ellipsis or (isinstance(answer, str) and answer.strip() in ("", "?")):
        print(NOT_ANSWERED + todo)
        return False
    by_key = {_key(c): c for c in hints}
    if not isinstance(answer, str) or _key(answer) not in by_key:
        return feedback(False, "", f"answer one of {', '.join(map(repr, hints))}; got {short(answer)}.")
    chosen = by_key[_key(answer)]
    return feedback(chosen == right, success, hints[chosen])


def compared(prediction, truth) -> str:
    """A prediction compared, not graded: 'You made no prediction.', 'Your prediction was right.' or 'You predicted …'.
    Words ignore case and spaces, '1' is 1, a list or set is compared as a set.
    Used by the checkers of notebooks 01-10."""
    if prediction is None:
        return "You made no prediction."
    return "Your prediction was right." if _plain(prediction) == _plain(truth) else f"You predicted {prediction!r}."


def _plain(x):
    if isinstance(x, str):
        x = x.strip().lower()
        return int(x) if x.isdigit() else x
    if isinstance(x, (set, frozenset, list, tuple)):
        return frozenset(_plain(v) for v in x)
    return x


def _key(text: str) -> str:
    return text.strip().lower().replace(" ", "_").replace("-", "_")


@functools.cache
def standard_run(name: str = "learned", seed: int = 0):
    """A shipped course model's TrainResult (.model, .snapshots), loaded once for the checkers of notebooks 06-08. Used by the checkers of notebooks 06-08."""
    from course_utils.training.zoo import load_standard_model

    return load_standard_model(name, seed)
