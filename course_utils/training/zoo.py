"""The standard course models shipped in the package (course_utils/models/): which kinds and seeds exist, loading
them, retraining them.

    course = load_standard_model()            # "learned", seed 0: the course model, a TrainResult (instant)
    seeds = load_seeds("learned")             # {seed: TrainResult} for SEEDS = (0, 1, 2, 3, 4)
    load_standard_model("saturated", 3)       # PyTorch's default init, seed 3 (notebook 03, Evidence part)
    course_model("one_head", 2)               # the same model trained again from scratch, deterministic

STANDARD_MODELS: "learned" (the course model: the source blog's sizes and init, 2 layers of 2 heads), "blog" (the
blog's own model: 1 layer, 1 head; every blog claim is judged on it first), "sinusoidal" and "none" (other
positional encodings, seed 0 only; notebook 07), "one_head" (notebooks 04 §6, 09 §4), "saturated" (notebook 03's Evidence part), and "blog_tied", "tied" (one
linear layer for Q, K and V: the blog's "why not only 1 encoding?", notebook 03's Evidence part).
`make models` (python -m course_utils.training.zoo) retrains and rewrites every file;
tests/test_shipped_models.py checks that the code reproduces them.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path
from typing import TYPE_CHECKING

from course_utils.core.data import build_vocabs, load_pairs, load_probes
from course_utils.core.errors import ConfigError
from course_utils.core.model import ModelConfig, build_model
from course_utils.core.precision import course_precision
from course_utils.training.files import load_course_model, save_course_model
from course_utils.training.train import TrainConfig, TrainResult, train

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

# ---- the standard models shipped in course_utils/models/ (package data) ----

SEEDS = (0, 1, 2, 3, 4)  # every verdict about a trained model is computed on each of these

# name -> (model config, shipped seeds). Seed 0 of "learned" is *the* course model.
STANDARD_MODELS: dict[str, tuple[ModelConfig, tuple[int, ...]]] = {
    "learned": (ModelConfig(), SEEDS),  # the blog's setting: learned positions, Xavier init
    "sinusoidal": (ModelConfig(pos_encoding="sinusoidal"), (0,)),
    "none": (ModelConfig(pos_encoding="none"), (0,)),
    "one_head": (ModelConfig(n_heads=1), SEEDS),  # notebook 04: does splitting into heads help?
    "saturated": (ModelConfig(init="torch_default"), SEEDS),  # notebook 03: PyTorch's default init, a lesson
    # the source blog's own model as its code builds it: 1 encoder and 1 decoder layer, 1 head, d_model 64, d_ff 128,
    # Xavier on every weight; every blog claim is judged on it first, the course model gives a second reading
    "blog": (ModelConfig(n_layers=1, n_heads=1), SEEDS),
    # the blog asks "why don't we learn only 1 encoding?": the same two shapes with one linear layer making Q, K
    # and V in every attention block (W^Q = W^K = W^V); judged beside "blog" and "learned" (notebook 03's Evidence)
    "blog_tied": (ModelConfig(n_layers=1, n_heads=1, tied_qkv=True), SEEDS),
    "tied": (ModelConfig(tied_qkv=True), SEEDS),
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
    three positional-encoding models and every seed of the blog's 1-layer model (small files); the blog's context
    pair for the other seeds; none for the 1-head models (only their weights and history are needed).
    Used by course_model: the shipped snapshots that notebooks 05 §6, 06 and 08 read."""
    _check_standard(name, seed)
    if name in ("one_head", "blog_tied", "tied"):
        return {}
    if name == "blog" or (seed == 0 and name in ("learned", "sinusoidal", "none")):
        return load_probes()
    return load_probes("context_pair")


def course_model(name: str = "learned", seed: int = 0, log=None) -> TrainResult:
    """Train a standard course model from scratch (deterministic, ~2 s on one CPU thread).

    name: "learned" (the course model), "blog" (the blog's 1-layer, 1-head model), "sinusoidal", "none", "one_head", "saturated", "blog_tied" or "tied"
    (see STANDARD_MODELS); seed: one of the shipped seeds.
    Used by write_standard_models (`make models`); notebook 05 §3 trains the same model in the open.
    """
    cfg, _ = _check_standard(name, seed)
    return train(cfg, TrainConfig(seed=seed), probes=standard_probes(name, seed), log=log)


def untrained_standard_model(name: str = "learned", seed: int = 0):
    """The model `course_model(name, seed)` starts from: the same config, vocabularies and initial weights,
    0 epochs (in eval mode). The baseline beside every "learned" or "different" verdict (measures.verdicts).
    Used in notebooks 02, 04, 06, 08 and 09 (the untrained column of each baseline table)."""
    cfg, _ = _check_standard(name, seed)
    with course_precision():
        src_vocab, tgt_vocab = build_vocabs(load_pairs("train"))
        model = build_model(cfg, src_vocab, tgt_vocab, seed=TrainConfig(seed=seed).seed)
    return model.eval()


def standard_model_path(name: str = "learned", seed: int = 0) -> Traversable:
    """course_model_{name}.pt for seed 0, course_model_{name}_seed{seed}.pt for the other seeds, in the package's
    models/ folder (package data, found with importlib.resources in a clone, an editable install or a wheel).
    Used by load_standard_model and write_standard_models (the files notebooks 02-09 load)."""
    _check_standard(name, seed)
    suffix = "" if seed == 0 else f"_seed{seed}"
    return files("course_utils") / "models" / f"course_model_{name}{suffix}.pt"


def load_standard_model(name: str = "learned", seed: int = 0) -> TrainResult:
    """A standard course model, loaded from the package's models/ folder (instant, identical bits on every machine).

    The files were written by `course_model(name, seed)` (`make models`); tests/test_shipped_models.py
    retrains each one and checks that the code reproduces the file.
    Used in notebooks 02 §2, 03 §7, 05 §3, 06 §3, 07 (Three positional encodings), 08 (The claims).
    """
    shipped = standard_model_path(name, seed)
    if not shipped.is_file():
        raise FileNotFoundError(
            f"{shipped.name} is missing from course_utils/models/: run `make models` (or course_model({name!r}, {seed}) to retrain)"
        )
    with as_file(shipped) as path:  # a real file for torch.load, wherever the package is installed
        return load_course_model(path)


def load_seeds(name: str = "learned") -> dict[int, TrainResult]:
    """{seed: TrainResult} for every shipped seed of a standard model (SEEDS for "learned").
    Used in notebooks 02 §2, 03 (Evidence part), 04, 05 §5, 06, 07, 08 and 09: every verdict on five seeds."""
    _, seeds = _check_standard(name, 0)
    return {seed: load_standard_model(name, seed) for seed in seeds}


def write_standard_models() -> None:
    """Retrain and save every standard model and seed into course_utils/models/ (of the checkout this module is in).
    Used by `make models` (python -m course_utils.training.zoo): the files notebooks 02-09 load."""
    folder = Path(__file__).resolve().parents[1] / "models"  # the package's own models/, written as files
    folder.mkdir(exist_ok=True)
    for name, (_, seeds) in STANDARD_MODELS.items():
        for seed in seeds:
            result = course_model(name, seed)
            path = folder / standard_model_path(name, seed).name
            save_course_model(result, path)
            print(
                f"{path.name}: trained in {result.seconds:.1f} s, final loss {result.history[-1]['loss']:.4f}, "
                f"train exact-match {result.history[-1]['train_exact']:.1%}"
            )


if __name__ == "__main__":
    write_standard_models()
