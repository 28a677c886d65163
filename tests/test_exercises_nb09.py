"""Notebook 09's checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.places import trace_key
from course_utils.exercises import NOT_ANSWERED
from course_utils.exercises import nb09 as ex
from course_utils.exercises.framework import learner
from course_utils.measures.attention_stats import head_statistics
from course_utils.measures.interventions import accuracy, score_interventions
from course_utils.measures.weight_maps import ov_map
from course_utils.trace.interventions import ablate_head, uniform_attention
from course_utils.trace.tracing import patch, run_with_trace

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "09_heads_and_the_query_analogy.ipynb"


# ---- exercise 1: a head detector over the corpus


def itself_mass(w):
    return w.diagonal()


def previous_mass(w):
    return w.diagonal(-1)


def aligned_mass_of(w, aligned):
    return torch.stack([w[i, cols].sum() for i, cols in enumerate(aligned)])


def _solution_namespace(batch):
    """The notebook's worked solution of exercise 1, with the measure cell's three functions it reuses."""
    ns = {
        "batch": batch,
        "torch": torch,
        "trace_key": trace_key,
        "itself_mass": itself_mass,
        "previous_mass": previous_mass,
        "aligned_mass_of": aligned_mass_of,
        "ex": ex,
    }
    exec(solution_code(NOTEBOOK, "head_detector"), ns)
    return ns


def test_head_detector_worked_solution(shipped_batch, capsys):
    ns = _solution_namespace(shipped_batch)  # the solution block also runs the checker
    assert "✅" in capsys.readouterr().out
    assert ex.check_head_detector(ns["head_detector"], shipped_batch)


def test_head_detector_reference_matches_head_statistics(shipped_batch):
    stats = head_statistics(shipped_batch)
    for (place, layer, head), row in stats.iterrows():
        for m, v in ex.detector_variant(shipped_batch, place, layer, head).items():
            assert abs(v - row[m]) < 1e-9


@pytest.mark.parametrize("mistake", ex.DETECTOR.mistakes, ids=lambda m: m.hint[:30])
def test_head_detector_names_each_mistake(shipped_batch, mistake, capsys):
    assert not ex.check_head_detector(learner(mistake.gives), shipped_batch)
    assert mistake.hint in capsys.readouterr().out


def _unanswered(batch, place, layer, head):
    raise NotImplementedError


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_unanswered, NOT_ANSWERED),
        (lambda batch, place, layer, head: None, NOT_ANSWERED),
        (lambda batch, place, layer, head: {"itself": 0.5}, "should return a dict"),
        (lambda batch, place, layer, head: 1 / 0, "raised ZeroDivisionError"),
        (lambda batch, place, layer, head: {m: 0.5 for m in ex.DETECTED[place]}, ex.DETECTOR.otherwise),
        (lambda batch, place, layer, head: {m: "high" for m in ex.DETECTED[place]}, "should return a dict"),
    ],
)
def test_head_detector_rejects(shipped_batch, wrong, hint, capsys):
    assert not ex.check_head_detector(wrong, shipped_batch)
    out = capsys.readouterr().out
    assert hint in out and out.count("\n") == 1 and (hint != NOT_ANSWERED or "diagonal" not in out)


# ---- exercise 2: what a head writes, W^V_h W^O_h


def test_ov_map_worked_solution(shipped_model, capsys):
    ns = {"torch": torch, "model": shipped_model, "ex": ex}
    exec(solution_code(NOTEBOOK, "def ov_map"), ns)
    assert "✅" in capsys.readouterr().out
    assert ex.check_ov_map(ns["ov_map"], shipped_model)
    assert ex.check_ov_map(ns["ov_map"], shipped_model, "decoder.1.cross")


def test_ov_map_is_what_the_head_writes(shipped_model):
    """All of head h's weight on key 0, the other head silenced: out = x_0 · W^V_h W^O_h + b^V_h W^O_h + b^O."""
    attn = shipped_model.encoder[0].self_attn
    for h in range(2):

        def one_key(w, name, h=h):
            forced = torch.zeros_like(w)
            forced[:, h, :, 0] = 1.0
            return forced

        with patch(shipped_model, {"encoder.0.self.weights": one_key}):
            trace = run_with_trace(shipped_model, "we want to eat apple")
        x0 = trace["encoder.0.self.v_input"][0]  # (d,): the first word's input
        sl = slice(32 * h, 32 * (h + 1))
        bias = attn.w_v.bias[sl] @ attn.w_o.weight[:, sl].T + attn.w_o.bias
        want = x0 @ ov_map(shipped_model, "encoder.0.self", h) + bias.detach()
        assert torch.allclose(trace["encoder.0.self.out"], want.expand_as(trace["encoder.0.self.out"]), atol=1e-4)


def _unanswered_ov(attn, head):
    raise NotImplementedError


