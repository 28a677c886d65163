"""Notebook 05 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

from torch import nn
from torch.nn import functional as F

from course_utils.exercises import nb05
from course_utils.heads import decoder_row_labels
from course_utils.model import build_model, parameter_counts
from course_utils.tracing import run_with_trace
from course_utils.training import load_standard_model


def test_decoder_extra():
    counts = parameter_counts(build_model())
    n_extra = 4 * (64 * 64 + 64) + 2 * 64
    assert n_extra == counts["decoder layer 0"] - counts["encoder layer 0"]
    assert nb05.check_decoder_extra(n_extra)
    assert not nb05.check_decoder_extra(4 * (64 * 64 + 64))  # forgot the LayerNorm
    assert not nb05.check_decoder_extra(4 * 64 * 64)  # forgot the biases
    assert not nb05.check_decoder_extra(counts["decoder layer 0"])  # the whole layer
    assert not nb05.check_decoder_extra(None)


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


def test_training_step():
    def solution(model, opt, src, tgt):  # the worked solution
        logits = model(src, tgt[:, :-1])
        gold = tgt[:, 1:]
        loss = nn.CrossEntropyLoss(ignore_index=0)(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    def functional(model, opt, src, tgt):  # another right way: F.cross_entropy over (B, vocab, T); loss tensor
        loss = F.cross_entropy(model(src, tgt[:, :-1]).transpose(1, 2), tgt[:, 1:], ignore_index=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def mistake(**kwargs):
        return lambda model, opt, src, tgt: nb05._step(model, opt, src, tgt, **kwargs)

    assert nb05.check_training_step(solution)
    assert nb05.check_training_step(functional)
    assert nb05.check_training_step(mistake())  # the checker's own reference step
    # typical mistakes
    assert not nb05.check_training_step(mistake(shift=False))  # scored against the input: no shift
    assert not nb05.check_training_step(mistake(read_whole=True))  # reads the whole target, copies it
    assert not nb05.check_training_step(mistake(zero_grad=False))  # gradients add up across steps
    assert not nb05.check_training_step(mistake(ignore_pad=False))  # <pad> scored
    assert not nb05.check_training_step(lambda model, opt, src, tgt: None)  # the notebook's placeholder body

    def no_step(model, opt, src, tgt):
        logits = model(src, tgt[:, :-1])
        loss = nn.CrossEntropyLoss(ignore_index=0)(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))
        loss.backward()
        return loss.item()

    def no_return(model, opt, src, tgt):
        solution(model, opt, src, tgt)

    assert not nb05.check_training_step(no_step)
    assert not nb05.check_training_step(no_return)
    assert not nb05.check_training_step(lambda model, opt, src, tgt: 1 / 0)  # raises
    assert not nb05.check_training_step(None)


def test_training_step_hints(capsys):
    def hint_for(step):
        assert not nb05.check_training_step(step)
        return capsys.readouterr().out

    def mistake(**kwargs):
        return lambda model, opt, src, tgt: nb05._step(model, opt, src, tgt, **kwargs)

    assert "shifted by one" in hint_for(mistake(shift=False))
    assert "zero_grad" in hint_for(mistake(zero_grad=False))
    assert "ignore_index=0" in hint_for(mistake(ignore_pad=False))
    assert "returns nothing yet" in hint_for(lambda model, opt, src, tgt: None)
