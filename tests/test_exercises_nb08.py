"""Notebook 08's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

import math

import numpy as np
import pytest
import torch
from notebook_cells import solution_blocks  # tests/ is on sys.path under pytest

from course_utils import measures
from course_utils.core.attention import scaled_dot_product_attention
from course_utils.exercises import nb08
from course_utils.exercises.framework import NOT_ANSWERED, learner
from course_utils.measures.probing import five_sentence_traces, five_sentences, word_spread
from course_utils.measures.similarity import mean_pairwise_cosine_distance
from course_utils.training.zoo import load_seeds


def with_a_loop(V):  # right numbers, but the notebook's loop again
    return np.mean([1 - V[i] @ V[j] / np.linalg.norm(V[i]) / np.linalg.norm(V[j]) for i, j in [(0, 1)]])


def my_word_spread_of(V):  # stands in for the notebook's loop version
    return mean_pairwise_cosine_distance(V)


def scipy_does_it(V):
    from scipy.spatial.distance import pdist

    return float(pdist(V, "cosine").mean())


@pytest.mark.parametrize(
    "fn, said",
    [
        (None, NOT_ANSWERED),
        (lambda V: None, NOT_ANSWERED),
        (with_a_loop, "uses a Python loop"),
        (lambda V: my_word_spread_of(V), "uses my_word_spread_of"),
        (mean_pairwise_cosine_distance, "uses mean_pairwise_cosine_distance"),
        (scipy_does_it, "uses scipy"),
        *((learner(m.gives), m.hint) for m in nb08.WORD_SPREAD.mistakes),
    ],
)
def test_word_spread(fn, said, capsys):
    assert not nb08.check_word_spread(fn)
    assert said in capsys.readouterr().out


@pytest.fixture(scope="module")
def seed_traces():
    return {s: five_sentence_traces(r.model) for s, r in load_seeds("learned").items()}


def _via_word_spread(traces, key):
    spreads = word_spread(traces, key)
    return max(spreads, key=spreads.get)


@pytest.mark.parametrize(
    "fn, said",
    [
        (None, NOT_ANSWERED),
        (lambda traces, key: None, NOT_ANSWERED),
        (_via_word_spread, "uses word_spread"),
        (lambda traces, key: "apple", nb08.MOST_MOVED.mistakes[0].hint),
        (learner(nb08.MOST_MOVED.mistakes[1].gives), nb08.MOST_MOVED.mistakes[1].hint),
    ],
)
def test_most_moved(fn, said, seed_traces, capsys):
    assert not nb08.check_most_moved(fn, seed_traces, 1, 5)
    assert said in capsys.readouterr().out


def test_earlier_output_prediction(capsys):
    for answer, said in [(None, NOT_ANSWERED), ("changes", "cannot see a later word"), ("maybe", "answer one of")]:
        assert not nb08.check_earlier_output(answer)
        assert said in capsys.readouterr().out
    assert nb08.check_earlier_output("Stays") and "its output stays" in capsys.readouterr().out


@pytest.mark.parametrize(
    "fn, said",
    [
        (None, NOT_ANSWERED),
        (lambda q, k, v, K, V: None, NOT_ANSWERED),
        (lambda q, k, v, K, V: q, "(out, K, V)"),
        (lambda q, k, v, K, V: (q, K, V), "not the right answer"),
        *((learner(m.gives), m.hint) for m in nb08.CACHED_STEP.mistakes),
    ],
)
def test_cached_step(fn, said, capsys):
    assert not nb08.check_cached_step(fn)
    assert said in capsys.readouterr().out


def test_cached_step_is_the_last_row_of_masked_attention():
    q, k, v, K, V = nb08.CACHED_STEP.cases[0][1]
    out, K2, V2 = nb08.CACHED_STEP.reference(q, k, v, K, V)
    T = K2.shape[-2]
    Q = torch.cat([torch.randn(2, T - 1, 4, dtype=q.dtype), q], dim=-2)  # earlier queries: any
    full, _ = scaled_dot_product_attention(Q, K2, V2, torch.ones(T, T, dtype=torch.bool).tril())
    assert torch.allclose(full[:, -1:], out) and torch.equal(K2[:, :-1], K) and torch.equal(V2[:, -1:], v)


def test_the_notebooks_worked_solutions_pass_their_checkers(seed_traces, capsys):
    namespace = {"np": np, "torch": torch, "math": math, "seed_traces": seed_traces, "traces": five_sentences()}
    namespace |= {"predicted_can": 1, "predicted_kann": 5, "my_word_spread_of": my_word_spread_of}
    namespace |= {"ex": nb08, "measures": measures}
    for block in solution_blocks("08_probe_sentences.ipynb"):
        exec(block, namespace)
        assert "✅" in capsys.readouterr().out
    assert nb08.check_most_moved(namespace["most_moved"], seed_traces, 1, 4)
    out = capsys.readouterr().out
    assert "can: Your prediction was right." in out and "kann: You predicted 4." in out
