"""Deterministic training of the course translator, with trace snapshots of probe sentences.

    result = course_model()              # the standard course model: ~3 s on 2 CPU cores
    result.model, result.history, result.snapshots[30]["we want to eat apple"]

Same seed -> bit-identical weights on one machine (one thread, seeded init and shuffling); float64
(`precision.py`) keeps two CPUs' weights within ~1e-11 of each other after 30 epochs.
Saved files contain only tensors and plain Python values: `load_course_model` uses
torch.load(weights_only=True), never pickle of arbitrary objects.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import nn

from course_utils.core.data import Pair, build_vocabs, encode_source, encode_target, load_pairs, load_probes, pad_batch
from course_utils.core.model import ModelConfig, Translator, build_model, translate_batch
from course_utils.core.precision import course_precision
from course_utils.inspect.tracing import Trace, run_with_trace


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 30
    batch_size: int = 40
    lr: float = 4e-3
    seed: int = 0
    snapshot_epochs: tuple[int, ...] = (1, 15, 30)


@dataclass
class TrainResult:
    model: Translator
    history: list[dict]  # one dict per epoch: epoch, loss, token_acc, and train_exact (None between snapshot epochs)
    snapshots: dict[int, dict[str, Trace]] = field(default_factory=dict)  # epoch -> sentence -> Trace
    train_config: TrainConfig = field(default_factory=TrainConfig)
    seconds: float = 0.0


@contextmanager
def single_thread():
    """Run torch on one thread inside the block (bit-for-bit reproducible), then restore."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def make_batches(model: Translator, pairs: list[Pair], batch_size: int, generator: torch.Generator):
    """Shuffled (src (B, Ts), tgt (B, Tt+1)) batches; tgt is <bos> German <eos>, right-padded."""
    order = torch.randperm(len(pairs), generator=generator).tolist()
    for i in range(0, len(order), batch_size):
        chunk = [pairs[j] for j in order[i : i + batch_size]]
        src = pad_batch([encode_source(model.src_vocab, p.english, model.cfg.max_len) for p in chunk])
        tgt = pad_batch([encode_target(model.tgt_vocab, p.german, model.cfg.max_len) for p in chunk])
        yield src, tgt


def exact_matches(model: Translator, pairs: list[Pair]) -> list[bool]:
    """Per pair (one batched greedy decode): does the translation equal the reference word for word?"""
    hyps = translate_batch(model, [p.english for p in pairs])
    return [h == p.german.split() for h, p in zip(hyps, pairs)]


def exact_match(model: Translator, pairs: list[Pair]) -> float:
    """Share of pairs whose greedy translation equals the reference word for word."""
    return sum(exact_matches(model, pairs)) / len(pairs)


def snapshot(model: Translator, probes: dict[str, str | None]) -> dict[str, Trace]:
    """Trace each probe sentence; the decoder reads the reference if there is one, else the model's output."""
    return {s: run_with_trace(model, s, target=ref) for s, ref in probes.items()}


def train(
    model_config: ModelConfig | None = None,
    train_config: TrainConfig | None = None,
    *,
    pairs: list[Pair] | None = None,
    probes: dict[str, str | None] | None = None,
    log=print,
) -> TrainResult:
    """Train a fresh translator on `pairs` (default: the training split).

    Snapshots of `probes` (default: every probe sentence in data/probes.tsv) are taken at
    train_config.snapshot_epochs. `log` gets one short line per epoch (None: silent).
    """
    mcfg, tcfg = model_config or ModelConfig(), train_config or TrainConfig()
    pairs = load_pairs("train") if pairs is None else pairs
    probes = load_probes() if probes is None else probes
    start = time.perf_counter()
    with single_thread(), course_precision():  # float64: the same weights on every CPU (precision.py)
        src_vocab, tgt_vocab = build_vocabs(pairs)
        model = build_model(mcfg, src_vocab, tgt_vocab, seed=tcfg.seed)
        gen = torch.Generator().manual_seed(tcfg.seed)
        opt = torch.optim.Adam(model.parameters(), lr=tcfg.lr)
        loss_fn = nn.CrossEntropyLoss(ignore_index=0)
        result = TrainResult(model, [], {}, tcfg)
        for epoch in range(1, tcfg.epochs + 1):
            model.train()
            total, correct, count = 0.0, 0, 0
            for src, tgt in make_batches(model, pairs, tcfg.batch_size, gen):
                logits = model(src, tgt[:, :-1])  # teacher forcing: read <bos> w1..wn, predict w1..wn <eos>
                gold = tgt[:, 1:]
                loss = loss_fn(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1))
                opt.zero_grad()
                loss.backward()
                opt.step()
                n = int((gold != 0).sum())
                total += loss.item() * n
                correct += int(((logits.argmax(-1) == gold) & (gold != 0)).sum())
                count += n
            row = {"epoch": epoch, "loss": total / count, "token_acc": correct / count, "train_exact": None}
            if epoch in tcfg.snapshot_epochs or epoch == tcfg.epochs:  # greedy decoding of every pair: not every epoch
                row["train_exact"] = exact_match(model, pairs)
            if epoch in tcfg.snapshot_epochs:
                result.snapshots[epoch] = snapshot(model, probes)
            result.history.append(row)
            if log:
                exact = "" if row["train_exact"] is None else f"  exact-match {row['train_exact']:6.1%}"
                log(f"epoch {epoch:2d}/{tcfg.epochs}  loss {row['loss']:.3f}  token acc {row['token_acc']:6.1%}{exact}")
        model.eval()
    result.seconds = time.perf_counter() - start
    return result
