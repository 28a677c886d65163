"""The checker framework, tested once: every rule on a small spec, and for every rule a broken copy of the framework
(the rule's line changed in a copy of its function) that makes the rule's test fail, so each test can fail."""

from __future__ import annotations

import dataclasses
import inspect
import textwrap

import numpy as np
import pytest
import torch

from course_utils.core.attention import masked_softmax
from course_utils.exercises import framework
from course_utils.exercises.framework import (
    NOT_ANSWERED,
    NOT_YET,
    Exercise,
    Mistake,
    check_choice,
    compared,
    learner,
    uses,
)


def double_it(x):  # a helper the spec refuses by name
    return 2 * x


def _own_helper(x):
    return masked_softmax(x, None)


def _through_own_helper(x):
    return 2 * x + 0 * _own_helper(x)


def _course_code(x):  # refused by where the function comes from, whatever it is called
    return 2 * x + 0 * masked_softmax(x, None)


def _not_written(x):
    raise NotImplementedError


DOUBLE = Exercise(
    name="my_double",
    todo="write the body of my_double(x), then re-run this cell.",
    success="my_double(x) = 2 x on every case.",
    reference=lambda x: 2 * x,
    cases=[("a vector", (torch.tensor([1.0, -2.0], dtype=torch.float64),)), ("a matrix", (torch.ones(2, 3),))],
    mistakes=(
        Mistake("that is x squared; double it.", gives=lambda x: x * x),
        Mistake("the result is all zeros.", when=lambda got, x: not got.any()),
    ),
    otherwise="the numbers differ.",
    returns="a tensor",
    forbid=("course_utils", "double_it"),
    forbid_hint="write it yourself with *.",
)
FOUR = Exercise(
    todo="set my_four, then re-run.",
    success="four.",
    reference=4.0,
    mistakes=(Mistake("that is 2 + 2 written as a product? no: 2 * 3 is 6.", gives=6.0),),
    returns="one number",
)

_TOLERANCE = "torch.allclose(got.to(want.dtype), want, rtol=rtol, atol=atol, equal_nan=True)"
# (rule, answer, what the line says, (function, the rule's line, the broken line) of the framework)
RULES = [
    ("right answer", lambda x: 2 * x, "✅ my_double(x) = 2 x", None),
    ("None", None, NOT_ANSWERED + "write the body", ("Exercise.judge", "if answer is None:", "if False:")),
    (
        "NotImplementedError",
        _not_written,
        NOT_ANSWERED,
        ("Exercise.judge", "if hint is None and isinstance(exc, NotImplementedError):", "if False:"),
    ),
    ("returns None", lambda x: None, NOT_ANSWERED, ("Exercise.judge", "if got is None:", "if False:")),
    ("not a function", 3, "pass the function itself", ("Exercise.judge", "if not callable(answer):", "if False:")),
    (
        "raises",
        lambda x: 1 / 0,
        "my_double (a vector) raised ZeroDivisionError",
        ("Exercise.judge", "except Exception as exc:", "except KeyError as exc:"),
    ),
    (
        "wrong type",
        lambda x: "2x",
        "should return a tensor; got str '2x'",
        ("Exercise.result_line", "except WRONG_TYPE:", "except KeyError:"),
    ),
    (
        "wrong shape",
        lambda x: (2 * x)[0],
        "has shape (); the answer has shape (2,)",
        ("wrong_shape", "if tuple(got.shape) != tuple(want.shape):", "if False:"),
    ),
    (
        "wrong dtype",
        lambda x: (2 * x).int(),
        "has dtype torch.int32",
        ("wrong_shape", "if not (got.dtype.is_floating_point and want.dtype.is_floating_point):", "if False:"),
    ),
    (
        "within tolerance",
        lambda x: 2 * x + 1e-9,
        "✅",
        ("close", _TOLERANCE, _TOLERANCE.replace("rtol=rtol, atol=atol", "rtol=0.0, atol=0.0")),
    ),
    (
        "beyond tolerance",
        lambda x: 2 * x + 1e-3,
        "the numbers differ",
        ("close", _TOLERANCE, _TOLERANCE.replace("atol=atol", "atol=1.0")),
    ),
    (
        "a mistake computing the wrong answer",
        lambda x: x * x,
        NOT_YET + "a vector: that is x squared",
        ("Exercise.matches", "return not self.same(wrong, want) and self.same(got, wrong)", "return False"),
    ),
    (
        "a mistake as a predicate",
        lambda x: 0 * x,
        "all zeros",
        ("Exercise.matches", "if mistake.when is not None:", "if False:"),
    ),
    (
        "helper named",
        lambda x: double_it(x),
        "my_double uses double_it: write it yourself",
        ("_refused", 'if name in forbid or name.split(".")[0] in forbid or named in forbid:', "if False:"),
    ),
    (
        "course code under any name",
        _course_code,
        "uses masked_softmax",
        ("_refused", 'return isinstance(module, str) and module.split(".")[0] in forbid', "return False"),
    ),
    (
        "helper in the learner's own helper",
        _through_own_helper,
        "uses masked_softmax (in _own_helper)",
        ("uses", "if inspect.isfunction(obj) and obj.__module__ == fn.__module__:", "if False:"),
    ),
    (
        "helper passed as it is",
        double_it,
        "my_double uses double_it",
        ("uses", 'if forbid and _refused(fn, getattr(fn, "__name__", ""), forbid):', "if False:"),
    ),
]


