"""Notebook 05 writes the training loop and greedy decoding out in code cells; they must equal the library.

The cells are taken from the committed notebook (found by their marker comment) and run here in a namespace
that holds what they read. The loop must give bit-identical weights to `train` (training/train.py) for the same
seed and epochs; greedy decoding must give the words of `translate` (core/model.py). Each comparison is also run
on a broken copy of the cell (no shift, another seed, the wrong row) to show that it can fail.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
import torch
from torch import nn

from course_utils import core, training
from course_utils.core.data import build_vocabs, encode_source, load_pairs, load_probes
from course_utils.core.model import ModelConfig, build_model, translate, translate_batch
from course_utils.core.precision import close_to_stored, max_difference
from course_utils.training.train import TrainConfig, make_batches, single_thread, train
from course_utils.training.zoo import load_standard_model

pytestmark = pytest.mark.portable  # float-sensitive: also run on the second CPU kernel path (make test-portable)

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "05_training_the_translator.ipynb"
LOOP_MARKER = "# the training loop, in the open"
GREEDY_MARKER = "# greedy decoding, in the open"
SHIFT = "gold = tgt[:, 1:]"


def cell_source(marker: str) -> str:
    """The one code cell of notebook 05 that has `marker` as a line of its own among its first three lines."""
    cells = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    found = [c.source for c in cells if marker in [line.strip() for line in c.source.splitlines()[:3]]]
    assert len(found) == 1, f"expected one code cell marked {marker!r}, found {len(found)}"
    return found[0]


def run_loop(source: str, epochs: int, seed: int = 0) -> dict:
    """Exec the notebook's loop cell with EPOCHS, SEED and what else it reads; return its namespace."""
    pairs = load_pairs("train")
    src_vocab, tgt_vocab = build_vocabs(pairs)
    namespace = {
        "EPOCHS": epochs,
        "SEED": seed,
        "torch": torch,
        "nn": nn,
        "core": core,  # the notebook imports the layers: core.build_model, training.make_batches, ...
        "training": training,
        "ModelConfig": ModelConfig,
        "TrainConfig": TrainConfig,
        "build_model": build_model,
        "make_batches": make_batches,
        "single_thread": single_thread,
        "train": pairs,
        "src_vocab": src_vocab,
        "tgt_vocab": tgt_vocab,
        "print": lambda *args, **kwargs: None,
    }
    exec(compile(source, "notebook 05: the training loop", "exec"), namespace)
    return namespace


def library_weights(epochs: int, seed: int = 0) -> dict[str, torch.Tensor]:
    config = TrainConfig(epochs=epochs, seed=seed, snapshot_epochs=())
    return train(ModelConfig(), config, probes={}, log=None).model.state_dict()


def bit_identical(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def loop_source() -> str:
    source = cell_source(LOOP_MARKER)
    assert source.count(SHIFT) == 1 and "tgt[:, :-1]" in source  # the mutations below must apply
    return source


@pytest.fixture(scope="module")
def two_epochs() -> dict[str, torch.Tensor]:
    return library_weights(2)


def test_notebook_loop_equals_library_train(loop_source, two_epochs):
    ns = run_loop(loop_source, epochs=2)
    assert bit_identical(ns["model"].state_dict(), two_epochs)
    assert [h["epoch"] for h in ns["history"]] == [1, 2]
    ref = train(ModelConfig(), TrainConfig(epochs=2, snapshot_epochs=()), probes={}, log=None)
    assert [h["loss"] for h in ns["history"]] == [r["loss"] for r in ref.history]
    assert [h["token_acc"] for h in ns["history"]] == [r["token_acc"] for r in ref.history]


def test_notebook_loop_without_the_shift_differs(loop_source, two_epochs):
    unshifted = loop_source.replace(SHIFT, "gold = tgt[:, :-1]")  # predict the word it reads
    assert not bit_identical(run_loop(unshifted, epochs=2)["model"].state_dict(), two_epochs)


def test_notebook_loop_with_another_seed_differs(loop_source, two_epochs):
    assert not bit_identical(run_loop(loop_source, epochs=2, seed=1)["model"].state_dict(), two_epochs)
    assert bit_identical(run_loop(loop_source, epochs=1, seed=1)["model"].state_dict(), library_weights(1, seed=1))


def test_notebook_loop_without_ignore_index_differs(loop_source, two_epochs):
    source = loop_source.replace("nn.CrossEntropyLoss(ignore_index=0)", "nn.CrossEntropyLoss()")
    assert source != loop_source
    assert not bit_identical(run_loop(source, epochs=2)["model"].state_dict(), two_epochs)


@pytest.mark.slow  # a 30-epoch training (make test retrains the course model once, tests/test_shipped_models.py)
def test_thirty_epochs_of_the_notebook_loop_give_the_shipped_model(loop_source):
    """The notebook says: EPOCHS = 30 trains the full course model, the one shipped in course_utils/models/."""
    fresh = run_loop(loop_source, epochs=30)["model"].state_dict()
    shipped = load_standard_model().model.state_dict()
    assert fresh.keys() == shipped.keys()
    # bit for bit on the machine that wrote the file; within ~1e-11 (float64 kernel noise) on any other CPU
    assert close_to_stored(fresh, shipped), f"largest difference {max_difference(fresh, shipped):.3g}"


# ---- greedy decoding ----


def greedy_from(source: str):
    namespace = {"torch": torch, "core": core, "encode_source": encode_source}
    exec(compile(source, "notebook 05: greedy decoding", "exec"), namespace)
    return namespace["greedy_translate"]


@pytest.fixture(scope="module")
def greedy_source() -> str:
    source = cell_source(GREEDY_MARKER)
    assert source.count("logits[0, -1]") == 1
    return source


SENTENCES = [p.english for p in load_pairs()] + list(load_probes())


@pytest.fixture(scope="module")
def model_and_reference():
    """The shipped model and translate's words for every sentence (translate_batch: one batched pass, which equals
    translate sentence by sentence, tests/test_model.py)."""
    model = load_standard_model().model
    return model, dict(zip(SENTENCES, translate_batch(model, SENTENCES)))


def test_notebook_greedy_decoding_equals_translate(greedy_source, model_and_reference):
    model, reference = model_and_reference
    greedy = greedy_from(greedy_source)
    assert all(greedy(model, s) == reference[s] for s in SENTENCES)
    assert greedy(model, SENTENCES[0]) == translate(model, SENTENCES[0])


def test_notebook_greedy_decoding_on_another_row_differs(greedy_source, model_and_reference):
    model, reference = model_and_reference
    first_row = greedy_from(greedy_source.replace("logits[0, -1]", "logits[0, 0]"))  # always the <bos> row
    some = SENTENCES[::4]  # a broken copy decodes up to max_len words each: a quarter of the sentences shows it
    assert sum(first_row(model, s) != reference[s] for s in some) > len(some) // 2


def test_notebook_greedy_decoding_without_argmax_differs(greedy_source, model_and_reference):
    model, reference = model_and_reference
    worst = greedy_from(greedy_source.replace(".argmax()", ".argmin()"))
    assert all(worst(model, s) != reference[s] for s in SENTENCES[:20])
