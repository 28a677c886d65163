"""Notebook 05 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest
from torch import nn
from torch.nn import functional as F

from course_utils.core.data import build_vocabs, load_pairs
from course_utils.core.model import ModelConfig, build_model, parameter_counts
from course_utils.exercises import NOT_ANSWERED, nb05
from course_utils.trace.tracing import run_with_trace
from course_utils.training.train import TrainConfig, make_batches, single_thread, train
from course_utils.training.zoo import load_standard_model
from course_utils.views.heatmaps import decoder_row_labels

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "05_training_the_translator.ipynb"


class Learner:
    """The checker's own reference (or one of its typical mistakes) as a callable object, as if the learner had
    written it: the checkers refuse a function that calls the course's code, so the tests hand it over this way to
    have its numbers judged."""

    def __init__(self, fn, **kwargs):
        self.fn, self.kwargs = fn, kwargs

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs, **self.kwargs)


def layer_parameters(d_model, d_ff, decoder=False):  # the worked solution
    def linear(n_in, n_out):
        return n_in * n_out + n_out

    attention = 4 * linear(d_model, d_model)
    feed_forward = linear(d_model, d_ff) + linear(d_ff, d_model)
    layer_norm = 2 * d_model
    if decoder:
        return 2 * attention + feed_forward + 3 * layer_norm
    return attention + feed_forward + 2 * layer_norm


def test_layer_parameters(capsys):
    def hint_for(fn):
        assert not nb05.check_layer_parameters(fn)
        return capsys.readouterr().out

    assert nb05.check_layer_parameters(layer_parameters)
    assert "16768 more" in capsys.readouterr().out
    counts = parameter_counts(build_model())
    assert (
        layer_parameters(64, 128, True) - layer_parameters(64, 128)
        == counts["decoder layer 0"] - counts["encoder layer 0"]
    )
    out = hint_for(lambda d_model, d_ff, decoder=False: None)  # the committed, unanswered state
    assert out.startswith(NOT_ANSWERED) and "16" not in out and "33472" not in out

    def count(**mistake):
        return Learner(nb05.layer_count, **mistake)

    assert nb05.check_layer_parameters(count())  # the checker's own count
    assert "bias of n_out" in hint_for(count(bias=False))
    assert "LayerNorm has parameters too" in hint_for(count(norms=0))
    assert "gain AND a bias" in hint_for(count(norms=1))
    assert "W^O" in hint_for(count(w_o=False))
    assert "two linear layers" in hint_for(count(ff_linears=1))
    assert "two attention blocks" in hint_for(count(cross=False))
    assert "not the course's sizes" in hint_for(lambda d_model, d_ff, decoder=False: layer_parameters(64, 128, decoder))
    assert "a built model has" in hint_for(lambda d_model, d_ff, decoder=False: layer_parameters(d_model, d_ff) + 1)
    assert "raised" in hint_for(lambda d_model, d_ff: 0)  # no decoder argument
    assert "no brackets" in hint_for(33472)


def test_worked_solutions_in_the_notebook_pass(capsys):
    namespace = {
        "counts": parameter_counts(build_model()),
        "check_layer_parameters": nb05.check_layer_parameters,
        "check_training_step": nb05.check_training_step,
        "torch": torch,
        "nn": nn,
    }
    for first_line in ("def layer_parameters(", "def training_step("):
        code = solution_code(NOTEBOOK, first_line)
        assert code.startswith(first_line)
        exec(compile(code, f"notebook 05: solution {first_line}", "exec"), namespace)
        assert capsys.readouterr().out.startswith("✅"), first_line


def test_emitting_row():
    t = run_with_trace(load_standard_model().model, "we want to eat bread")
    predicted = dict(zip(t.tgt_tokens, t.translation + ["<eos>"]))
    solution = next(r for r, nxt in predicted.items() if nxt == "brot")
    assert nb05.check_emitting_row(solution)
    assert nb05.check_emitting_row("wollen → brot")  # the heatmap's row label names the same row
    assert not nb05.check_emitting_row("brot")  # the unshifted reading
    assert not nb05.check_emitting_row("brot → essen")
    assert not nb05.check_emitting_row("essen")
    assert not nb05.check_emitting_row(3)

    # the worked solution's statement: in layer 1 both heads of that row look at "bread"
    w_row = t["decoder.1.cross.weights"][:, t.tgt_tokens.index(solution)]
    assert all(t.src_tokens[int(i)] == "bread" for i in w_row.argmax(-1))


def test_unanswered_states_print_one_not_answered_line(capsys):
    """The committed notebook shows each exercise unanswered: one ✍ line each, nothing given away, never ❌."""
    assert not nb05.check_emitting_row(None)
    assert not nb05.check_shift_labels(lambda g: None)
    out = capsys.readouterr().out
    assert out.count(NOT_ANSWERED) == len(out.splitlines()) == 2 and "❌" not in out
    assert "wollen" not in out and "<bos> →" not in out


def test_shift_labels():
    def solution(german):  # the worked solution
        words = german.split()
        return [f"{a} → {b}" for a, b in zip(["<bos>"] + words, words + ["<eos>"])]

    assert nb05.check_shift_labels(solution)
    assert nb05.check_shift_labels(lambda g: [s.replace(" → ", "->") for s in solution(g)])  # "->" is fine
    assert nb05.check_shift_labels(lambda g: list(zip(["<bos>", *g.split()], [*g.split(), "<eos>"])))  # pairs
    # it agrees with the library's labels on the model's own translation
    t = run_with_trace(load_standard_model().model, "we want to eat bread")
    german = " ".join(t.translation)
    assert solution(german) == decoder_row_labels(t.tgt_tokens, t.translation)
    # typical mistakes
    assert not nb05.check_shift_labels(lambda g: [f"{w} → {w}" for w in g.split()])  # no shift
    assert not nb05.check_shift_labels(lambda g: solution(g)[1:])  # forgot <bos>
    assert not nb05.check_shift_labels(lambda g: solution(g)[:-1])  # forgot <eos>
    assert not nb05.check_shift_labels(lambda g: [" → ".join(s.split(" → ")[::-1]) for s in solution(g)])  # swapped
    assert not nb05.check_shift_labels(lambda g: " ".join(solution(g)))  # one string
    assert not nb05.check_shift_labels(lambda g: 1 / 0)  # raises
    assert not nb05.check_shift_labels(lambda g: None)  # the notebook's placeholder body
    assert not nb05.check_shift_labels(None)


def test_shift_labels_refuses_the_course_labeller(capsys):
    """Exercise 3 asks for the shift written out: a function that calls decoder_row_labels is refused."""

    def with_the_library(german):
        words = german.split()
        return decoder_row_labels(["<bos>", *words], words)

    assert not nb05.check_shift_labels(with_the_library)
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("❌") and "uses decoder_row_labels" in out

    def written_out(german):  # an honest solution, another way than the worked one
        rows = ["<bos>"] + german.split()
        return [f"{row} → {nxt}" for row, nxt in zip(rows, rows[1:] + ["<eos>"])]

    assert nb05.check_shift_labels(written_out) and "✅" in capsys.readouterr().out
    assert not nb05.check_shift_labels(3) and "❌" in capsys.readouterr().out  # a wrong type: one hint, no crash


def untrained_first_loss() -> float:
    """What the notebook's reveal cell computes: the seed-0 start's loss on the loop's first batch."""
    pairs = load_pairs("train")
    src_vocab, tgt_vocab = build_vocabs(pairs)
    model = build_model(ModelConfig(), src_vocab, tgt_vocab, seed=0)
    src, tgt = next(make_batches(model, pairs, TrainConfig().batch_size, torch.Generator().manual_seed(0)))
    with torch.no_grad():
        logits = model(src, tgt[:, :-1])
    return nn.CrossEntropyLoss(ignore_index=0)(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1)).item()


