"""Training: convergence, bit-exact determinism, snapshots of the probe sentences, save/load."""

from __future__ import annotations

import csv
import re

import pytest
import torch

from course_utils import MODEL_FORMAT_VERSION
from course_utils.core.data import BOS, SPECIALS, data_dir, load_pairs
from course_utils.core.errors import IncompatibleModelFileError
from course_utils.core.model import ModelConfig, translate, translate_batch
from course_utils.trace.tracing import Trace, run_with_trace
from course_utils.training.files import load_course_model, save_course_model
from course_utils.training.train import TrainConfig, TrainResult, make_batches, single_thread, train

SHORT = TrainConfig(epochs=3, snapshot_epochs=(1, 3))


def probe_file() -> list[dict]:
    """course_utils/data/probes.tsv read directly (not through course_utils)."""
    with open(data_dir() / "probes.tsv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@pytest.fixture(scope="module")
def short_runs():
    """Two short trainings with the same seed (after scrambling the global RNG differently) and one with another seed."""
    torch.manual_seed(123)
    a = train(train_config=SHORT, log=None)
    torch.manual_seed(456)
    torch.rand(10)
    b = train(train_config=SHORT, log=None)
    c = train(train_config=TrainConfig(epochs=3, snapshot_epochs=(1, 3), seed=1), log=None)
    return a, b, c


# ---------------------------------------------------------------- convergence


def check_converges(history) -> None:
    """30 epochs; every training pair exact at the end; the loss falls to under 5 % of its start and, over windows
    of five epochs, always goes down (single epochs may wobble); the token accuracy climbs from under 0.3 after
    epoch 1 (measured 0.183) to every target token right from epoch 10 on (measured: from epoch 8)."""
    assert [row["epoch"] for row in history] == list(range(1, 31))
    assert history[-1]["train_exact"] == 1.0
    loss = [row["loss"] for row in history]
    assert loss[-1] < loss[14] < loss[0]
    assert loss[-1] < 0.05 * loss[0]
    window = [sum(loss[i : i + 5]) / 5 for i in range(0, 30, 5)]
    assert all(a > b for a, b in zip(window, window[1:])), window
    acc = [row["token_acc"] for row in history]
    assert acc[0] < 0.3 and all(a == 1.0 for a in acc[9:]), acc


def test_course_model_converges(course):
    check_converges(course.history)


def test_the_convergence_check_rejects_a_run_that_does_not_learn(course):
    """Broken copies of the history: the loss run backwards (a model that unlearns), and the token accuracy stuck
    at 0.99 (one token in a hundred wrong to the end) both fail check_converges."""
    backwards = [{**row, "loss": back["loss"]} for row, back in zip(course.history, course.history[::-1])]
    stuck = [{**row, "token_acc": min(row["token_acc"], 0.99)} for row in course.history]
    for history in (backwards, stuck):
        with pytest.raises(AssertionError):
            check_converges(history)


def test_history_train_exact_only_at_snapshot_and_last_epochs(course):
    tc = course.train_config
    assert tc == TrainConfig()
    for row in course.history:
        expected = row["epoch"] in tc.snapshot_epochs or row["epoch"] == tc.epochs
        assert (row["train_exact"] is not None) == expected, row
        assert set(row) == {"epoch", "loss", "token_acc", "train_exact"}
    assert course.seconds > 0


def test_trained_model_is_returned_in_eval_mode(course):
    assert not course.model.training


def test_training_restores_thread_count():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        train(train_config=TrainConfig(epochs=1, snapshot_epochs=()), probes={}, log=None)
        assert torch.get_num_threads() == 2
        with single_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_log_gets_one_line_per_epoch():
    lines = []
    train(train_config=TrainConfig(epochs=2, snapshot_epochs=(2,)), probes={}, log=lines.append)
    assert len(lines) == 2 and "loss" in lines[0] and "exact-match" in lines[1] and "exact-match" not in lines[0]


# ---------------------------------------------------------------- determinism


def _equal_state(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_same_seed_gives_bit_identical_weights(short_runs):
    a, b, _ = short_runs
    assert _equal_state(a.model, b.model)
    assert a.history == b.history
    for epoch in SHORT.snapshot_epochs:
        for s, t in a.snapshots[epoch].items():
            u = b.snapshots[epoch][s]
            assert t.translation == u.translation and all(torch.equal(t[k], u[k]) for k in t.keys())


def test_short_run_is_the_start_of_the_course_run(course, short_runs):
    """The first epochs of the 30-epoch course run are exactly those of a 3-epoch run: same batches, same steps."""
    a, _, _ = short_runs
    for mine, theirs in zip(a.history, course.history[:3]):
        assert mine["loss"] == theirs["loss"] and mine["token_acc"] == theirs["token_acc"]
    assert a.history[0]["train_exact"] == course.history[0]["train_exact"]
    for s, t in a.snapshots[1].items():
        assert all(torch.equal(t[k], course.snapshots[1][s][k]) for k in t.keys())


def test_different_seed_gives_different_weights(short_runs):
    a, _, c = short_runs
    sa, sc = a.model.state_dict(), c.model.state_dict()
    assert all(not torch.equal(sa[k], sc[k]) for k in sa if k.endswith("weight") and "norm" not in k)
    assert a.history != c.history


def test_make_batches_covers_every_pair_once(course):
    pairs = load_pairs("train")
    gen = torch.Generator().manual_seed(0)
    batches = list(make_batches(course.model, pairs, 40, gen))
    assert sum(src.shape[0] for src, _ in batches) == len(pairs)
    assert all(src.shape[0] == 40 for src, _ in batches[:-1])
    m = course.model
    seen = sorted(" ".join(m.src_vocab.decode(row)) for src, _ in batches for row in src)
    assert seen == sorted(p.english for p in pairs)
    bos = m.tgt_vocab.stoi[BOS]
    assert all((tgt[:, 0] == bos).all() for _, tgt in batches)
    # a new epoch (the generator moved on) has a different order
    again = list(make_batches(course.model, pairs, 40, gen))
    assert not torch.equal(again[0][0][:5], batches[0][0][:5]) or not torch.equal(again[1][0][:5], batches[1][0][:5])


# ---------------------------------------------------------------- snapshots


def test_snapshot_epochs_and_probe_sentences(course):
    probes = [row["english"] for row in probe_file()]
    assert sorted(course.snapshots) == sorted(TrainConfig().snapshot_epochs)
    for epoch, snap in course.snapshots.items():
        assert list(snap) == probes, epoch  # every probe, in file order
        assert all(isinstance(t, Trace) for t in snap.values())


def test_snapshot_traces_are_complete_and_labelled(course, trace_shapes):
    refs = {row["english"]: row["german_reference"] for row in probe_file()}
    cfg = course.model.cfg
    for epoch, snap in course.snapshots.items():
        for sentence, t in snap.items():
            assert t.src_tokens == sentence.split()
            assert t.tgt_tokens[0] == BOS and not any(tok in SPECIALS for tok in t.tgt_tokens[1:])
            if refs[sentence]:
                assert t.tgt_tokens == [BOS] + refs[sentence].split()  # the decoder read the reference
            else:
                assert t.tgt_tokens == [BOS] + t.translation  # ... or the model's own translation
            shapes = trace_shapes(cfg, len(t.src_tokens), len(t.tgt_tokens))
            assert set(t.keys()) == set(shapes), (epoch, sentence)
            for key, shape in shapes.items():
                assert tuple(t[key].shape) == shape, (epoch, sentence, key)
                label_axis = 1 if t[key].dim() == 3 else 0  # (H, T, .) or (T, .)
                assert len(t.tokens(key)) == t[key].shape[label_axis], key
            for layer in range(cfg.n_layers):
                cross = f"decoder.{layer}.cross"
                assert t.tokens(f"{cross}.k") == t.tokens(f"{cross}.v") == t.src_tokens
                assert t.tokens(f"{cross}.q")[0] == BOS and t.tokens(f"{cross}.q") == t.tgt_tokens
            for key in t.keys():
                if key.endswith(".weights"):
                    w = t[key]
                    torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), rtol=0, atol=1e-5)


