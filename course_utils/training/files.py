"""Save and load a trained course model as plain tensors and values.

    save_course_model(result, "course_model_learned.pt")           # a TrainResult -> plain tensors and values
    result = load_course_model(path)                               # the TrainResult back, model in eval mode

A file holds the weights, both vocabularies, the model and training configs, the history and the snapshots
(each Trace as a dict). It is a torch.save archive, and torch.save writes pickle: the file is read back with
torch.load(weights_only=True), whose restricted unpickler accepts only tensors and plain values (dicts, lists,
strings, numbers), so loading a file cannot run arbitrary code; nothing course-specific is pickled.
A file whose format version is not `course_utils.MODEL_FORMAT_VERSION` is refused (IncompatibleModelFileError).
The shipped files in course_utils/models/ are written and read through `training.zoo`.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import torch

from course_utils import MODEL_FORMAT_VERSION, __version__
from course_utils.core.data import Vocab
from course_utils.core.errors import IncompatibleModelFileError
from course_utils.core.model import ModelConfig, Translator
from course_utils.core.precision import course_precision
from course_utils.trace.tracing import Trace
from course_utils.training.train import TrainConfig, TrainResult

# ---- save (torch.save of plain values) / load (weights_only=True) ----


def save_course_model(result: TrainResult, path) -> None:
    """Write weights, vocabularies, config, history and snapshots as plain tensors/values.
    Used by training.zoo.write_standard_models (`make models`: the files notebooks 02-09 load)."""
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
    """Load a file written by `save_course_model`; a file of another format version is refused.
    Used by training.zoo.load_standard_model (every shipped model of notebooks 02-09)."""
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
    snaps = {
        int(e): {s: Trace.from_dict(t, cfg.n_layers) for s, t in snap.items()} for e, snap in d["snapshots"].items()
    }
    return TrainResult(model, d["history"], snaps, TrainConfig(**tc), d["seconds"])
