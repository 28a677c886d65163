"""course_utils: the library behind the "Understanding Q, K, V" notebooks, in layers; each imports only toward core/.

    course_utils/
        core/       errors, precision, data, toys, places (the one vocabulary), attention, model, pretrained
        trace/      tracing (Trace, recording, patching), interventions, pretrained traces
        training/   train, files (save/load: a torch.save archive read back with weights_only=True), zoo (the shipped models)
        measures/   similarity, attention statistics, weight maps, projection, clustering, probing, ...
        views/      matplotlib figures, diagrams, widgets, clientside/ (one file per browser view)
        exercises/  one checker module per notebook (nb01 ... nb10)
        data/       package data, no code: the corpus (corpus.tsv, probes.tsv; CC0-1.0), read by core.data
        models/     package data, no code: the shipped trained models (.pt), read by training.zoo

A module imports from its own layer or the layers listed before it (toward core/), never from one listed after it
(measures/ never imports views/; views/ may import measures/); only views/ imports matplotlib, Altair or
ipywidgets (tests/test_architecture.py checks both). Each library function names the notebook section that
teaches it. Each layer's __init__ re-exports its public names, so a notebook imports from a few layers
(`from course_utils import measures, views` ... `measures.seed_verdict(...)`), not from twenty modules.
data/ and models/ are read with importlib.resources, so a clone, an editable install and an installed wheel find
the same files. Build tooling is not part of the package: tools/execute.py
(`make execute`), tools/export_html.py (`make html`) and tools/make_corpus.py (writes data/).

Importing this package has no side effects: no seeds set, no threads changed, no files read. The one deliberate
exception is `core.pretrained`: it sets the Hugging Face libraries' offline switches (HF_HUB_OFFLINE, ...) in
os.environ where unset, so that nothing ever asks the network.
"""

__version__ = "1.1.0"  # the one place the version is written: pyproject.toml reads it (CHANGELOG.md says what changed)
# Files saved by `training.save_course_model` carry this; a different number is refused on load (its history: CHANGELOG.md).
MODEL_FORMAT_VERSION = 3