def test_last_snapshot_is_the_final_model(course):
    """Snapshots at the last epoch are exactly what run_with_trace gives for the returned model."""
    last = course.snapshots[max(course.snapshots)]
    refs = {row["english"]: row["german_reference"] or None for row in probe_file()}
    for sentence, t in last.items():
        fresh = run_with_trace(course.model, sentence, target=refs[sentence])
        assert t.translation == fresh.translation == translate(course.model, sentence)
        assert all(torch.equal(t[k], fresh[k]) for k in t.keys())


def test_snapshots_show_learning(course):
    """Epoch 1 and epoch 30 traces differ (the model changed); the final model translates the sensible probes
    (word order, context pair) as their references. (The five-sentence probes include nonsense such as
    "i can eat book", which the model may rewrite: notebook 08 shows it.)"""
    refs = {
        row["english"]: row["german_reference"]
        for row in probe_file()
        if row["german_reference"] and row["probe_set"] in ("word_order", "context_pair")
    }
    first, last = course.snapshots[1], course.snapshots[30]
    assert any(not torch.equal(first[s]["decoder.1.cross.weights"], last[s]["decoder.1.cross.weights"]) for s in refs)
    assert all(last[s].translation == refs[s].split() for s in refs)


# ---------------------------------------------------------------- save / load