def _sl(attn, h):
    return slice(h * attn.d_head, (h + 1) * attn.d_head)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_unanswered_ov, NOT_ANSWERED),
        (lambda attn, h: None, NOT_ANSWERED),
        (lambda attn, h: attn.w_v.weight[_sl(attn, h)], "shape"),
        (lambda attn, h: attn.w_q.weight[_sl(attn, h)].T @ attn.w_k.weight[_sl(attn, h)], "not W^V_h W^O_h"),
        (lambda attn, h: 1 / 0, "raised"),
    ],
)
def test_ov_map_rejects(shipped_model, wrong, hint, capsys):
    assert not ex.check_ov_map(wrong, shipped_model)
    out = capsys.readouterr().out
    assert hint in out
    if hint == NOT_ANSWERED:
        assert "w_o" not in out and "W^O" not in out


@pytest.mark.parametrize("mistake", ex.OV_MISTAKES, ids=lambda m: m.hint[:30])
def test_ov_map_names_each_mistake(shipped_model, mistake, capsys):
    assert not ex.check_ov_map(learner(mistake.gives), shipped_model)
    assert mistake.hint in capsys.readouterr().out


# ---- the prediction: cross-attention forced uniform


@pytest.fixture(scope="module")
def uniform_table(shipped_model, all_pairs):
    cross_uniform = {f"decoder.{layer}.cross.weights": uniform_attention for layer in range(2)}
    return score_interventions(shipped_model, all_pairs, {ex.PREDICTED_ROW: cross_uniform})


@pytest.mark.parametrize("guess", [0.5, 0.4, "0.6", 52])
def test_cross_uniform_prediction_accepts_close_guesses(uniform_table, guess, capsys):
    assert ex.check_cross_uniform_prediction(guess, uniform_table)
    assert "0.517" in capsys.readouterr().out


@pytest.mark.parametrize(
    "guess, hint",
    [(None, NOT_ANSWERED), (0.1, "More than most expect"), (0.95, "Fewer than"), ("most", "share"), (-1, "share")],
)
def test_cross_uniform_prediction_rejects(uniform_table, guess, hint, capsys):
    assert not ex.check_cross_uniform_prediction(guess, uniform_table)
    out = capsys.readouterr().out
    assert hint in out
    if guess is None:
        assert "0.5" not in out  # the unanswered message gives nothing away


# ---- exercise 3: remove a whole cross-attention layer


def test_remove_cross_layer_solutions(shipped_model, all_pairs, capsys):
    assert ex.check_remove_cross_layer(
        {"decoder.0.cross.x1": lambda x1, name: torch.zeros_like(x1)}, shipped_model, all_pairs
    )
    assert "✅" in capsys.readouterr().out
    # zero attention weights give x1 = 0 as well
    assert ex.check_remove_cross_layer(
        {"decoder.0.cross.weights": lambda w, name: torch.zeros_like(w)}, shipped_model, all_pairs
    )


@pytest.mark.parametrize(
    "wrong, hint",
    [
        ({}, NOT_ANSWERED),
        (None, NOT_ANSWERED),
        ({"decoder.0.cross.x1": lambda x1, name: x1}, "unchanged"),
        ({"decoder.0.cross.x1": ablate_head(0)}, "only one head"),
        ({"decoder.0.cross.x1": ablate_head(1)}, "only one head"),
        ({"decoder.1.cross.x1": lambda x1, name: torch.zeros_like(x1)}, "differs"),
        ({"decoder.*.cross.x1": lambda x1, name: torch.zeros_like(x1)}, "differs"),
        ({"decoder.0.cross.nothing": lambda x1, name: x1}, "raised"),
        ("decoder.0.cross.x1", "dict"),
    ],
)
def test_remove_cross_layer_rejects(shipped_model, all_pairs, wrong, hint, capsys):
    assert not ex.check_remove_cross_layer(wrong, shipped_model, all_pairs)
    out = capsys.readouterr().out
    assert hint in out
    assert "decoder.0.cross.x1" not in out  # no message spells out the answer's key


def test_checkers_leave_no_hooks(shipped_model, all_pairs):
    ex.check_remove_cross_layer({"decoder.0.cross.x1": lambda x1, name: 1 / 0}, shipped_model, all_pairs)
    assert all(not m._forward_hooks for m in shipped_model.modules())


def test_solution_note_of_exercise_3(shipped_model, all_pairs):
    """The worked solution says: without cross-attention layer 0, 224 of the 240 training sentences (93.3 %)
    come out right, fewer than without either of its heads alone (0.996 and 0.979)."""
    both = accuracy(shipped_model, all_pairs, ex.reference_patches(0))["train"]
    one = [accuracy(shipped_model, all_pairs, {"decoder.0.cross.x1": ablate_head(h)})["train"] for h in range(2)]
    assert both == 224 / 240
    assert one == [239 / 240, 235 / 240]  # shown as 0.996 and 0.979 in the notebook's table
    assert both < min(one)


# ---- the course's own versions are not an answer


def _delegates_detector(batch, place, layer, head):
    stats = head_statistics(batch)
    return {m: float(stats.loc[(place, layer, head), m]) for m in ex.DETECTED[place]}


def _delegates_ov(attn, head):
    return ov_map(MODEL_OF_ATTN[0], "encoder.0.self", head)


MODEL_OF_ATTN: list = []


