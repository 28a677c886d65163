"""The model files in models/ are what the code produces: retrain each and compare.

Notebooks load these files (identical bits on every machine, instant). Retraining on this machine
kind must reproduce them: same history, same translations, same snapshot tokens, and weights equal
up to float noise from a different CPU (bit-identical on the machine that wrote them).
"""

import pytest
import torch

from course_utils.data import load_pairs
from course_utils.model import translate_batch
from course_utils.training import course_model, load_standard_model


@pytest.mark.parametrize("pos_encoding", ["learned", "sinusoidal", "none"])
def test_code_reproduces_shipped_model(pos_encoding, request):
    shipped = load_standard_model(pos_encoding)
    # "learned" is the session's `course` fixture (trained once per test process), the others train here
    fresh = request.getfixturevalue("course") if pos_encoding == "learned" else course_model(pos_encoding)
    assert shipped.model.cfg == fresh.model.cfg
    assert shipped.model.src_vocab.itos == fresh.model.src_vocab.itos
    assert shipped.model.tgt_vocab.itos == fresh.model.tgt_vocab.itos
    a, b = shipped.model.state_dict(), fresh.model.state_dict()
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-3, atol=1e-4, msg=lambda m, name=name: f"{name}: {m}")
    for h1, h2 in zip(shipped.history, fresh.history, strict=True):
        assert h1["epoch"] == h2["epoch"] and h1["train_exact"] == h2["train_exact"]
        assert h1["loss"] == pytest.approx(h2["loss"], rel=1e-3, abs=1e-5)
    sentences = [p.english for p in load_pairs()]
    assert translate_batch(shipped.model, sentences) == translate_batch(fresh.model, sentences)
    assert shipped.snapshots.keys() == fresh.snapshots.keys()
    for epoch, snap in shipped.snapshots.items():
        for sentence, trace in snap.items():
            other = fresh.snapshots[epoch][sentence]
            assert (trace.src_tokens, trace.tgt_tokens) == (other.src_tokens, other.tgt_tokens)
            torch.testing.assert_close(
                trace["encoder.0.self.weights"], other["encoder.0.self.weights"], rtol=1e-3, atol=1e-4
            )


def test_shipped_model_translates_training_pairs_exactly():
    result = load_standard_model("learned")
    pairs = load_pairs("train")
    assert translate_batch(result.model, [p.english for p in pairs]) == [p.german.split() for p in pairs]
    assert result.history[-1]["train_exact"] == 1.0


def test_unknown_standard_model_name_is_a_clear_error():
    with pytest.raises(ValueError, match="pos_encoding must be one of"):
        load_standard_model("rotary")
