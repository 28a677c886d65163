"""Notebook 08's checkers accept the worked solutions and reject typical wrong answers (and the unanswered state)."""

import numpy as np
import pytest
from notebook_cells import course_imports, solution_blocks  # tests/ is on sys.path under pytest

from course_utils.exercises import NOT_ANSWERED, calls_course_helper, nb06, nb08, nb09, python_loops
from course_utils.measures.probing import five_sentence_traces, five_sentences, shared_positions, word_spread
from course_utils.measures.similarity import mean_pairwise_cosine_distance

NOT_YET = NOT_ANSWERED  # the ✍ line of an unanswered exercise


def my_word_spread(V):  # the worked solution in the notebook
    V = V / np.linalg.norm(V, axis=1, keepdims=True)
    C = V @ V.T
    i, j = np.triu_indices(len(V), 1)
    return float((1 - C[i, j]).mean())


def test_word_spread_accepts_worked_solution():
    assert nb08.check_word_spread(my_word_spread)


def test_word_spread_rejects_typical_mistakes(capsys):
    def similarity(V):  # mean cosine instead of 1 - cosine
        return 1 - my_word_spread(V)

    def with_diagonal(V):  # all pairs including i = j
        V = V / np.linalg.norm(V, axis=1, keepdims=True)
        return float((1 - V @ V.T).mean())

    def euclidean(V):
        i, j = np.triu_indices(len(V), 1)
        return float(np.linalg.norm(V[i] - V[j], axis=1).mean())

    def with_a_loop(V):  # right numbers, but the notebook's loop again
        V = np.asarray(V, dtype=float)
        gaps = []
        for i in range(len(V)):
            for j in range(i + 1, len(V)):
                gaps.append(1 - V[i] @ V[j] / (np.linalg.norm(V[i]) * np.linalg.norm(V[j])))
        return float(np.mean(gaps))

    def with_a_comprehension(V):
        U = V / np.linalg.norm(V, axis=1, keepdims=True)
        return float(np.mean([1 - U[i] @ U[j] for i in range(len(U)) for j in range(i + 1, len(U))]))

    def stub(V):  # the notebook's unanswered cell
        return None

    def my_word_spread_of(V):  # stands in for the notebook's loop version (defined in its measure cell)
        return mean_pairwise_cosine_distance(V)

    def delegates(V):  # right numbers, but the loop version does the work
        return my_word_spread_of(V)

    def library(V):
        return mean_pairwise_cosine_distance(V)

    def broken(V):
        raise RuntimeError("oops")

    for fn, hint in [
        (similarity, "1 - cosine"),
        (with_diagonal, "only pairs i < j"),
        (euclidean, "1 - cosine"),
        (with_a_loop, "Python loop: for (line"),
        (with_a_comprehension, "Python loop: comprehension"),
        (delegates, "calls my_word_spread_of"),
        (library, "calls mean_pairwise_cosine_distance"),
        (stub, NOT_YET),
        (None, NOT_YET),
        (broken, "raised RuntimeError"),
        ("not a function", "pass your function itself"),
    ]:
        assert not nb08.check_word_spread(fn)
        assert hint in capsys.readouterr().out


@pytest.fixture(scope="module")
def seed_traces():
    from course_utils.training.zoo import load_seeds

    return {s: five_sentence_traces(r.model) for s, r in load_seeds("learned").items()}


def most_moved(traces, key):  # the worked solution in the notebook
    spreads = {}
    for p, word in shared_positions(traces, key):
        V = np.stack([t.vectors(key)[p].numpy() for t in traces])
        spreads[word] = my_word_spread(V)
    return max(spreads, key=spreads.get)


def test_most_moved_accepts_the_worked_solution_and_compares_the_prediction(seed_traces, capsys):
    # the solution note's numbers: the encoder's mover depends on the seed, cross-attention's is kann on every seed
    assert nb08.most_moved_words(seed_traces, "encoder.0.self.x1") == {0: "can", 1: "eat", 2: "eat", 3: "i", 4: "eat"}
    assert set(nb08.most_moved_words(seed_traces, "decoder.0.cross.x1").values()) == {"kann"}
    assert max(word_spread(seed_traces[3], "encoder.0.self.x1").values()) < 0.01  # seed 3: hardly moves
    assert nb08.check_most_moved(most_moved, seed_traces, 1, 5)
    out = capsys.readouterr().out
    assert "seed-dependent (holds on 1/5 seeds: 0)" in out and "holds (5/5 seeds)" in out and "(right)" in out
    assert nb08.check_most_moved(most_moved, seed_traces, 5, 5)  # a wrong guess is compared, not graded
    assert "can: you predicted 5, it is 1;" in capsys.readouterr().out
    assert nb08.check_most_moved(most_moved, seed_traces) and "no prediction" in capsys.readouterr().out


