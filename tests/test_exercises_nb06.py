"""Notebook 06's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils import core, measures
from course_utils.exercises import nb06
from course_utils.exercises.framework import NOT_ANSWERED, learner
from course_utils.measures.clustering import PAIR, word_vector
from course_utils.measures.similarity import relative_distance
from course_utils.trace import patch, uniform_attention
from course_utils.training.zoo import load_seeds


def _unanswered(w, name):
    return None


def test_uniform_right_answers_pass(capsys):
    assert nb06.check_uniform(learner(lambda w, name: torch.full_like(w, 1.0) / w.shape[-1]))
    assert nb06.check_uniform(learner(lambda w, name: uniform_attention(w, name)))  # the library's, given by a test
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize(
    "fn, said",
    [
        (None, NOT_ANSWERED),
        (_unanswered, NOT_ANSWERED),
        (uniform_attention, "uses uniform_attention"),
        (learner(lambda w, name: w.mean(-1)), "has shape (1, 1, 4)"),
        (learner(lambda w, name: "even"), "should return a tensor shaped like w"),
        *((learner(m.gives), m.hint) for m in nb06.UNIFORM.mistakes),
    ],
)
def test_uniform(fn, said, capsys):
    assert not nb06.check_uniform(fn)
    assert said in capsys.readouterr().out


def test_most_changed_word(capsys):
    spec = nb06.most_changed_spec()
    assert nb06.check_most_changed_word(spec.reference, " Want") and "prediction was right" in capsys.readouterr().out
    for wrong, said in [(None, NOT_ANSWERED), *((m.gives, m.hint) for m in spec.mistakes)]:
        assert not nb06.check_most_changed_word(wrong, "want")
        assert said in (out := capsys.readouterr().out) and "moves most" not in out, out


@pytest.mark.parametrize(
    "fn, said", [(None, NOT_ANSWERED), *((learner(m.gives), m.hint) for m in nb06.HEAD_SHIFT.mistakes)]
)
def test_head_shift(fn, said, capsys):
    assert not nb06.check_head_shift(fn, 1)
    assert said in capsys.readouterr().out


def test_the_notebooks_worked_solutions_pass_their_checkers(capsys):
    seeds = load_seeds("learned")
    namespace = {
        **{"np": np, "snaps": seeds[0].snapshots, "seeds": seeds, "seed4": seeds[4].snapshots[30], "PAIR": PAIR},
        **{"A": PAIR[0], "B": PAIR[1], "relative_distance": relative_distance, "word_vector": word_vector},
        **{"my_relative_distance": relative_distance, "predicted_word": "want", "predicted_head": 1},
        **{"ex": nb06, "measures": measures, "torch": torch, "patch": patch, "core": core, "model": seeds[0].model},
    }
    for call in ("check_uniform(", "check_most_changed_word(", "check_head_shift("):
        exec(solution_code("06_qkv_clustering_by_epoch.ipynb", call), namespace)
        assert "✅" in capsys.readouterr().out, call
