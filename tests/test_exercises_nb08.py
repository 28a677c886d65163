"""Notebook 08's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

import numpy as np
import pytest
from notebook_cells import solution_blocks  # tests/ is on sys.path under pytest

from course_utils import measures
from course_utils.core.model import translate
from course_utils.exercises import nb08
from course_utils.exercises.framework import NOT_ANSWERED, learner
from course_utils.measures.probing import five_sentence_traces, five_sentences, shared_positions, word_spread
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


def test_kept_object(capsys):
    assert nb08.check_kept_object(nb08.kept_objects(), [4, 3, 1]) and "prediction was right" in capsys.readouterr().out
    german = {s: {"bread": "brot", "book": "buch"}[v] for s, v in nb08.kept_objects().items()}
    for wrong, said in [(None, NOT_ANSWERED), (german, "answer in English")]:
        assert not nb08.check_kept_object(wrong)
        assert said in capsys.readouterr().out


def test_the_notebooks_worked_solutions_pass_their_checkers(seed_traces, capsys):
    namespace = {"np": np, "runs": load_seeds("learned"), "translate": translate, "seed_traces": seed_traces}
    namespace |= {"traces": five_sentences(), "shared_positions": shared_positions, "sentence": nb08.MISLEADING_AGAIN}
    namespace |= {
        "predicted_can": 1,
        "predicted_kann": 5,
        "predicted_book_seeds": None,
        "my_word_spread_of": my_word_spread_of,
    }
    namespace |= {"ex": nb08, "measures": measures}
    for block in solution_blocks("08_probe_sentences.ipynb"):
        exec(block, namespace)
        assert "✅" in capsys.readouterr().out
    assert nb08.check_most_moved(namespace["most_moved"], seed_traces, 1, 4)
    out = capsys.readouterr().out
    assert "can: Your prediction was right." in out and "kann: You predicted 4." in out
