"""Notebook 08's checkers accept the worked solutions and reject typical wrong answers (and the unanswered state)."""

import numpy as np

from course_utils import probing
from course_utils.exercises import nb08

NOT_YET = "not answered yet"


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

    def broken(V):
        raise RuntimeError("oops")

    for fn, hint in [
        (similarity, "1 - cosine"),
        (with_diagonal, "only pairs i < j"),
        (euclidean, "1 - cosine"),
        (with_a_loop, "Python loop: for (line"),
        (with_a_comprehension, "Python loop: comprehension"),
        (stub, NOT_YET),
        (None, NOT_YET),
        (broken, "raised RuntimeError"),
        ("not a function", "pass your function itself"),
    ]:
        assert not nb08.check_word_spread(fn)
        assert hint in capsys.readouterr().out


def test_python_loops_reads_the_source():
    assert nb08.python_loops(my_word_spread) == []
    assert nb08.python_loops(print) == []  # no Python source: nothing to say


def test_kept_object_accepts_the_worked_solution_and_compares_the_prediction(capsys):
    from course_utils.model import translate
    from course_utils.training import load_seeds

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


def test_the_notebooks_worked_solutions_pass_their_checkers(capsys):
    import json
    import re
    from pathlib import Path

    from course_utils.model import translate
    from course_utils.training import load_seeds

    path = Path(__file__).resolve().parents[1] / "notebooks" / "08_probe_sentences.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    blocks = [
        block
        for c in cells
        if c["cell_type"] == "markdown" and "<details>" in "".join(c["source"])
        for block in re.findall(r"```python\n(.*?)```", "".join(c["source"]), re.S)
    ]
    namespace = {
        "np": np,
        "runs": load_seeds("learned"),
        "translate": translate,
        "traces": probing.five_sentences(),
        "sentence": nb08.MISLEADING_AGAIN,
        "predicted_book_seeds": None,
        "check_word_spread": nb08.check_word_spread,
        "check_kept_object": nb08.check_kept_object,
    }
    assert len(blocks) == 2
    for block in blocks:
        exec(block, namespace)
        assert "✅" in capsys.readouterr().out