def test_most_moved_rejects_typical_mistakes(seed_traces, capsys):
    def least(traces, key):  # min instead of max
        spreads = {
            w: my_word_spread(np.stack([t.vectors(key)[p].numpy() for t in traces]))
            for p, w in shared_positions(traces, key)
        }
        return min(spreads, key=spreads.get)

    def similarity(traces, key):  # largest mean cosine: the word that moves least
        spreads = {
            w: 1 - my_word_spread(np.stack([t.vectors(key)[p].numpy() for t in traces]))
            for p, w in shared_positions(traces, key)
        }
        return max(spreads, key=spreads.get)

    def the_spread(traces, key):  # the number instead of the word
        return max(
            my_word_spread(np.stack([t.vectors(key)[p].numpy() for t in traces]))
            for p, _ in shared_positions(traces, key)
        )

    def ready_made(traces, key):
        spreads = word_spread(traces, key)
        return max(spreads, key=spreads.get)

    def always_seed_0(traces, key):  # seed 0's answer hard-coded
        return "can" if key.startswith("encoder") else "kann"

    def runner_up(traces, key):  # a shared word, but neither the one that moves most nor the one that moves least
        spreads = {
            w: my_word_spread(np.stack([t.vectors(key)[p].numpy() for t in traces]))
            for p, w in shared_positions(traces, key)
        }
        return sorted(spreads, key=spreads.get)[-2]

    def stub(traces, key):  # the notebook's unanswered cell
        return None

    for fn, hint in [
        (least, "moves least"),
        (similarity, "moves least"),
        (the_spread, "return the word itself"),
        (ready_made, "calls the course's word_spread"),
        (runner_up, "another shared word moves more"),
        (always_seed_0, "seed 1, encoder.0.self.x1: you return 'can'"),
        (stub, NOT_YET),
        (None, NOT_YET),
        ("most_moved", "pass your function itself"),
    ]:
        assert not nb08.check_most_moved(fn, seed_traces, 1, 5)
        assert hint in capsys.readouterr().out


def _with_loops(V):
    total = 0.0
    for i in range(len(V)):
        total += sum(float(V[i] @ V[j]) for j in range(i))
    return total


def test_python_loops_reads_the_source():
    assert python_loops(my_word_spread) == []
    assert python_loops(print) == []  # no Python source: nothing to say
    assert python_loops(_with_loops) == ["for (line 3)", "generator expression (line 4)"]
    assert nb06.python_loops is nb08.python_loops is python_loops  # one copy, in course_utils.exercises
    assert nb08.calls_course_helper is nb09.calls_course_helper  # one copy of the helper refusal


def test_calls_course_helper_names_the_helper(capsys):
    def uses(V):
        return mean_pairwise_cosine_distance(V)

    assert calls_course_helper(uses, ("mean_pairwise_cosine_distance", "word_spread"), "calls {name} ({names})")
    assert (
        capsys.readouterr().out.strip().endswith("calls mean_pairwise_cosine_distance (mean_pairwise_cosine_distance)")
    )
    assert not calls_course_helper(my_word_spread, ("mean_pairwise_cosine_distance",), "calls {name}")
    assert capsys.readouterr().out == ""  # the learner's own code: nothing printed


def test_kept_object_accepts_the_worked_solution_and_compares_the_prediction(capsys):
    from course_utils.core.model import translate
    from course_utils.training.zoo import load_seeds

    runs = load_seeds("learned")
    kept = {}  # the worked solution
    for s, r in runs.items():
        german = translate(r.model, nb08.MISLEADING_AGAIN)
        kept[s] = "bread" if "brot" in german else "book" if "buch" in german else "neither"
    assert kept == {0: "bread", 1: "book", 2: "bread", 3: "book", 4: "book"}  # the solution note's numbers
    assert nb08.kept_objects("i can eat apple book") == {0: "book", 1: "apple", 2: "apple", 3: "book", 4: "book"}
    assert nb08.check_kept_object(kept, {1, 3, 4})
    assert "Your prediction was right" in capsys.readouterr().out
    assert nb08.check_kept_object(kept, {0, 3, 4})  # a wrong guess is compared, not graded
    assert "You predicted [0, 3, 4]" in capsys.readouterr().out
    assert nb08.check_kept_object(kept) and "no prediction" in capsys.readouterr().out
    for wrong, hint in [
        (None, NOT_YET),
        ({0: "book", 1: "apple", 2: "apple", 3: "book", 4: "book"}, "seed 0 does not keep 'book'"),  # apple book's
        ({s: "book" for s in kept}, "seed 0 does not keep 'book'"),
        ({0: "brot", 1: "buch", 2: "brot", 3: "buch", 4: "buch"}, "English object"),
        ({0: "bread", 1: "book"}, "one answer for each seed"),
        (["bread", "book", "bread", "book", "book"], "should be a dict"),
    ]:
        assert not nb08.check_kept_object(wrong, {1, 3, 4})
        assert hint in capsys.readouterr().out


