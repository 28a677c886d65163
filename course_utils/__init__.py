"""course_utils: the library behind the "Understanding Q, K, V" notebooks, in layers that import only downward.

    course_utils/
        core/       errors, precision, data, toys, places (the one vocabulary), attention, model, pretrained
        trace/      tracing (Trace, recording, patching), interventions, pretrained traces
        training/   train, files (save/load without pickle), zoo (the shipped models)
        measures/   similarity, attention statistics, weight maps, projection, clustering, probing, ...
        views/      matplotlib figures, diagrams, widgets, clientside/ (one file per browser view)
        exercises/  one checker module per notebook (nb01 ... nb10)

A module imports from its own layer or the layers above it in this list, never from below; only views/ imports
matplotlib, Altair or ipywidgets (tests/test_architecture.py checks both). Each library function names the
notebook section that teaches it. Build tooling is not part of the package: tools/execute.py (`make execute`)
and tools/export_html.py (`make html`).

Importing this package has no side effects: no seeds set, no threads changed, no files read. The one deliberate
exception is `core.pretrained`: it sets the Hugging Face libraries' offline switches (HF_HUB_OFFLINE, ...) in
os.environ where unset, so that nothing ever asks the network.
"""

__version__ = "1.0.0"
# Files saved by `training.save_course_model` carry this; a different number is refused on load.
MODEL_FORMAT_VERSION = 3  # 2: ModelConfig.init (the blog's Xavier init is the default); 3: float64