def _run(spec, answer, capsys):
    ok = spec.check(answer)
    out = capsys.readouterr().out
    return ok, out


@pytest.mark.parametrize("rule, answer, said, broken", RULES, ids=[r[0] for r in RULES])
def test_each_rule_gives_its_one_line(rule, answer, said, broken, capsys):
    ok, out = _run(DOUBLE, answer, capsys)
    assert ok is said.startswith("✅") and said in out and out.count("\n") == 1, out


def _break(monkeypatch, where: str, old: str, new: str):
    """Replace the framework's function `where` ('close', 'Exercise.judge') by a copy with one line changed."""
    owner, _, name = where.rpartition(".")
    holder = getattr(framework, owner) if owner else framework
    source = textwrap.dedent(inspect.getsource(getattr(holder, name)))
    assert source.count(old) == 1, (where, old)
    space = dict(vars(framework))
    exec(compile(source.replace(old, new), framework.__file__, "exec"), space)
    monkeypatch.setattr(holder, name, space[name])


@pytest.mark.parametrize("rule, answer, said, broken", [r for r in RULES if r[3]], ids=[r[0] for r in RULES if r[3]])
def test_a_broken_copy_of_each_rule_fails_its_test(rule, answer, said, broken, monkeypatch, capsys):
    _break(monkeypatch, *broken)
    try:
        ok, out = _run(DOUBLE, answer, capsys)
    except Exception:  # noqa: BLE001 - a broken rule may let the learner's error through: the test fails too
        return
    assert not (ok is said.startswith("✅") and said in out and out.count("\n") == 1), out


def test_a_value_exercise(capsys):
    assert FOUR.check(4) and FOUR.check(np.float64(4.0)) and FOUR.check(torch.tensor(4.0))
    capsys.readouterr()
    assert _run(FOUR, None, capsys)[1] == NOT_ANSWERED + "set my_four, then re-run.\n"
    assert "2 * 3 is 6" in _run(FOUR, 6, capsys)[1]
    for wrong in ("4", True, [4.0], float("nan")):
        assert _run(FOUR, wrong, capsys)[1].startswith(NOT_YET + "give one number; got ")
    assert _run(FOUR, 5, capsys)[1] == NOT_YET + FOUR.otherwise + "\n"


def test_mistakes_are_computed_on_the_failing_case_and_tried_in_order(capsys):
    spec = Exercise(
        todo="t",
        success="s",
        name="f",
        reference=lambda x: 2 * x,
        cases=[("two", (torch.tensor([2.0]),)), ("three", (torch.tensor([3.0]),))],
        mistakes=(Mistake("a", gives=lambda x: x * x), Mistake("b", gives=lambda x: x**2)),
    )
    assert _run(spec, lambda x: x * x, capsys)[1] == NOT_YET + "three: a\n"  # x * x = 2x when x = 2


def test_a_mistake_that_cannot_run_on_a_case_is_skipped_and_learner_hides_code(capsys):
    spec = Exercise(
        todo="t",
        success="s",
        name="f",
        reference=lambda x: 2 * x,
        cases=[("", (torch.ones(2),))],
        mistakes=(Mistake("never", gives=lambda x: x @ torch.ones(3)), Mistake("half", gives=lambda x: x)),
        forbid=("course_utils",),
    )
    assert _run(spec, lambda x: x, capsys)[1] == NOT_YET + "half\n"
    assert uses(masked_softmax, ("course_utils",)) == "masked_softmax"
    assert uses(learner(masked_softmax), ("course_utils",)) is None  # how tests hand over a reference


def test_honest_code_with_names_like_the_helper_passes():
    def honest(x):
        double_it = 2 * x  # a local variable may be called anything
        return double_it

    assert uses(honest, ("double_it", "course_utils")) is None and DOUBLE.check(honest)


def test_the_learners_inputs_are_fresh_copies(capsys):
    def in_place(x):
        x.mul_(2)
        return x

    assert DOUBLE.check(in_place)  # the reference saw the unchanged inputs


