"""Notebook 08's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

import numpy as np
import pytest
from notebook_cells import solution_blocks  # tests/ is on sys.path under pytest

from course_utils.core.model import translate
from course_utils.exercises import NOT_ANSWERED, NOT_YET, nb08
from course_utils.exercises.framework import learner
from course_utils.measures.probing import five_sentence_traces, five_sentences, shared_positions, word_spread
from course_utils.measures.similarity import mean_pairwise_cosine_distance
from course_utils.training.zoo import load_seeds


def my_word_spread(V):  # the worked solution in the notebook
    V = V / np.linalg.norm(V, axis=1, keepdims=True)
    i, j = np.triu_indices(len(V), 1)
    return float((1 - (V @ V.T)[i, j]).mean())


def with_a_loop(V):  # right numbers, but the notebook's loop again
    return float(np.mean([1 - V[i] @ V[j] / np.linalg.norm(V[i]) / np.linalg.norm(V[j]) for i, j in _pairs(V)]))


def _pairs(V):
    return [(i, j) for i in range(len(V)) for j in range(i + 1, len(V))]


def my_word_spread_of(V):  # stands in for the notebook's loop version
    return mean_pairwise_cosine_distance(V)


_spread = mean_pairwise_cosine_distance  # an alias


def scipy_does_it(V):
    from scipy.spatial.distance import pdist

    return float(pdist(V, "cosine").mean())


@pytest.mark.parametrize(
    "fn, said",
    [
        (my_word_spread, "✅"),
        (with_a_loop, "uses a Python loop"),
        (lambda V: my_word_spread_of(V), "uses my_word_spread_of"),
        (mean_pairwise_cosine_distance, "uses mean_pairwise_cosine_distance"),
        (lambda V: _spread(V), "uses _spread"),
        (scipy_does_it, "uses scipy"),
        (lambda V: None, NOT_ANSWERED),
        (None, NOT_ANSWERED),
        (lambda V: 1 / 0, "raised ZeroDivisionError"),
        ("not a function", "pass the function itself"),
    ],
)
def test_word_spread(fn, said, capsys):
    assert nb08.check_word_spread(fn) is (said == "✅")
    out = capsys.readouterr().out
    assert said in out and out.count("\n") == 1, out


@pytest.mark.parametrize("mistake", nb08.WORD_SPREAD.mistakes, ids=lambda m: m.hint[:30])
def test_word_spread_names_each_mistake(mistake, capsys):
    assert not nb08.check_word_spread(learner(mistake.gives))
    assert NOT_YET in (out := capsys.readouterr().out) and mistake.hint in out


@pytest.fixture(scope="module")
def seed_traces():
    return {s: five_sentence_traces(r.model) for s, r in load_seeds("learned").items()}


def most_moved(traces, key):  # the worked solution in the notebook
    spreads = {}
    for p, word in shared_positions(traces, key):
        spreads[word] = my_word_spread(np.stack([t.vectors(key)[p].numpy() for t in traces]))
    return max(spreads, key=spreads.get)


def test_most_moved_accepts_the_worked_solution_and_compares_the_prediction(seed_traces, capsys):
    # the solution note's numbers: the encoder's mover depends on the seed, cross-attention's is kann on every seed
    assert nb08.most_moved_words(seed_traces, "encoder.0.self.x1") == {0: "can", 1: "eat", 2: "eat", 3: "i", 4: "eat"}
    assert set(nb08.most_moved_words(seed_traces, "decoder.0.cross.x1").values()) == {"kann"}
    assert max(word_spread(seed_traces[3], "encoder.0.self.x1").values()) < 0.01  # seed 3: hardly moves
    assert nb08.check_most_moved(most_moved, seed_traces, 1, 5)
    out = capsys.readouterr().out
    assert "seed-dependent (holds on 1/5 seeds: 0)" in out and "holds (5/5 seeds)" in out and "(right)" in out
    assert nb08.check_most_moved(most_moved, seed_traces, 5, np.int64(0))  # a wrong guess is compared, not graded
    assert "can: you predicted 5, it is 1;" in capsys.readouterr().out
    assert nb08.check_most_moved(most_moved, seed_traces) and "no prediction" in capsys.readouterr().out


def _aliased(traces, key):
    spreads = _moved(traces, key)
    return max(spreads, key=spreads.get)


_moved = word_spread


@pytest.mark.parametrize(
    "fn, args, said",
    [
        (lambda traces, key: 0.5, (1, 5), "the word itself"),
        (lambda traces, key: "apple", (1, 5), "not one of the words"),
        (lambda traces, key: "can" if key.startswith("encoder") else "kann", (1, 5), "seed 1, encoder.0.self.x1"),
        (lambda traces, key: nb08.most_moved_words({0: traces}, key)[0], (1, 5), "uses most_moved_words"),
        (_aliased, (1, 5), "uses _moved"),
        (lambda traces, key: None, (1, 5), NOT_ANSWERED),
        (None, (1, 5), NOT_ANSWERED),
        ("most_moved", (1, 5), "pass the function itself"),
        *((most_moved, (g, 5), "a whole number from 0 to 5") for g in (6, -1, 2.5, True, "5")),
    ],
)
def test_most_moved_rejects(fn, args, said, seed_traces, capsys):
    assert not nb08.check_most_moved(fn, seed_traces, *args)
    assert said in (out := capsys.readouterr().out) and out.count("\n") == 1, out
    assert not nb08.check_most_moved(most_moved, {0: 1}) and "seed_traces" in capsys.readouterr().out


@pytest.mark.parametrize("mistake", nb08.MOST_MOVED.mistakes, ids=lambda m: m.hint[:30])
def test_most_moved_names_each_mistake(mistake, seed_traces, capsys):
    wrong = learner(mistake.gives or (lambda traces, key: "apple"))  # a predicate mistake: a word not shared
    assert not nb08.check_most_moved(wrong, seed_traces)
    assert mistake.hint in capsys.readouterr().out


def test_kept_object(capsys):
    kept = {
        s: "bread" if "brot" in translate(r.model, nb08.MISLEADING_AGAIN) else "book" for s, r in load_seeds().items()
    }
    assert kept == {0: "bread", 1: "book", 2: "bread", 3: "book", 4: "book"}  # the solution note's numbers
    assert nb08.kept_objects("i can eat apple book") == {0: "book", 1: "apple", 2: "apple", 3: "book", 4: "book"}
    for guess, said in [({1, 3, 4}, "You predicted [1, 3, 4]"), ((np.int64(0),), "You predicted [0]"), (None, "no")]:
        assert nb08.check_kept_object(kept, guess) and said in capsys.readouterr().out
    for wrong, guess, said in [
        (None, None, NOT_ANSWERED),
        ({s: "book" for s in kept}, None, "some seed does not keep"),
        ({s: {"bread": "brot", "book": "buch"}[v] for s, v in kept.items()}, None, "not the German noun"),
        ({0: "bread", 1: "book"}, None, "one answer for each seed"),
        (["bread", "book", "bread", "book", "book"], None, "one answer for each seed"),
        *((kept, g, "a set of seed numbers") for g in (5, "1, 3, 4", 1.5, {"1", "3"}, [True])),
    ]:
        assert not nb08.check_kept_object(wrong, guess)
        assert said in (out := capsys.readouterr().out) and out.count("\n") == 1, out


def test_the_notebooks_worked_solutions_pass_their_checkers(seed_traces, capsys):
    namespace = {"np": np, "runs": load_seeds("learned"), "translate": translate, "seed_traces": seed_traces}
    namespace |= {
        "traces": five_sentences(),
        "shared_positions": shared_positions,
        "sentence": nb08.MISLEADING_AGAIN,
        "predicted_can": None,
    }
    namespace |= {"predicted_kann": None, "predicted_book_seeds": None, "my_word_spread_of": my_word_spread_of}
    namespace |= {f.__name__: f for f in (nb08.check_word_spread, nb08.check_kept_object, nb08.check_most_moved)}
    for block in solution_blocks("08_probe_sentences.ipynb"):
        exec(block, namespace)
        assert "✅" in capsys.readouterr().out