def test_first_loss_prediction(capsys):
    first_loss = untrained_first_loss()
    assert math.log(41) < first_loss < 1.15 * math.log(41)  # a little worse than an even spread

    def verdict(guess):
        ok = nb05.check_first_loss(guess, first_loss)
        return ok, capsys.readouterr().out

    assert verdict(math.log(41))[0] and verdict(first_loss)[0] and verdict(4)[0]  # the even spread, the exact loss
    ok, out = verdict(None)  # the committed, unanswered state gives nothing away
    assert not ok and out.startswith(NOT_ANSWERED) and "3.7" not in out and "4.1" not in out and "41" not in out
    assert not verdict("four")[0]
    assert "never below 0" in verdict(0)[1]  # "it knows nothing, so nothing to lose"
    assert "more than a third" in verdict(0.5)[1]
    assert "evenly" in verdict(2)[1]  # too optimistic
    assert "not the number of choices" in verdict(41)[1]  # the loss is not the vocabulary size
    assert "higher" in verdict(8)[1]
    assert all("ln 41 = 3.71" in verdict(g)[1] for g in (0, 2, 41))  # once answered, the reason is given


def test_training_step():
    def solution(model, opt, src, labels):  # the worked solution
        bos = torch.full((labels.shape[0], 1), model.tgt_vocab.stoi["<bos>"])
        dec_in = torch.cat([bos, labels[:, :-1]], dim=1)  # <bos> w1 … wn: as long as labels
        logits = model(src, dec_in)
        loss = nn.CrossEntropyLoss(ignore_index=0)(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    def functional(model, opt, src, labels):  # another right way: F.pad, F.cross_entropy over (B, vocab, T)
        dec_in = F.pad(labels[:, :-1], (1, 0), value=1)
        loss = F.cross_entropy(model(src, dec_in).transpose(1, 2), labels, ignore_index=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def mistake(**kwargs):
        return Learner(nb05.reference_step, **kwargs)

    assert nb05.check_training_step(solution)
    assert nb05.check_training_step(functional)
    assert nb05.check_training_step(mistake())  # the checker's own reference step
    # typical mistakes
    assert not nb05.check_training_step(mistake(copy=True))  # reads the labels: copies them
    assert not nb05.check_training_step(mistake(bos=False))  # no <bos>: first word never predicted
    assert not nb05.check_training_step(mistake(drop_last=False))  # input one column too long
    assert not nb05.check_training_step(mistake(zero_grad=False))  # gradients add up across steps
    assert not nb05.check_training_step(mistake(ignore_pad=False))  # <pad> scored
    assert not nb05.check_training_step(mistake(axes="tb"))  # scores and labels flattened in different orders
    assert not nb05.check_training_step(lambda model, opt, src, labels: None)  # the notebook's placeholder body

    def no_step(model, opt, src, labels):
        dec_in = F.pad(labels[:, :-1], (1, 0), value=1)
        logits = model(src, dec_in)
        loss = nn.CrossEntropyLoss(ignore_index=0)(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        loss.backward()
        return loss.item()

    def no_return(model, opt, src, labels):
        solution(model, opt, src, labels)

    def section_3_copied(model, opt, src, tgt):  # the loop's step pasted unchanged: treats labels as tgt
        logits = model(src, tgt[:, :-1])
        loss = nn.CrossEntropyLoss(ignore_index=0)(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    def unflattened(model, opt, src, labels):  # (B, T, vocabulary) scores straight into the loss
        logits = model(src, F.pad(labels[:, :-1], (1, 0), value=1))
        loss = nn.CrossEntropyLoss(ignore_index=0)(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    assert not nb05.check_training_step(unflattened)
    assert not nb05.check_training_step(no_step)
    assert not nb05.check_training_step(no_return)
    assert not nb05.check_training_step(section_3_copied)
    assert not nb05.check_training_step(lambda model, opt, src, labels: 1 / 0)  # raises
    assert not nb05.check_training_step(None)


def test_training_step_hints(capsys):
    def hint_for(step):
        assert not nb05.check_training_step(step)
        return capsys.readouterr().out

    def mistake(**kwargs):
        return Learner(nb05.reference_step, **kwargs)

    assert "copy" in hint_for(mistake(copy=True))
    assert "<bos>" in hint_for(mistake(bos=False))
    assert "drop the last column" in hint_for(mistake(drop_last=False))
    assert "zero_grad" in hint_for(mistake(zero_grad=False))
    assert "ignore_index=0" in hint_for(mistake(ignore_pad=False))
    assert hint_for(lambda model, opt, src, labels: None).startswith(NOT_ANSWERED + "your function returns nothing")
    assert "flattened in different orders" in hint_for(mistake(axes="tb"))

    def loss_of(scores_and_labels):  # a step whose loss line is given as a function of (logits, labels)
        def step(model, opt, src, labels):
            loss = scores_and_labels(model(src, F.pad(labels[:, :-1], (1, 0), value=1)), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()

        return step

    ce = nn.CrossEntropyLoss(ignore_index=0)

    def flat(logits, labels):
        return logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)

    assert "wrong axis as the vocabulary" in hint_for(loss_of(lambda lg, y: ce(lg, y)))  # not flattened
    assert "wrong axis as the vocabulary" in hint_for(
        loss_of(lambda lg, y: ce(lg.reshape(lg.shape[-1], -1), y.reshape(-1)))
    )
    assert "scores first" in hint_for(loss_of(lambda lg, y: ce(y.reshape(-1), lg.reshape(-1, lg.shape[-1]))))

    def no_step(model, opt, src, labels):  # zero_grad and backward, but the weights never move
        loss = nn.CrossEntropyLoss(ignore_index=0)(*flat(model(src, F.pad(labels[:, :-1], (1, 0), value=1)), labels))
        opt.zero_grad()
        loss.backward()
        return loss.item()

    assert "opt.step()" in hint_for(no_step)


def test_training_step_reference_equals_the_loop_of_section_3():
    """The exercise's decoder input (<bos> + labels without the last column) is exactly tgt[:, :-1]."""
    model = build_model()
    tgt = next(iter(make_batches(model, load_pairs("train"), 40, torch.Generator().manual_seed(0))))[1]
    labels = tgt[:, 1:]
    assert torch.equal(torch.cat([torch.full((len(tgt), 1), nb05.BOS), labels[:, :-1]], dim=1), tgt[:, :-1])
    assert set(labels[:, -1].tolist()) <= {0, model.tgt_vocab.stoi["<eos>"]}  # the dropped column: <eos>/<pad>


def test_training_step_reference_is_the_course_step():
    """The checker's reference step, run over the six batches of epoch 1, gives train's weights (training/train.py)
    bit for bit (the same step as section 3's visible loop, which tests/test_training_in_the_open.py ties to train)."""
    pairs = load_pairs("train")
    src_vocab, tgt_vocab = build_vocabs(pairs)
    with single_thread():
        model = build_model(ModelConfig(), src_vocab, tgt_vocab, seed=0)
        opt = torch.optim.Adam(model.parameters(), lr=TrainConfig().lr)
        for src, tgt in make_batches(model, pairs, TrainConfig().batch_size, torch.Generator().manual_seed(0)):
            nb05.reference_step(model, opt, src, tgt[:, 1:])
    ref = train(ModelConfig(), TrainConfig(epochs=1, snapshot_epochs=()), probes={}, log=None).model
    mine, theirs = model.state_dict(), ref.state_dict()
    assert mine.keys() == theirs.keys() and all(torch.equal(mine[k], theirs[k]) for k in theirs)


# ---- every checker: wrong types, and the course's own code refused ----


@pytest.mark.parametrize("wrong", [3, "wir", [1.0, 2.0], {"w": 1}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, capsys):
    checks = [
        lambda: nb05.check_layer_parameters(wrong),
        lambda: nb05.check_emitting_row(wrong),
        lambda: nb05.check_shift_labels(wrong),
        lambda: nb05.check_first_loss(wrong, untrained_first_loss()),
        lambda: nb05.check_training_step(wrong),
        # a function that returns the wrong type
        lambda: nb05.check_layer_parameters(lambda d_model, d_ff, decoder=False: wrong),
        lambda: nb05.check_shift_labels(lambda german: wrong),
        lambda: nb05.check_training_step(lambda model, opt, src, labels: wrong),
    ]
    for check in checks:
        assert check() is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


def test_wrong_types_that_look_like_answers(capsys):
    """A number in quotes, a tensor of several numbers: one hint each, never a traceback."""
    assert not nb05.check_first_loss("4.2", 4.17) and "without quotes" in capsys.readouterr().out
    assert not nb05.check_first_loss(float("nan"), 4.17) and "finite" in capsys.readouterr().out
    assert nb05.check_first_loss(torch.tensor(4.0), 4.17)  # a one-number tensor is a number
    capsys.readouterr()
    assert not nb05.check_layer_parameters(lambda d_model, d_ff, decoder=False: torch.ones(3))
    assert "one whole number" in capsys.readouterr().out
    honest_tensor = Learner(lambda d, f, decoder=False: torch.tensor(layer_parameters(d, f, decoder)))
    assert nb05.check_layer_parameters(honest_tensor)  # the right count as a tensor is still right


def _course_labeller(german):  # the shortcut, through a module attribute
    from course_utils.views import heatmaps

    words = german.split()
    return heatmaps.decoder_row_labels(["<bos>", *words], words)


_labeller = decoder_row_labels  # the shortcut under another name


def _aliased(german):
    words = german.split()
    return _labeller(["<bos>", *words], words)


def _pairs(rows, words):  # the learner's own helper ...
    return _labeller(rows, words)


def _through_a_helper(german):  # ... which hides the shortcut one call down
    return _pairs(["<bos>", *german.split()], german.split())


@pytest.mark.parametrize(
    "shortcut",
    [
        _course_labeller,
        _aliased,
        _through_a_helper,
        decoder_row_labels,  # passed as it is
        functools.partial(decoder_row_labels),
    ],
    ids=["module attribute", "alias", "own helper", "passed as it is", "partial"],
)
def test_shift_labels_refuses_every_form_of_the_course_labeller(shortcut, capsys):
    assert not nb05.check_shift_labels(shortcut)
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: ") and out.count("\n") == 1 and "the course's own code" in out, out


def _built_and_counted(d_model, d_ff, decoder=False):  # counts a built model instead of the parts
    m = build_model(ModelConfig(d_model=d_model, d_ff=d_ff))
    return sum(p.numel() for p in (m.decoder[0] if decoder else m.encoder[0]).parameters())


def _course_count(d_model, d_ff, decoder=False):
    return parameter_counts(build_model(ModelConfig(d_model=d_model, d_ff=d_ff)))[
        "decoder layer 0" if decoder else "encoder layer 0"
    ]


def _checkers_count(d_model, d_ff, decoder=False):
    return nb05.layer_count(d_model, d_ff, decoder)


@pytest.mark.parametrize("shortcut", [_built_and_counted, _course_count, _checkers_count, nb05.layer_count])
def test_layer_parameters_refuses_the_course_code_and_accepts_honest_counts(shortcut, capsys):
    assert shortcut(64, 128, decoder=False) == 33472  # each shortcut gives the right number ...
    assert not nb05.check_layer_parameters(shortcut)  # ... and is refused
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "the course's own code" in out, out
    assert nb05.check_layer_parameters(layer_parameters)  # the worked solution still passes


def _delegated_step(model, opt, src, labels):  # return layer(X)-style: the checker's own step does the work
    return nb05.reference_step(model, opt, src, labels)


def _honest_step(model, opt, src, labels):  # another honest way: torch.cat with a column of <bos>
    dec_in = torch.cat([labels.new_full((len(labels), 1), model.tgt_vocab.stoi["<bos>"]), labels[:, :-1]], 1)
    scores = model(src, dec_in)
    loss = F.cross_entropy(scores.flatten(0, 1), labels.flatten(), ignore_index=0)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def test_training_step_refuses_the_course_step_and_accepts_an_honest_one(capsys):
    for shortcut in (_delegated_step, nb05.reference_step):
        assert not nb05.check_training_step(shortcut)
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and "the course's own code" in out, out
    assert nb05.check_training_step(_honest_step) and capsys.readouterr().out.startswith("✅")