def test_save_load_round_trip(course, tmp_path):
    path = tmp_path / "course.pt"
    save_course_model(course, path)
    back = load_course_model(path)
    assert isinstance(back, TrainResult)
    assert _equal_state(back.model, course.model)
    assert back.model.cfg == course.model.cfg and not back.model.training
    assert back.model.src_vocab.itos == course.model.src_vocab.itos
    assert back.model.tgt_vocab.itos == course.model.tgt_vocab.itos
    assert back.history == course.history
    assert back.train_config == course.train_config
    assert back.seconds == course.seconds
    sentences = [p.english for p in load_pairs()]
    assert translate_batch(back.model, sentences) == translate_batch(course.model, sentences)
    assert back.snapshots.keys() == course.snapshots.keys()
    for epoch, snap in course.snapshots.items():
        assert list(back.snapshots[epoch]) == list(snap)
        for s, t in snap.items():
            u = back.snapshots[epoch][s]
            assert (u.src_tokens, u.tgt_tokens, u.translation) == (t.src_tokens, t.tgt_tokens, t.translation)
            assert u.keys() == t.keys() and all(torch.equal(u[k], t[k]) for k in t.keys())
    # and the loaded model traces exactly like the original
    t1, t2 = run_with_trace(course.model, "we eat bread"), run_with_trace(back.model, "we eat bread")
    assert all(torch.equal(t1[k], t2[k]) for k in t1.keys())


def test_save_load_sinusoidal_config(tmp_path):
    """The sinusoidal table is not saved (it is not a parameter) but rebuilt: identical outputs."""
    res = train(ModelConfig(pos_encoding="sinusoidal"), TrainConfig(epochs=1, snapshot_epochs=()), probes={}, log=None)
    save_course_model(res, tmp_path / "s.pt")
    back = load_course_model(tmp_path / "s.pt")
    assert back.model.cfg.pos_encoding == "sinusoidal" and back.snapshots == {}
    src = torch.tensor([[5, 6, 7, 8]])
    assert torch.equal(back.model.encode(src)[0], res.model.encode(src)[0])


def test_load_refuses_other_format_version(course, tmp_path):
    path = tmp_path / "course.pt"
    save_course_model(course, path)
    d = torch.load(path, weights_only=True)
    assert d["format_version"] == MODEL_FORMAT_VERSION
    d["format_version"] = 999
    torch.save(d, tmp_path / "future.pt")
    with pytest.raises(IncompatibleModelFileError) as err:
        load_course_model(tmp_path / "future.pt")
    msg = str(err.value)
    assert "999" in msg  # the file's version ...
    assert re.search(rf"version\D{{0,3}}{MODEL_FORMAT_VERSION}\b", msg), msg  # ... and the one this code reads
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("content", [b"this is not a torch file\n", b""])
def test_load_refuses_non_torch_file(tmp_path, content):
    path = tmp_path / "notes.pt"
    path.write_bytes(content)
    with pytest.raises(IncompatibleModelFileError, match="notes.pt"):
        load_course_model(path)


def test_load_refuses_torch_file_without_version(tmp_path):
    torch.save({"state_dict": {}}, tmp_path / "other.pt")
    with pytest.raises(IncompatibleModelFileError, match="None"):
        load_course_model(tmp_path / "other.pt")
    torch.save([1, 2, 3], tmp_path / "list.pt")
    with pytest.raises(IncompatibleModelFileError):
        load_course_model(tmp_path / "list.pt")


_UNPICKLED = []


def _side_effect(tag):
    _UNPICKLED.append(tag)
    return tag


class _Payload:
    """Unpickling this calls _side_effect: only possible if torch.load is NOT weights_only."""

    def __reduce__(self):
        return (_side_effect, ("code ran",))


def test_load_uses_weights_only(course, tmp_path):
    path = tmp_path / "course.pt"
    save_course_model(course, path)
    d = torch.load(path, weights_only=True)
    d["extra"] = _Payload()
    torch.save(d, tmp_path / "evil.pt")
    _UNPICKLED.clear()
    with pytest.raises(IncompatibleModelFileError, match="weights_only"):
        load_course_model(tmp_path / "evil.pt")
    assert _UNPICKLED == []  # nothing was executed while loading
