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
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from . import MODEL_FORMAT_VERSION, __version__
from .data import Pair, Vocab, build_vocabs, encode_source, encode_target, load_pairs, load_probes, pad_batch
from .errors import ConfigError, IncompatibleModelFileError
from .model import ModelConfig, Translator, build_model, translate_batch
from .precision import course_precision
from .tracing import Trace, run_with_trace


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


# ---- the standard models shipped in models/ ----

SEEDS = (0, 1, 2, 3, 4)  # every verdict about a trained model is computed on each of these

# name -> (model config, shipped seeds). Seed 0 of "learned" is *the* course model.
STANDARD_MODELS: dict[str, tuple[ModelConfig, tuple[int, ...]]] = {
    "learned": (ModelConfig(), SEEDS),  # the blog's setting: learned positions, Xavier init
    "sinusoidal": (ModelConfig(pos_encoding="sinusoidal"), (0,)),
    "none": (ModelConfig(pos_encoding="none"), (0,)),
    "one_head": (ModelConfig(n_heads=1), SEEDS),  # notebook 04: does splitting into heads help?
    "saturated": (ModelConfig(init="torch_default"), SEEDS),  # notebook 03: PyTorch's default init, a lesson
}


def _check_standard(name: str, seed: int) -> tuple[ModelConfig, tuple[int, ...]]:
    if name not in STANDARD_MODELS:
        raise ConfigError(f"unknown standard model {name!r}; choose one of {tuple(STANDARD_MODELS)}")
    cfg, seeds = STANDARD_MODELS[name]
    if seed not in seeds:
        raise ConfigError(f"the {name!r} model is shipped for seeds {seeds}; got seed {seed!r}")
    return cfg, seeds


def standard_probes(name: str = "learned", seed: int = 0) -> dict[str, str | None]:
    """The probe sentences snapshotted at epochs 1, 15, 30 in a shipped file: every probe for seed 0 of the
    three positional-encoding models; the blog's context pair for the other seeds (small files); none for
    the 1-head models (only their weights and history are needed)."""
    _check_standard(name, seed)
    if name == "one_head":
        return {}
    if seed == 0 and name in ("learned", "sinusoidal", "none"):
        return load_probes()
    return load_probes("context_pair")


def course_model(name: str = "learned", seed: int = 0, log=None) -> TrainResult:
    """Train a standard course model from scratch (deterministic, ~2 s on one CPU thread).

    name: "learned" (the source blog's setting), "sinusoidal", "none", "one_head" or "saturated"
    (see STANDARD_MODELS); seed: one of the shipped seeds.
    """
    cfg, _ = _check_standard(name, seed)
    return train(cfg, TrainConfig(seed=seed), probes=standard_probes(name, seed), log=log)


def standard_model_path(name: str = "learned", seed: int = 0) -> Path:
    _check_standard(name, seed)
    suffix = "" if seed == 0 else f"_seed{seed}"
    return Path(__file__).resolve().parents[1] / "models" / f"course_model_{name}{suffix}.pt"


def load_standard_model(name: str = "learned", seed: int = 0) -> TrainResult:
    """A standard course model, loaded from models/ (instant, identical bits on every machine).

    The files were written by `course_model(name, seed)` (`make models`); tests/test_shipped_models.py
    retrains each one and checks that the code reproduces the file.
    """
    path = standard_model_path(name, seed)
    if not path.exists():
        raise FileNotFoundError(
            f"{path.name} is missing from models/: run `make models` (or course_model({name!r}, {seed}) to retrain)"
        )
    return load_course_model(path)


def load_seeds(name: str = "learned") -> dict[int, TrainResult]:
    """{seed: TrainResult} for every shipped seed of a standard model (SEEDS for "learned")."""
    _, seeds = _check_standard(name, 0)
    return {seed: load_standard_model(name, seed) for seed in seeds}


def write_standard_models() -> None:
    """Retrain and save every standard model and seed into models/."""
    for name, (_, seeds) in STANDARD_MODELS.items():
        for seed in seeds:
            result = course_model(name, seed)
            path = standard_model_path(name, seed)
            path.parent.mkdir(exist_ok=True)
            save_course_model(result, path)
            print(
                f"{path.name}: trained in {result.seconds:.1f} s, final loss {result.history[-1]['loss']:.4f}, "
                f"train exact-match {result.history[-1]['train_exact']:.1%}"
            )


# ---- save / load without pickle ----


def save_course_model(result: TrainResult, path) -> None:
    """Write weights, vocabularies, config, history and snapshots as plain tensors/values."""
    m = result.model
    torch.save(
        {
            "format_version": MODEL_FORMAT_VERSION,
            "course_utils_version": __version__,
            "model_config": m.cfg.to_dict(),
            "train_config": asdict(result.train_config),
            "src_vocab": m.src_vocab.words,
            "tgt_vocab": m.tgt_vocab.words,
            "state_dict": m.state_dict(),
            "history": result.history,
            "seconds": result.seconds,
            "snapshots": {e: {s: t.to_dict() for s, t in snap.items()} for e, snap in result.snapshots.items()},
        },
        path,
    )


def load_course_model(path) -> TrainResult:
    """Load a file written by `save_course_model`; a file of another format version is refused."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path} does not exist (no such model file)")
    try:
        d = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # not a torch file, or something weights_only refuses to unpickle
        raise IncompatibleModelFileError(
            f"{path} is not a course model file readable with weights_only=True ({type(exc).__name__}: {exc})"
        ) from None
    if not isinstance(d, dict) or d.get("format_version") != MODEL_FORMAT_VERSION:
        found = d.get("format_version") if isinstance(d, dict) else None
        raise IncompatibleModelFileError(
            f"{path} has model format version {found!r} (course_utils {d.get('course_utils_version') if isinstance(d, dict) else '?'}), "
            f"but this course_utils {__version__} reads version {MODEL_FORMAT_VERSION}. Retrain with course_model() and save again."
        )
    cfg = ModelConfig(**d["model_config"])
    with course_precision():
        model = Translator(cfg, Vocab(d["src_vocab"], "English"), Vocab(d["tgt_vocab"], "German"))
    model.load_state_dict(d["state_dict"])
    model.eval()
    tc = d["train_config"]
    tc["snapshot_epochs"] = tuple(tc["snapshot_epochs"])
    snaps = {int(e): {s: Trace.from_dict(t) for s, t in snap.items()} for e, snap in d["snapshots"].items()}
    return TrainResult(model, d["history"], snaps, TrainConfig(**tc), d["seconds"])


if __name__ == "__main__":
    write_standard_models()
