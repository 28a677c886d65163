"""Notebook 05 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import torch

from course_utils.data import encode_source, encode_target
from course_utils.exercises import nb05
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


def test_drink_bread():
    model = load_standard_model().model
    with torch.no_grad():
        src = torch.tensor([encode_source(model.src_vocab, "i can drink bread", model.cfg.max_len)])
        tgt = torch.tensor([encode_target(model.tgt_vocab, "ich kann brot", model.cfg.max_len)[:-1]])
        p = model(src, tgt)[0, -1].softmax(-1)
    p_trinken, p_essen = p[model.tgt_vocab.stoi["trinken"]].item(), p[model.tgt_vocab.stoi["essen"]].item()
    assert nb05.check_drink_bread(p_trinken, p_essen)
    assert not nb05.check_drink_bread(p_essen, p_trinken)  # swapped
    assert not nb05.check_drink_bread(1.0, 0.0)  # "the English says drink, so it is certain"
    assert not nb05.check_drink_bread(0.0, 0.0)  # the notebook's placeholder
    assert not nb05.check_drink_bread("high", None)
    # the notebook's worked solution: the model overrides the English verb with bread's usual companion
    assert p_essen > 0.9 and p_trinken < 0.05