def test_head_detector_rejects_head_statistics(shipped_batch, capsys):
    assert not ex.check_head_detector(_delegates_detector, shipped_batch)
    assert "head_statistics" in capsys.readouterr().out


def test_ov_map_rejects_the_library_copy(shipped_model, capsys):
    MODEL_OF_ATTN[:] = [shipped_model]
    assert not ex.check_ov_map(_delegates_ov, shipped_model)
    assert "uses ov_map" in capsys.readouterr().out


def _detector_by_variant(batch, place, layer, head):
    return ex.detector_variant(batch, place, layer, head)


def _detector_by_aligned_mass(batch, place, layer, head):
    from course_utils.measures.roles import aligned_mass

    return {"aligned": float(aligned_mass(batch, layer=layer, head=head))}


@pytest.mark.parametrize(
    "shortcut, name", [(_detector_by_variant, "detector_variant"), (_detector_by_aligned_mass, "aligned_mass")]
)
def test_head_detector_refuses_the_courses_reference(shipped_batch, shortcut, name, capsys):
    assert not ex.check_head_detector(shortcut, shipped_batch)
    out = capsys.readouterr().out
    assert name in out and out.count("\n") == 1


def _honest_detector(batch, place, layer, head):
    """An honest solution whose own helper is named like a mass of the notebook (itself_mass is allowed)."""
    w_all = batch.weights[trace_key(place, layer, "weights")][:, head].double()
    scores = {}
    for b in range(len(batch.pairs)):
        ns, nt = int(batch.src_len[b]), int(batch.tgt_len[b])
        if place == "cross":
            made = [r for r in batch.out_roles[b][:nt] if r != "end"]
            cols = [[j for j, r in enumerate(batch.src_roles[b]) if r == m] for m in made]
            scores.setdefault("aligned", []).append(aligned_mass_of(w_all[b, : len(made), :ns], cols))
        else:
            n = ns if place == "encoder self" else nt
            w = w_all[b, :n, :n]
            q0 = 1 if place == "decoder self" else 0
            scores.setdefault("itself", []).append(itself_mass(w)[q0:])
            scores.setdefault("previous", []).append(previous_mass(w))
    return {m: float(torch.cat(v).mean()) for m, v in scores.items()}


def test_head_detector_still_accepts_an_honest_solution(shipped_batch):
    assert ex.check_head_detector(_honest_detector, shipped_batch)


def _ov_by_head_banks(attn, head):
    from course_utils.measures.weight_maps import head_banks

    return head_banks(attn.w_v, attn.n_heads)[head] @ attn.w_o.weight[:, _sl(attn, head)].T


def test_ov_map_refuses_the_courses_slicing(shipped_model, capsys):
    assert not ex.check_ov_map(_ov_by_head_banks, shipped_model)
    out = capsys.readouterr().out
    assert "uses course_utils" in out and out.count("\n") == 1


def _honest_ov(attn, head):
    sl = _sl(attn, head)
    return (attn.w_v.weight[sl].T @ attn.w_o.weight[:, sl].T).detach()


def test_ov_map_still_accepts_an_honest_solution(shipped_model):
    assert ex.check_ov_map(_honest_ov, shipped_model)


def test_remove_cross_layer_refuses_the_courses_answer(shipped_model, all_pairs, capsys):
    assert not ex.check_remove_cross_layer(ex.reference_patches(0), shipped_model, all_pairs)
    out = capsys.readouterr().out
    assert "reference_patches" in out and out.count("\n") == 1


# ---- every checker answers a wrong type with one line


@pytest.mark.parametrize("wrong", [3, "X @ W", [1.0, 2.0], {"w": 1}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, shipped_model, shipped_batch, all_pairs, capsys):
    table = score_interventions(shipped_model, all_pairs[:2], {})  # any table: the answer is checked first
    checks = [
        lambda: ex.check_head_detector(wrong, shipped_batch),
        lambda: ex.check_ov_map(wrong, shipped_model),
        lambda: ex.check_cross_uniform_prediction(wrong, table),
        lambda: ex.check_remove_cross_layer(wrong, shipped_model, all_pairs),
    ]
    for check in checks:
        assert check() is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


# ---- section 3's figure: each head on its own colour scale


def test_vocab_scores_by_head_gives_each_head_its_own_colour_bar(shipped_model):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_utils.measures.weight_maps import vocab_scores
    from course_utils.views.heads import plot_vocab_scores_by_head

    tables = [vocab_scores(shipped_model, h) for h in range(2)]
    fig = plot_vocab_scores_by_head(tables, ["head 0", "head 1"])
    panels = [ax for ax in fig.axes if ax.images]
    limits = [ax.images[0].get_clim() for ax in panels]
    assert len(fig.axes) == 4 and len(panels) == 2  # two panels, two colour bars
    for table, (lo, hi) in zip(tables, limits):
        centred = table.to_numpy() - table.to_numpy().mean(1, keepdims=True)
        assert lo == -hi and abs(hi - abs(centred).max()) < 1e-9  # each panel reaches its own largest score
    assert limits[0] != limits[1]
    plt.close("all")
