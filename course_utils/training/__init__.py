"""training: train the translator and keep the results (imports core and trace).

train  the deterministic training loop with epoch snapshots, exact match
files  save a trained model as plain tensors and values (a torch.save archive), load it with weights_only=True
zoo    the standard models (kinds x seeds) shipped in course_utils/models/, retrained on demand
"""

# ---- re-exports: every public name of the layer, so that a notebook imports the layer, not its modules ----
from course_utils.training.files import load_course_model, save_course_model
from course_utils.training.train import (
    TrainConfig,
    TrainResult,
    exact_match,
    exact_matches,
    make_batches,
    single_thread,
    snapshot,
    train,
)
from course_utils.training.zoo import (
    SEEDS,
    course_model,
    load_seeds,
    load_standard_model,
    standard_model_path,
    standard_probes,
    untrained_standard_model,
    write_standard_models,
)

__all__ = [
    "course_model",
    "exact_match",
    "exact_matches",
    "load_course_model",
    "load_seeds",
    "load_standard_model",
    "make_batches",
    "save_course_model",
    "SEEDS",
    "single_thread",
    "snapshot",
    "standard_model_path",
    "standard_probes",
    "train",
    "TrainConfig",
    "TrainResult",
    "untrained_standard_model",
    "write_standard_models",
]