def test_choice(capsys):
    def choose(answer):
        hints = {"up": "", "down": "it grows.", "torch_default": "no."}
        return check_choice(answer, "up", hints, todo="pick", success="yes")

    assert choose("up") and choose(" Up ")
    assert choose("Torch default") is False and "no." in capsys.readouterr().out  # spelling variants of a choice
    assert not choose("down") and "it grows." in capsys.readouterr().out
    for unanswered in (None, "", "?", ...):
        assert not choose(unanswered) and capsys.readouterr().out == NOT_ANSWERED + "pick\n"
    for wrong in ("sideways", 3):
        assert not choose(wrong) and "answer one of 'up', 'down', 'torch_default'" in capsys.readouterr().out


def test_choice_broken_copy(monkeypatch, capsys):
    _break(monkeypatch, "_key", 'return text.strip().lower().replace(" ", "_").replace("-", "_")', "return text")
    framework.check_choice(" Up ", "up", {"up": "", "down": ""}, todo="pick", success="yes")
    assert "✅" not in capsys.readouterr().out


_double_alias = double_it  # the refused helper under another name


def _looping_helper(x):
    return torch.stack([2 * v for v in x])


def test_an_alias_and_a_python_loop_are_refused(monkeypatch):
    """A refused name under an alias is refused; "for" in forbid refuses a for, a while, a comprehension, also in the
    learner's own helper; code without a loop passes. Each rule's broken copy lets its answer through."""

    def loops(x):
        out = x.clone()
        i = 0
        while i < len(x):
            out[i] = 2 * x[i]
            i += 1
        return out

    forbid = ("double_it", "for")
    assert uses(lambda x: _double_alias(x), forbid) == "_double_alias"
    assert uses(loops, forbid) == "a Python loop"
    assert uses(lambda x: _looping_helper(x), forbid) == "a Python loop (in _looping_helper)"
    assert uses(lambda x: 2 * x, forbid) is None and uses(loops, ("double_it",)) is None
    _break(monkeypatch, "_refused", " or named in forbid:", ":")
    _break(monkeypatch, "_loops", 'i.opname == "FOR_ITER" or "BACKWARD" in i.opname', "False")
    assert uses(lambda x: _double_alias(x), forbid) is None and uses(loops, forbid) is None


def test_on_error_hints_before_a_not_implemented_error_is_read_as_unanswered(capsys):
    """torch raises NotImplementedError for some wrong calls (a loss on integer scores): on_error may name it."""
    spec = dataclasses.replace(DOUBLE, on_error=lambda exc, args: "integer scores." if str(exc) else None)

    def integer_scores(x):
        raise NotImplementedError("not implemented for 'Long'")

    assert not spec.check(integer_scores)
    assert not spec.check(_not_written)
    assert capsys.readouterr().out.splitlines() == [NOT_YET + "integer scores.", NOT_ANSWERED + DOUBLE.todo]


WORDS = Exercise(
    todo="fill in my_words, then re-run.",
    success="both right.",
    reference={"a": "noun", "n": 2.0},
    mistakes=(Mistake("swap them.", gives={"a": "verb", "n": 2.0}),),
    returns="a dict {'a': word, 'n': number}",
)


def test_a_dict_of_words_and_numbers(monkeypatch, capsys):
    """A dict answer: the same keys, each value like the reference's (a word in any case, a number within the
    tolerance); another key set or kind of value is the wrong-type line. A broken copy of each rule fails."""
    answers = [{"a": " Noun", "n": 2}, {"a": "verb", "n": 2}, {"a": "noun"}, {"a": 1, "n": 2}, {"a": "noun", "n": 3}]
    lines = [
        "✅ both right.",
        NOT_YET + "swap them.",
        NOT_YET + "give a dict",
        NOT_YET + "give a dict",
        "not the right",
    ]
    assert [WORDS.check(a) for a in answers] == [True] + [False] * 4
    assert all(line in out for line, out in zip(lines, capsys.readouterr().out.splitlines(), strict=True))
    _break(monkeypatch, "like", "return got.strip().lower()", "return got")
    assert not WORDS.check({"a": " Noun", "n": 2})
    _break(monkeypatch, "close", "return got.keys() == want.keys() and", "return False and")
    assert not WORDS.check({"a": "noun", "n": 2})


def test_compared(monkeypatch):
    """A prediction that is not graded: none, right (a word in any case, '1' for 1, a list for a set) or what it was."""
    assert compared(None, 1) == "You made no prediction." and compared(0, 1) == "You predicted 0."
    assert compared(" Want", "want") == compared("1", 1) == compared([3, 1], {1, 3}) == "Your prediction was right."
    _break(monkeypatch, "_plain", "return frozenset(_plain(v) for v in x)", "return x")
    assert compared([3, 1], {1, 3}) == "You predicted [3, 1]."
