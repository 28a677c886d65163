"""Notebook 05's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

import math

import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest
from torch import nn
from torch.nn import functional as F

from course_utils.core.data import build_vocabs, load_pairs
from course_utils.core.model import ModelConfig, build_model, parameter_counts
from course_utils.exercises import nb05
from course_utils.exercises.framework import NOT_ANSWERED, NOT_YET, learner
from course_utils.training.train import TrainConfig, make_batches, single_thread, train


def layer_parameters(d_model, d_ff, decoder=False):  # the worked solution
    def linear(n_in, n_out):
        return n_in * n_out + n_out

    attention, layer_norm = 4 * linear(d_model, d_model), 2 * d_model
    feed_forward = linear(d_model, d_ff) + linear(d_ff, d_model)
    return 2 * attention + feed_forward + 3 * layer_norm if decoder else attention + feed_forward + 2 * layer_norm


def training_step(model, opt, src, labels):  # another right way: F.pad, F.cross_entropy over (B, vocab, T)
    loss = F.cross_entropy(model(src, F.pad(labels[:, :-1], (1, 0), value=1)).transpose(1, 2), labels, ignore_index=0)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def test_layer_count_is_the_built_models():
    for d, f in ((64, 128), (16, 48)):
        counts = parameter_counts(build_model(ModelConfig(d_model=d, d_ff=f)))
        assert (counts["encoder layer 0"], counts["decoder layer 0"]) == (
            nb05.layer_count(d, f, 0),
            nb05.layer_count(d, f, 1),
        )


WHEN = {  # an answer for each mistake given by a predicate (when=) rather than a wrong recipe (gives=)
    "layer_parameters": lambda d_model, d_ff, decoder=False: layer_parameters(64, 128, decoder),
}


@pytest.mark.parametrize(
    "spec, right",
    [(nb05.LAYER_PARAMETERS, layer_parameters), (nb05.TRAINING_STEP, training_step)],
    ids=["layer_parameters", "training_step"],
)
def test_function_exercises(spec, right, capsys):
    assert spec.check(right) and spec.check(learner(spec.reference))
    assert not spec.check(spec.reference) and "the course's own code" in capsys.readouterr().out  # refused as it is
    for mistake in spec.mistakes:
        assert not spec.check(learner(mistake.gives or WHEN[spec.name])) and mistake.hint in capsys.readouterr().out
    assert not spec.check(lambda *a, **kw: None) and capsys.readouterr().out.startswith(NOT_ANSWERED)
    assert not spec.check(lambda *a, **kw: 1 / 0) and "raised ZeroDivisionError" in capsys.readouterr().out


def test_training_step_errors_get_their_hints(capsys):
    def step(loss_of):
        def fn(model, opt, src, labels):
            loss = loss_of(model(src, F.pad(labels, (1, 0), value=1)[:, :-1]), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return fn

    ce = nn.CrossEntropyLoss(ignore_index=0)
    assert (
        not nb05.check_training_step(step(ce)) and "logits.reshape(-1, logits.shape[-1])" in capsys.readouterr().out
    )  # not flattened
    assert not nb05.check_training_step(step(lambda lg, y: ce(y.reshape(-1), lg.reshape(-1, lg.shape[-1]))))
    assert "scores first" in capsys.readouterr().out
    assert not nb05.check_training_step(learner(lambda *a: nb05.reference_step(*a, last=0)))
    assert "one column too long" in capsys.readouterr().out


def test_training_step_reference_is_the_course_step():
    """Over the six batches of epoch 1 the reference step gives train's weights bit for bit (training/train.py)."""
    pairs = load_pairs("train")
    with single_thread():
        model = build_model(ModelConfig(), *build_vocabs(pairs), seed=0)
        opt = torch.optim.Adam(model.parameters(), lr=TrainConfig().lr)
        for src, tgt in make_batches(model, pairs, TrainConfig().batch_size, torch.Generator().manual_seed(0)):
            nb05.reference_step(model, opt, src, tgt[:, 1:])
    ref = train(ModelConfig(), TrainConfig(epochs=1, snapshot_epochs=()), probes={}, log=None).model.state_dict()
    assert all(torch.equal(model.state_dict()[k], ref[k]) for k in ref)


def test_value_exercises(capsys):
    assert nb05.check_emitting_row("wollen") and nb05.check_emitting_row("wollen → brot")
    assert not nb05.check_emitting_row("brot → essen") and nb05.EMITTING_ROW.mistakes[0].hint in capsys.readouterr().out
    for guess in (math.log(41), 4, torch.tensor(4.0)):
        assert nb05.check_first_loss(guess, 3.9)
    for guess, said in [(0, "never below 0"), (0.5, "a third"), (2, "evenly"), (41, "choices"), (8, "higher")]:
        assert not nb05.check_first_loss(guess, 3.9) and said in capsys.readouterr().out
    assert (
        nb05.check_subject_score("falls")
        and nb05.check_subject_score(" Falls ")
        and "below zero" in capsys.readouterr().out
    )
    for wrong, said in [("rises", "only scores whose value helps"), ("stays", "still gets a gradient")]:
        assert not nb05.check_subject_score(wrong) and said in capsys.readouterr().out
    assert not nb05.check_subject_score(2) and "answer one of" in capsys.readouterr().out


def test_unanswered_gives_one_line_each_and_nothing_away(capsys):
    for check in (nb05.check_layer_parameters, nb05.check_emitting_row, nb05.check_subject_score):
        assert not check(None)
    assert not nb05.check_first_loss(None, 3.9) and not nb05.check_training_step(lambda *a: None)
    out = capsys.readouterr().out
    assert out.count(NOT_ANSWERED) == len(out.splitlines()) == 5
    assert "wollen" not in out and "3.7" not in out and "33472" not in out and "below zero" not in out


@pytest.mark.parametrize("wrong", [3, "wir", {"w": 1}])
def test_a_wrong_type_gets_one_line(wrong, capsys):
    assert not nb05.check_layer_parameters(lambda d_model, d_ff, decoder=False: wrong)
    assert not nb05.check_subject_score(wrong) and not nb05.check_first_loss(wrong, 3.9)
    out = capsys.readouterr().out
    assert out.count(NOT_YET) == len(out.splitlines()) == 3, out


def test_the_notebooks_worked_solutions_pass(capsys):
    space = {"torch": torch, "nn": nn, "ex": nb05}
    for first_line in ("def layer_parameters(", "def training_step("):
        code = solution_code("05_training_the_translator.ipynb", first_line).split("\nassert")[0]
        exec(code, space)
        assert capsys.readouterr().out.startswith("✅"), first_line
