"""The deterministic training loop of the course translator, with trace snapshots of probe sentences.

    result = train(ModelConfig(), TrainConfig(seed=0))    # a TrainResult; `log` gets one line per epoch
    result.model, result.history, result.snapshots[30]["we want to eat apple"]
    exact_match(result.model, load_pairs("heldout"))      # share of pairs translated word for word

Same seed -> bit-identical weights on one machine (one thread, seeded init and shuffling); float64
(`core.precision`) keeps two CPUs' weights within ~1e-11 of each other after 30 epochs.
The standard models are trained by `training.zoo.course_model` and saved by `training.files` (a torch.save archive of plain values, loaded with weights_only=True).
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
from course_utils.trace.tracing import Trace, run_with_trace


@dataclass(frozen=True)
class TrainConfig:
    """Epochs, batch size, Adam's learning rate, the seed, and the epochs at which snapshots are taken.
    Used in notebooks 03 (Evidence part) and 05 §3 (the batch size and learning rate of the loop written out there)."""

    epochs: int = 30
    batch_size: int = 40
    lr: float = 4e-3
    seed: int = 0
    snapshot_epochs: tuple[int, ...] = (1, 15, 30)


@dataclass
class TrainResult:
    """What `train` returns and `training.files` saves: the trained model, one history row per epoch, the snapshots.
    Used in notebooks 02-09 (from training.zoo.load_seeds); 05 §3 and §6 read its history and snapshots."""

    model: Translator
    history: list[dict]  # one dict per epoch: epoch, loss, token_acc, and train_exact (None between snapshot epochs)
    snapshots: dict[int, dict[str, Trace]] = field(default_factory=dict)  # epoch -> sentence -> Trace
    train_config: TrainConfig = field(default_factory=TrainConfig)
    seconds: float = 0.0


@contextmanager
def single_thread():
    """Run torch on one thread inside the block (bit-for-bit reproducible), then restore.
    Used in notebook 05 §3 (around the training loop written out)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def make_batches(model: Translator, pairs: list[Pair], batch_size: int, generator: torch.Generator):
    """Shuffled (src (B, Ts), tgt (B, Tt+1)) batches; tgt is <bos> German <eos>, right-padded.
    Taught in notebook 05 §3."""
    order = torch.randperm(len(pairs), generator=generator).tolist()
    for i in range(0, len(order), batch_size):
        chunk = [pairs[j] for j in order[i : i + batch_size]]
        src = pad_batch([encode_source(model.src_vocab, p.english, model.cfg.max_len) for p in chunk])
        tgt = pad_batch([encode_target(model.tgt_vocab, p.german, model.cfg.max_len) for p in chunk])
        yield src, tgt


def exact_matches(model: Translator, pairs: list[Pair]) -> list[bool]:
    """Per pair (one batched greedy decode): does the translation equal the reference word for word?
    Used by exact_match and measures.interventions.accuracy (notebooks 04 §6, 06 §3, 08, 09 §4)."""
    hyps = translate_batch(model, [p.english for p in pairs])
    return [h == p.german.split() for h, p in zip(hyps, pairs)]


def exact_match(model: Translator, pairs: list[Pair]) -> float:
    """Share of pairs whose greedy translation equals the reference word for word.
    Taught in notebook 05 §3 (written out) and §4 (checked); used in 05 §7, 07 (What the models translate)."""
    return sum(exact_matches(model, pairs)) / len(pairs)


def snapshot(model: Translator, probes: dict[str, str | None]) -> dict[str, Trace]:
    """Trace each probe sentence; the decoder reads the reference if there is one, else the model's output.
    Taught in notebook 05 §6 (What a training snapshot holds); its traces are read in 06 and 08."""
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
    Taught in notebook 05 §3 (the loop written out gives the same weights bit for bit); used in 03's Evidence part.
    """
    mcfg, tcfg = model_config or ModelConfig(), train_config or TrainConfig()
    pairs = load_pairs("train") if pairs is None else pairs
    probes = load_probes() if probes is None else probes
    start = time.perf_counter()
    with single_thread(), course_precision():  # float64: the same weights on every CPU (core.precision)
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
