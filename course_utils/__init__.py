"""course_utils: the plumbing behind the "Understanding Q, K, V" notebooks.

One module per concept, in notebook order:

    vectors      - 01: 2-D sentence vectors, dot products, cosine
    attention    - 02-04: scaled dot-product attention and multi-head attention, from scratch
    projections  - 02, 09: Q, K, V as linear layers; W^Q as a bank of queries
    stepwise     - 03-04: attention cell by cell, the scale slider, per-head plots
    data         - 05: the tiny English->German corpus, vocabularies, clear input errors
    model        - 05: the encoder-decoder translator and greedy `translate`
    tracing      - 05-09: record Q, K, V, scores, weights, outputs per layer/head; patch them; the
                   one vocabulary of places and trace keys (PLACES, place_prefix, trace_key)
    training     - 05: deterministic training with epoch snapshots; save/load without pickle
    analysis     - 06-08: labelled vectors, one shared projection, cosine tables
    clustering   - 06: how far a word's vectors move between sentences and epochs
    probing      - 07-08: word order, positional encoding, five probe sentences
    heads        - 03-05, 09: per-head statistics over the corpus (one batched pass), their pictures
    roles        - 09: word roles of the corpus sentences and cross-attention's aligned word
    interventions - 04, 06, 08, 09: patched models scored by exact match
    plotting     - heatmaps (the one attention heatmap: plot_attention), the model view, kind colours
    widgets      - thin ipywidgets wrappers that show a message instead of a traceback
    clientside   - views whose every choice is embedded once and switched in the browser, no kernel
                   (Vega-Lite via Altair), one per notebook widget with finite choices
    diagrams     - 02-05: the course's schematics (one word's attention path, the three places,
                   multi-head with shapes, one layer with residuals and LayerNorms)
    pretrained   - 10: all-MiniLM-L6-v2 run by the course's own attention, offline
    exercises    - one checker module per notebook (nb01 ... nb10)
    errors       - the course's error types
    precision    - the one dtype (float64: the same digits on every CPU) and `below` for noise-level values

Build tooling is not part of the teaching package: tools/execute.py (`make execute`) and
tools/export_html.py (`make html`).

Importing this package has no side effects: no seeds set, no threads changed, no files read. The one
deliberate exception is `pretrained` (not imported by the package): it sets the Hugging Face libraries'
offline switches (HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE, ...) in os.environ where unset, so that nothing
ever asks the network.
"""

__version__ = "1.0.0"
# Files saved by `training.save_course_model` carry this; a different number is refused on load.
MODEL_FORMAT_VERSION = 3  # 2: ModelConfig.init (the blog's Xavier init is the default); 3: float64