@pytest.mark.parametrize("guess", [5, "1, 3, 4", {1: "book"}, 1.5, {"1", "3"}, [True]])
def test_kept_object_answers_a_guess_that_is_not_a_set(guess, capsys):
    """A prediction that is not a set of seed numbers gets one ❌ line asking for a set, never a crash."""
    right = nb08.kept_objects()
    assert not nb08.check_kept_object(right, guess)
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("❌") and "a set of seed numbers" in out
    assert not nb08.check_kept_object(None, guess) and "a set of seed numbers" in capsys.readouterr().out


def test_kept_object_reads_a_list_of_seeds_as_a_set(capsys):
    right = nb08.kept_objects()
    assert nb08.check_kept_object(right, [1, 3, 4]) and "Your prediction was right" in capsys.readouterr().out
    assert nb08.check_kept_object(right, (np.int64(0),)) and "You predicted [0]" in capsys.readouterr().out
    assert not nb08.check_kept_object({0: "bread", "x": "book"}, {1})  # mixed keys: a hint, not a crash
    assert "one answer for each seed" in capsys.readouterr().out


def test_the_notebooks_worked_solutions_pass_their_checkers(capsys):
    from course_utils.core.model import translate
    from course_utils.training.zoo import load_seeds

    blocks = solution_blocks("08_probe_sentences.ipynb")
    namespace = {
        "np": np,
        "runs": load_seeds("learned"),
        "translate": translate,
        "traces": five_sentences(),
        **course_imports("08_probe_sentences.ipynb"),
        "seed_traces": {s: five_sentence_traces(r.model) for s, r in load_seeds("learned").items()},
        "my_word_spread_of": mean_pairwise_cosine_distance,  # the notebook's loop version computes this
        "predicted_can": None,
        "predicted_kann": None,
        "sentence": nb08.MISLEADING_AGAIN,
        "predicted_book_seeds": None,
        "check_word_spread": nb08.check_word_spread,
        "check_kept_object": nb08.check_kept_object,
        "check_most_moved": nb08.check_most_moved,
    }
    assert len(blocks) == 3
    for block in blocks:
        exec(block, namespace)
        assert "✅" in capsys.readouterr().out


# ---- every checker survives a wrong type; the write-it-yourself exercises refuse ready-made code ----


@pytest.mark.parametrize("wrong", [7, "my_word_spread", [1.0, 2.0], {"seed": 0}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, seed_traces, capsys):
    right_kept = nb08.kept_objects()
    checks = [
        lambda: nb08.check_word_spread(wrong),
        lambda: nb08.check_most_moved(wrong, seed_traces),
        lambda: nb08.check_most_moved(most_moved, wrong),
        lambda: nb08.check_most_moved(most_moved, seed_traces, wrong, wrong),
        lambda: nb08.check_kept_object(wrong),
        lambda: nb08.check_kept_object(right_kept, wrong),
    ]
    for check in checks:
        assert check() is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


_spread = mean_pairwise_cosine_distance  # an alias: the helper under another name
_moved = word_spread


def test_word_spread_refuses_ready_made_code_under_any_name(capsys):
    from scipy.spatial.distance import pdist

    def aliased(V):
        return _spread(V)

    def scipy_does_it(V):
        return float(pdist(V, "cosine").mean())

    for fn, said in [
        (aliased, "uses _spread, ready-made code"),
        (mean_pairwise_cosine_distance, "uses mean_pairwise_cosine_distance"),  # the helper passed as it is
        (scipy_does_it, "uses pdist"),
    ]:
        assert not nb08.check_word_spread(fn)
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and said in out and out.count("\n") == 1, out
    assert nb08.check_word_spread(my_word_spread)  # the honest solution still passes


def test_most_moved_refuses_ready_made_code_under_any_name(seed_traces, capsys):
    def the_checkers_own(traces, key):
        return nb08.most_moved_words({0: traces}, key)[0]

    def aliased(traces, key):
        spreads = _moved(traces, key)
        return max(spreads, key=spreads.get)

    for fn, said in [(the_checkers_own, "most_moved_words"), (aliased, "uses _moved, ready-made code")]:
        assert not nb08.check_most_moved(fn, seed_traces, 1, 5)
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and said in out and out.count("\n") == 1, out

    def with_the_loop_version(traces, key):  # shared_positions and the loop-version's spread are allowed
        spreads = {
            w: mean_pairwise_cosine_distance(np.stack([t.vectors(key)[p].numpy() for t in traces]))
            for p, w in shared_positions(traces, key)
        }
        return max(spreads, key=spreads.get)

    assert nb08.check_most_moved(with_the_loop_version, seed_traces, 1, 5)
    assert nb08.check_most_moved(most_moved, seed_traces, np.int64(1), 0)  # numpy ints and 0 are guesses too


@pytest.mark.parametrize("guess", [6, -1, 2.5, True, "5"])
def test_most_moved_asks_for_a_count_of_seeds(guess, seed_traces, capsys):
    assert not nb08.check_most_moved(most_moved, seed_traces, guess, 5)
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: predict with a whole number from 0 to 5") and out.count("\n") == 1, out
