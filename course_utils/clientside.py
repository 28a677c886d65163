"""Client-side views: the data for every choice is embedded once in the output, and the controls (Vega-Lite
params bound to select/radio inputs) filter it in the browser, with no kernel.

    from course_utils.clientside import attention_view, word_order_view
    attention_view({sentence: run_with_trace(model, sentence) for sentence in sentences})  # last line of a cell
    word_order_view({pe: probing.word_order_traces(load_standard_model(pe).model) for pe in PES})

One view per notebook widget whose choices are finite: pair_view (01), word_qkv_view (02), scaling_view (03),
attention_view (04, 09, 10), seed_attention_view (05), word_path_view (06), word_order_view (07), five_view (08).

`heatmap_view` draws any word-labelled heatmap whose choices are finite (plotting.heatmap's look); the two views
above are built on it (notebooks 03/04's plot_attention, notebook 07's plot_word_order). The static fallback
cell under a view stays: it is what GitHub shows and what nbval compares as a figure.

Built with Altair 5.5.0 (Vega-Lite 5). JupyterLab 4.6.6 renders Vega-Lite 3, 4 and 5 with its own bundle
(vega 5.33.0, vega-lite 5.6.1, vega-embed 6.21.3) and its renderer is "safe": measured in headless Chromium,
both views draw from the SAVED output of a notebook never run or trusted in that browser, and their controls
redraw them (the console notes that the spec says v5.20.1 and the bundle is v5.6.1; nothing else). JupyterLab
adds a PNG of the drawing to the output when it draws it (36 kB for attention_view), written into the file if
the learner saves.

What a view displays: TWO outputs (`ClientSideView._ipython_display_`), because JupyterLab prefers text/html
(rank 50) to the Vega-Lite mimetype (rank 57) in one bundle, and would then show the html's script-less sanitized
copy (untrusted) or need the network (trusted):

1. `application/vnd.vegalite.v5+json` (the spec) + `text/plain` (one sentence saying what the view is).
   JupyterLab draws the spec itself. nbconvert and nbviewer do not render this mimetype: they print the
   sentence, a caption for output 2.
2. `text/html` + `text/plain`: a `<div>` with a deterministic id (`qkv-view-` + the first 12 hex digits of the
   spec's sha256) and a script that draws the same spec with vega-embed. The script does nothing where
   JupyterLab already drew output 1 (a `.jp-RenderedVegaCommon5` in the same output area: measured, the div
   stays empty in JupyterLab, trusted or not). It loads, in order, from these paths relative to the page, and
   from the jsDelivr CDN where a local file fails to load:

       _static/vega/vega.min.js         npm vega@5.33.0        build/vega.min.js
       _static/vega/vega-lite.min.js    npm vega-lite@5.20.1   build/vega-lite.min.js  (Altair 5.5.0's version)
       _static/vega/vega-embed.min.js   npm vega-embed@6.29.0  build/vega-embed.min.js

   (`VEGA_FILES`, `NPM_PACKAGES`). `make html` copies them next to the pages (offline); nbviewer has no
   `_static/` and takes the CDN. The UMD bundles are loaded with require.js's `define.amd` hidden, so they set
   `window.vega*` globals on nbconvert's pages (which load require.js). Where no file loads, the div says so in
   one sentence. GitHub strips scripts: it shows the sentence of output 1 and the static fallback cell.

Every output is deterministic (same traces -> same bytes): no uuid, no timestamps; values are rounded to
`DECIMALS` places (heatmap_view: more where that would change a written annotation, `_embedded`) and travel
as one TSV string, which keeps a view small (`ClientSideView.nbytes`: 52 kB for attention_view of 5 sentences,
91 kB for word_order_view of 3 encodings; both outputs together).
"""

from __future__ import annotations

import hashlib
import json

import altair as alt

from .plotting import decoder_row_labels
from .tracing import PLACE_NAMES, PLACES, VECTOR_KINDS, trace_key

VEGALITE_MIME = "application/vnd.vegalite.v5+json"
DECIMALS = 3  # weights in the embedded data; the annotations show 2
NEAR_LABELS = 0.06  # word_path_view: one label for epochs closer than this share of the panel's span
WRAP_PANELS = 4  # heatmap_view: more panels than this wrap into rows of this many
VEGA_STATIC_DIR = "_static/vega/"  # relative to an exported page
VEGA_FILES = {  # global the bundle defines -> (file under VEGA_STATIC_DIR, CDN url)
    "vega": ("vega.min.js", "https://cdn.jsdelivr.net/npm/vega@5.33.0/build/vega.min.js"),
    "vegaLite": ("vega-lite.min.js", "https://cdn.jsdelivr.net/npm/vega-lite@5.20.1/build/vega-lite.min.js"),
    "vegaEmbed": ("vega-embed.min.js", "https://cdn.jsdelivr.net/npm/vega-embed@6.29.0/build/vega-embed.min.js"),
}
NPM_PACKAGES = ("vega@5.33.0", "vega-lite@5.20.1", "vega-embed@6.29.0")  # where the three files come from


def spec_json(spec: dict) -> str:
    """The spec as compact JSON with sorted keys: the same spec gives the same bytes."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def view_id(spec: dict) -> str:
    """A deterministic element id for the view: 'qkv-view-' + 12 hex digits of the spec's sha256."""
    return "qkv-view-" + hashlib.sha256(spec_json(spec).encode("utf-8")).hexdigest()[:12]


_SCRIPT = """(function () {
  var el = document.getElementById("%(id)s");
  if (!el || el.dataset.drawn) return;
  var area = el.closest(".jp-OutputArea");
  if (area && area.querySelector(".jp-RenderedVegaCommon5")) return;  // JupyterLab drew the Vega-Lite output
  el.dataset.drawn = "1";
  var spec = %(spec)s;
  var files = %(files)s;
  function load(name, urls) {
    return new Promise(function (resolve, reject) {
      if (window[name]) return resolve();
      // require.js on the page: hide define.amd (not define itself, which the page's other scripts may call
      // meanwhile) so that the UMD bundle sets its global instead of registering an AMD module
      var s = document.createElement("script"), d = window.define, amd = d && d.amd;
      if (amd) d.amd = undefined;
      s.src = urls[0];
      s.onload = function () { if (amd) d.amd = amd; resolve(); };
      s.onerror = function () {
        if (amd) d.amd = amd;
        s.remove();
        urls.length > 1 ? load(name, urls.slice(1)).then(resolve, reject) : reject(new Error("cannot load " + name));
      };
      document.head.appendChild(s);
    });
  }
  var ready = window.__qkvVega || (window.__qkvVega = files.reduce(function (p, f) {
    return p.then(function () { return load(f[0], [f[1], f[2]]); });
  }, Promise.resolve()));
  ready.then(function () { return vegaEmbed(el, spec, {actions: false, renderer: "svg"}); })
    .catch(function (e) { el.textContent = "This interactive view could not load its scripts (" + e.message + "); the figure below shows its first view."; });
})();"""


def view_html(spec: dict) -> str:
    """The text/html of a view: a div with a deterministic id and the script that draws `spec` into it."""
    files = [[name, VEGA_STATIC_DIR + local, cdn] for name, (local, cdn) in VEGA_FILES.items()]
    vid = view_id(spec)
    # "</" cannot appear inside a script element: escape it in the JSON (valid JSON either way)
    js = _SCRIPT % {"id": vid, "spec": spec_json(spec).replace("</", "<\\/"), "files": json.dumps(files)}
    return f'<div id="{vid}" class="qkv-clientside"></div>\n<script type="text/javascript">\n{js}\n</script>'


class ClientSideView:
    """A Vega-Lite spec with all its data, shown as the two outputs the module docstring describes."""

    def __init__(self, spec: dict, description: str):
        self.spec = spec
        self.description = description

    @property
    def id(self) -> str:
        return view_id(self.spec)

    def bundles(self) -> list[dict]:
        """The two display bundles, in display order."""
        return [
            {VEGALITE_MIME: self.spec, "text/plain": self.description},
            {
                "text/html": view_html(self.spec),
                "text/plain": "(The view above, drawn by a script where the page allows scripts: exported pages,"
                " nbviewer.)",
            },
        ]

    @property
    def nbytes(self) -> int:
        """Bytes the view adds to a notebook (both outputs' data, as JSON)."""
        return sum(len(json.dumps(b, ensure_ascii=False).encode("utf-8")) for b in self.bundles())

    def _ipython_display_(self):
        from IPython.display import publish_display_data

        for bundle in self.bundles():
            publish_display_data(bundle)

    def __repr__(self) -> str:
        return self.description


# ---- any word-labelled heatmap whose choices are finite ----


def _label_key(i: int, word: str) -> str:
    return f"{i:02d} {word}"  # sorts by position; the axis shows the word after the 3-character prefix


def rows_tsv(fields: list[str], rows: list[dict]) -> str:
    """Rows as one TSV string, the last field (the weights) space-separated: one JSON string in the notebook,
    not one line per number as nbformat's indented JSON would write a list."""
    lines = ["\t".join(fields)]
    for r in rows:
        lines.append("\t".join([*(str(r[f]) for f in fields[:-1]), " ".join(f"{x:g}" for x in r[fields[-1]])]))
    return "\n".join(lines)


def tsv_rows(text: str) -> list[dict]:
    """rows_tsv's rows read back: control indices as ints, `q` the row label, `w` the list of cell values."""
    head, *lines = text.split("\n")
    rows = [dict(zip(head.split("\t"), line.split("\t"))) for line in lines]
    return [
        {k: (v if k == "q" else [float(x) for x in v.split(" ")] if k == "w" else int(v)) for k, v in r.items()}
        for r in rows
    ]


def _embedded(x: float, decimals: int, fmt: str) -> float:
    """x rounded to `decimals` places, or to more where that rounding would change the annotation the view writes
    with `fmt` (a ".Nf" format): 0.1552 -> 0.155 would be written "0.15" where plotting.heatmap writes "0.16"."""
    shown = format(x, fmt) if fmt.startswith(".") and fmt.endswith("f") else None
    v = round(x, decimals)
    while shown is not None and format(v, fmt) != shown and decimals < 9:
        decimals += 1
        v = round(x, decimals)
    return v


def heatmap_view(
    cells: dict,
    controls: dict,
    *,
    title: str,
    legend: str,
    description: str,
    panels: str | None = None,
    row_title: str = "query",
    col_title: str = "key",
    axes_note: tuple[str, list[str]] | None = None,
    scale: dict | None = None,
    floor: float | None = None,
    light_above: float = 0.63,
    fmt: str = ".2f",
    decimals: int = DECIMALS,
    defaults: dict | None = None,
) -> ClientSideView:
    """A word-labelled heatmap (plotting.heatmap's look: rows × columns, words on both axes, one colour scale,
    the value written in each cell) for every combination of `controls`, switched in the browser.

    cells: {(option index per control, in `controls`' order): (matrix, row labels, column labels)}.
    controls: {name: [option labels]}; each name (an identifier) becomes a Vega-Lite param bound to a select
    (more than 3 options) or radio buttons. `panels`: one control drawn as side-by-side panels, with an extra
    first option "all" (every panel) — plot_attention's heads. `axes_note`: (control name, one line per option)
    shown under the title (what rows and columns are). `scale`: Vega-Lite colour scale (default viridis 0..1);
    `floor`: colour values below it are drawn at it (for a log scale); the text turns black above `light_above` (where
    viridis gets light: 0.63 on 0..1, as plotting.heatmap decides by luminance). `defaults`: {control name: option
    index} shown first (default: each control's first option; the panel control's "all" is -1).
    """
    names = list(controls)
    rows, col_labels = [], {}
    for key, (matrix, row_labels, cols) in cells.items():
        if len(key) != len(names) or any(not 0 <= i < len(controls[n]) for i, n in zip(key, names)):
            raise ValueError(f"cell key {key} does not pick one option of each control {names}")
        m = [
            [_embedded(float(x), decimals, fmt) for x in row]
            for row in (matrix.tolist() if hasattr(matrix, "tolist") else matrix)
        ]
        if len(m) != len(row_labels) or any(len(r) != len(cols) for r in m):
            raise ValueError(f"cell {key}: matrix does not fit {len(row_labels)} rows and {len(cols)} columns")
        col_labels["|".join(map(str, key))] = [_label_key(j, c) for j, c in enumerate(cols)]
        for i, (label, values) in enumerate(zip(row_labels, m)):
            rows.append({**dict(zip(names, key)), "q": _label_key(i, label), "w": values})
    fields = [*names, "q", "w"]
    data = alt.Data(
        values=rows_tsv(fields, rows), format=alt.DataFormat(type="tsv", parse=dict.fromkeys(names, "number"))
    )

    params = control_params(controls, defaults, panels=panels)
    params.append(alt.param(name="colLabels", value=col_labels))
    params.append(alt.param(name="optionLabels", value={n: [str(x) for x in controls[n]] for n in names}))
    shown = [n for n in names if n != panels]
    line1 = f"{json.dumps(title + ': ')} + " + " + ', ' + ".join(f"'{n} ' + optionLabels.{n}[{n}]" for n in shown)
    if axes_note:
        params.append(alt.param(name="axesNote", value=axes_note[1]))
        title_expr = f"[{line1}, axesNote[{axes_note[0]}]]"
    else:
        title_expr = line1

    keep = " && ".join(f"datum.{n} == {n}" for n in shown)
    if panels:
        keep += f" && ({panels} < 0 || datum.{panels} == {panels})"
    key_expr = " + '|' + ".join(f"datum.{n}" for n in names)
    x = alt.X("k:O", title=col_title, axis=alt.Axis(labelExpr="substring(datum.label, 3)", labelAngle=-45))
    y = alt.Y("q:O", title=row_title, axis=alt.Axis(labelExpr="substring(datum.label, 3)"))
    colour = "c:Q" if floor is not None else "w:Q"
    cell = (
        alt.Chart()
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                colour,
                title=legend,
                legend=alt.Legend(titleLimit=400),
                scale=alt.Scale(**(scale or {"scheme": "viridis", "domain": [0, 1]})),
            ),
            tooltip=[
                alt.Tooltip("q:N", title=row_title),
                alt.Tooltip("k:N", title=col_title),
                alt.Tooltip("w:Q", format=".3f"),
            ],
        )
    )
    text = (
        alt.Chart()
        .mark_text(fontSize=9)
        .encode(
            x=x,
            y=y,
            text=alt.Text("w:Q", format=fmt),
            color=alt.condition(f"datum.{colour[0]} > {light_above}", alt.value("black"), alt.value("white")),
        )
    )
    chart = (
        alt.layer(cell, text, data=data)
        .transform_filter(keep)
        .transform_calculate(k=f"colLabels[{key_expr}]", ws="split(datum.w, ' ')")
        .transform_flatten(["ws", "k"])
        .transform_calculate(w="toNumber(datum.ws)")
    )
    if floor is not None:
        chart = chart.transform_calculate(c=f"max(datum.w, {floor})")
    # 3-decimal annotations need wider cells than 2-decimal ones to stay inside them
    chart = chart.properties(width=alt.Step(26 if fmt.endswith("2f") else 34), height=alt.Step(20))
    if panels:
        chart = chart.transform_calculate(panel=f"'{panels} ' + optionLabels.{panels}[datum.{panels}]")
        header = {"title": None, "header": alt.Header(labelFontSize=11)}
        order = alt.EncodingSortField(field=panels, op="min")  # head 2 before head 10
        if len(controls[panels]) > WRAP_PANELS:  # "all" of 12 heads side by side would be squeezed unreadably
            chart = chart.facet(facet=alt.Facet("panel:N", sort=order, **header), columns=WRAP_PANELS)
        else:
            chart = chart.facet(column=alt.Column("panel:N", sort=order, **header))
    chart = chart.add_params(*params).properties(title=alt.Title(alt.ExprRef(expr=title_expr), anchor="start"))
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    return ClientSideView(spec, description)


def _choices(**controls) -> str:
    return " × ".join(f"{len(v)} {k}{'s' * (len(v) != 1)}" for k, v in controls.items())


# ---- view 1: the attention heatmap (plotting.plot_attention) for every sentence, place, layer and head ----


def _attention_heatmaps(traces: dict, places, *, title: str, defaults, decimals: int) -> ClientSideView:
    """The one attention-view builder behind attention_view and seed_attention_view. `traces`: {"controls":
    {name: options} of the leading controls (sentence, or sentence and seed), "traces": {(option index per leading
    control): Trace}}; place, layer and head (panels) follow."""
    leading, by_key = traces["controls"], traces["traces"]
    first = next(iter(by_key.values()))
    n_layers = sum(1 for k in first.keys() if k.startswith("encoder.") and k.endswith(".self.weights"))
    n_heads = first[trace_key("encoder self", 0, "weights")].shape[0]
    cells = {}
    for lead, trace in by_key.items():
        for p, place in enumerate(places):
            for layer in range(n_layers):
                key = trace_key(place, layer, "weights")
                rows = trace.query_tokens(key)
                if place != "encoder self":
                    rows = decoder_row_labels(rows, trace.tgt_tokens[1:])
                for h in range(n_heads):
                    cells[(*lead, p, layer, h)] = (trace[key][h], rows, trace.key_tokens(key))
    controls = {
        **leading,
        "place": [PLACE_NAMES[p] for p in places],
        "layer": list(range(n_layers)),
        "head": list(range(n_heads)),
    }
    note = [
        f"rows: queries ({'English' if p == 'encoder self' else 'German input → word it produces'}); columns: keys"
        f" ({'German input' if p == 'decoder self' else 'English'})"
        for p in places
    ]
    description = (
        f"{title}: interactive view of {_choices(**{k: v for k, v in controls.items() if k != 'head'})}"
        f" × {n_heads} heads, switched in the browser (a Vega-Lite chart; the static figure below shows one view)."
    )
    return heatmap_view(
        cells,
        controls,
        title=title,
        legend="attention weight",
        description=description,
        panels="head",
        axes_note=("place", note),
        defaults=defaults,
        decimals=decimals,
    )


def _checked_places(places) -> tuple:
    places = tuple(places)
    if not places or any(p not in PLACES for p in places):
        raise ValueError(f"places must be some of {PLACES}, got {places}")
    return places


def attention_view(
    traces: dict, *, title: str = "Attention weights", places=PLACES, defaults: dict | None = None
) -> ClientSideView:
    """The course's attention heatmap (plotting.plot_attention: query rows × key columns, word labels on both
    axes, one colour scale 0..1, weights written in the cells, one panel per head) for every sentence, place,
    layer and head of `traces` ({sentence label: Trace}), switched in the browser by four controls. `places`: the
    attention places the traces hold (default tracing.PLACES; a pretrained encoder's traces, notebook 10's, hold
    only ("encoder self",)). `defaults`: the view shown first, {control: option index} (heatmap_view's)."""
    traces, places = dict(traces), _checked_places(places)
    if not traces:
        raise ValueError("attention_view needs at least one trace")
    by_key = {(s,): trace for s, trace in enumerate(traces.values())}
    return _attention_heatmaps(
        {"controls": {"sentence": list(traces)}, "traces": by_key},
        places,
        title=title,
        defaults=defaults,
        decimals=DECIMALS,
    )


# ---- view 2: notebook 07's word-order table (probing.plot_word_order) per positional encoding ----


def word_order_view(pairs: dict, *, kinds=VECTOR_KINDS) -> ClientSideView:
    """probing.plot_word_order for every positional encoding, layer, vector kind and place: 1 − cosine between
    the vectors of the two word orders (rows: sentence A's words, columns: sentence B's), on plot_word_order's
    log colour scale from probing.DISTANCE_FLOOR to 2. `pairs`: {encoding label: (trace of A, trace of B)}
    from probing.word_order_traces."""
    from .analysis import cosine_matrix
    from .probing import DISTANCE_FLOOR, DISTANCE_LABEL

    pairs = dict(pairs)
    if not pairs:
        raise ValueError("word_order_view needs at least one pair of traces")
    a0, b0 = next(iter(pairs.values()))
    n_layers = sum(1 for k in a0.keys() if k.startswith("encoder.") and k.endswith(".self.weights"))
    cells = {}
    for e, (a, b) in enumerate(pairs.values()):
        for layer in range(n_layers):
            for k, kind in enumerate(kinds):
                for p, place in enumerate(PLACES):
                    key = trace_key(place, layer, kind)
                    A, B = a.vectors(key).double().numpy(), b.vectors(key).double().numpy()
                    D = (1.0 - cosine_matrix(A, B)).clip(0.0, 2.0)  # 0: same direction, 2: opposite
                    cells[(e, layer, k, p)] = (D, a.tokens(key), b.tokens(key))
    controls = {
        "encoding": list(pairs),
        "layer": list(range(n_layers)),
        "vector": list(kinds),
        "place": [PLACE_NAMES[p] for p in PLACES],
    }
    title = "1 − cosine between the two word orders' vectors"
    description = (
        f"{title}: interactive view of {_choices(**controls)}, switched in the browser"
        " (a Vega-Lite chart; the static figure below shows one view)."
    )
    return heatmap_view(
        cells,
        controls,
        title=title,
        legend=DISTANCE_LABEL,
        description=description,
        row_title=" ".join(a0.src_tokens),
        col_title=" ".join(b0.src_tokens),
        scale={"scheme": "viridis", "type": "log", "domain": [DISTANCE_FLOOR, 2.0]},
        floor=DISTANCE_FLOOR,
        light_above=0.12,  # where viridis gets light on this log scale
        fmt=".3f",
        decimals=4,
    )


# ---- view 3: notebook 06's word projection (clustering.plot_word_projection) per word, layer, place, kinds ----

SENTENCE_SHAPES = ("circle", "triangle-up", "square", "diamond")  # clustering.SENTENCE_MARKERS' Vega-Lite names
SENTENCE_DASHES = ([1, 0], [5, 3], [1, 2], [6, 2, 1, 2])  # "-", "--", ":", "-." as stroke dashes


def word_path_view(
    snapshots,
    sentences,
    *,
    kind_sets=(("q", "k", "v", "x1"), VECTOR_KINDS),
    layers=None,
    places=PLACES,
    words=None,
    defaults: dict | None = None,
) -> ClientSideView:
    """clustering.plot_word_projection (head "all", PCA, 2-D) for every word, layer, place and kind set, switched
    in the browser: small multiples, one panel per kind (KIND_COLOURS), all panels in ONE PCA fitted on every
    word, kind, epoch and sentence of the choice; the chosen word's path over the epochs in each panel (one
    marker shape and dash per sentence, joined in epoch order, each spot labelled with its epochs, "=" where
    the point is identical in every sentence); faint: the other words of the panel's kind; light grey: the
    other kinds. Tooltips give word@kind@epoch. Drag to pan, scroll to zoom (a path can be a speck).

    The PCA is precomputed for each (layer, place, kind set): the word only picks which path is drawn. t-SNE,
    3-D, one head and hand-picked kinds or epochs stay with plot_word_projection (a kernel)."""
    from .analysis import collect_vectors, fit_projection
    from .clustering import _identical_groups
    from .plotting import KIND_COLOURS
    from .tracing import place_prefix

    sentences, places = list(sentences), tuple(places)
    kind_sets = [tuple(ks) for ks in kind_sets]
    epochs = sorted(snapshots)
    first = snapshots[epochs[0]][sentences[0]]
    n_layers = sum(1 for k in first.keys() if k.startswith("encoder.") and k.endswith(".self.weights"))
    layers = list(range(n_layers)) if layers is None else list(layers)
    fits = {}
    for li, layer in enumerate(layers):
        for pi, place in enumerate(places):
            for ki, ks in enumerate(kind_sets):
                lv = collect_vectors(snapshots, sentences, place_prefix(place, layer), kinds=ks, epochs=epochs)
                fits[(li, pi, ki)] = (lv.meta.reset_index(drop=True), fit_projection(lv.X, "pca", 2))
    seen = [w for meta, _ in fits.values() for w in meta["word"]]
    words = list(dict.fromkeys(seen)) if words is None else list(words)
    rows = []
    notes = {}
    for (li, pi, ki), (meta, Y) in fits.items():
        labs = [""] * len(meta)
        for idx in meta.groupby(["word", "kind"], sort=False).groups.values():
            idx = list(idx)
            for g in _identical_groups(Y[idx]):
                members = [idx[j] for j in g]
                both = len({meta["sentence"][m] for m in members}) == len(sentences)
                labs[members[0]] = ",".join(str(e) for e in sorted({int(meta["epoch"][m]) for m in members})) + (
                    "=" if both else ""
                )
        # one sentence's epochs that sit closer than NEAR_LABELS of the panel's span share one label ("15,30"):
        # separate labels there were piled into an unreadable blot (zoom in to tell the points apart)
        near = NEAR_LABELS * float(max(Y[:, 0].max() - Y[:, 0].min(), Y[:, 1].max() - Y[:, 1].min()))
        for idx in meta.groupby(["word", "kind", "sentence"], sort=False).groups.values():
            kept = []
            for m in sorted(idx, key=lambda j: int(meta["epoch"][j])):
                if not labs[m] or "=" in labs[m]:
                    continue
                host = next((k for k in kept if abs(Y[k] - Y[m]).max() < near), None)
                if host is None:
                    kept.append(m)
                else:
                    labs[host], labs[m] = f"{labs[host]},{labs[m]}", ""
        for i, r in meta.iterrows():
            w = words.index(r["word"]) if r["word"] in words else -1
            rows.append(
                [
                    li,
                    pi,
                    ki,
                    w,
                    VECTOR_KINDS.index(r["kind"]),
                    sentences.index(r["sentence"]),
                    int(r["epoch"]),
                    f"{Y[i, 0]:.{DECIMALS}f}",
                    f"{Y[i, 1]:.{DECIMALS}f}",
                    labs[i] or "-",
                ]
            )
        if ki == 0:
            for wi, word in enumerate(words):
                for kj, ks in enumerate(kind_sets):
                    m = fits[(li, pi, kj)][0]
                    missing = [k for k in ks if not ((m["kind"] == k) & (m["word"] == word)).any()]
                    toks = list(dict.fromkeys(m["word"]))
                    notes[f"{li}|{pi}|{kj}|{wi}"] = (
                        ""
                        if not missing
                        else f"no '{word}' among {', '.join(missing)} here; tokens there: {', '.join(toks)}"
                        if len(missing) < len(ks)
                        else f"'{word}' is no token of {places[pi]} layer {layers[li]}; tokens: {', '.join(toks)}"
                    )
    fields = ["layer", "place", "kinds", "word", "kind", "s", "epoch", "x", "y", "lab"]
    text = "\n".join(["\t".join(fields), *("\t".join(map(str, r)) for r in rows)])
    data = alt.Data(values=text, format=alt.DataFormat(type="tsv", parse={f: "number" for f in fields if f != "lab"}))
    controls = {
        "word": words,
        "layer": [str(x) for x in layers],
        "place": [PLACE_NAMES[p] for p in places],
        "kinds": [", ".join(ks) for ks in kind_sets],
    }
    defaults = dict(defaults or {})
    if set(defaults) - set(controls):
        raise ValueError(f"defaults name no control: {sorted(set(defaults) - set(controls))}")
    if "word" not in defaults and "eat" in words:
        defaults["word"] = words.index("eat")
    params = []
    for name, labels in controls.items():
        binding = alt.binding_radio if len(labels) <= 4 else alt.binding_select
        value = defaults.get(name, 0)
        if not 0 <= value < len(labels):
            raise ValueError(f"default {value} is no option of {name}: 0..{len(labels) - 1}")
        params.append(
            alt.param(
                name=name, value=value, bind=binding(options=list(range(len(labels))), labels=labels, name=name + " ")
            )
        )
    params += [
        alt.param(name="optionLabels", value=controls),
        alt.param(name="kindNames", value=list(VECTOR_KINDS)),
        alt.param(name="kindLists", value=[list(ks) for ks in kind_sets]),
        alt.param(name="notes", value=notes),
    ]
    line1 = (
        f'"\'" + optionLabels.word[word] + "\' over epochs {" → ".join(map(str, epochs))}: "'
        " + optionLabels.place[place] + ' layer ' + optionLabels.layer[layer] + ', all heads, one PCA of all words'"
    )
    glyphs = ("●", "▲", "■", "◆")
    dashes = ("solid", "dashed", "dotted", "dash-dot")
    legend = "; ".join(f"{glyphs[i]} {dashes[i]}: in '{s}'" for i, s in enumerate(sentences))
    line2 = (
        json.dumps(legend)
        + ", "
        + json.dumps(
            "labels: epoch ('15,30': about the same spot; '=': the same point in both sentences);"
            " drag to pan, scroll to zoom"
        )
    )
    note = "notes[layer + '|' + place + '|' + kinds + '|' + word]"
    title_expr = f"{note} ? [{line1}, {line2}, {note}] : [{line1}, {line2}]"

    kinds_all = list(VECTOR_KINDS)
    colour = alt.Color(
        "kindName:N", scale=alt.Scale(domain=kinds_all, range=[KIND_COLOURS[k] for k in kinds_all]), legend=None
    )
    x = alt.X("x:Q", title="PCA 1", axis=alt.Axis(grid=False))
    y = alt.Y("y:Q", title="PCA 2", axis=alt.Axis(grid=False))
    tip = [alt.Tooltip("label:N", title="word@kind@epoch"), alt.Tooltip("sentence:N")]
    base = alt.Chart().encode(x=x, y=y)
    grey = base.mark_circle(size=14, color="#d9d9d9", opacity=1).transform_filter("datum.kindName != datum.panel")
    own = "datum.kindName == datum.panel"
    mine = f"{own} && datum.word == word"
    faint = (
        base.mark_circle(size=20, opacity=0.3)
        .encode(color=colour, tooltip=tip)
        .transform_filter(f"{own} && datum.word != word")
    )
    path = (
        base.mark_line(strokeWidth=1.4)
        .encode(
            color=colour,
            detail="sentence:N",
            order="epoch:Q",
            strokeDash=alt.StrokeDash(
                "sentence:N",
                scale=alt.Scale(domain=sentences, range=list(SENTENCE_DASHES[: len(sentences)])),
                legend=None,
            ),
        )
        .transform_filter(mine)
    )
    points = (
        base.mark_point(filled=True, size=60, stroke="black", strokeWidth=0.6, opacity=1)
        .encode(
            color=colour,
            shape=alt.Shape(
                "sentence:N",
                scale=alt.Scale(domain=sentences, range=list(SENTENCE_SHAPES[: len(sentences)])),
                legend=None,  # the title's second line says which shape is which sentence
            ),
            tooltip=tip,
        )
        .transform_filter(mine)
    )
    labels = (  # the first sentence's epochs above right of their points, the others' below right (not left:
        # the panel clips, and a path at its left edge lost the start of its labels)
        base.mark_text(align="left", dx=6, dy=-7, fontSize=10)
        .encode(text="lab:N")
        .transform_filter(f"{mine} && datum.lab != '-' && datum.s == 0")
    )
    labels_other = (
        base.mark_text(align="left", dx=6, dy=11, fontSize=10)
        .encode(text="lab:N")
        .transform_filter(f"{mine} && datum.lab != '-' && datum.s != 0")
    )
    zoom = alt.selection_interval(bind="scales", name="zoom")
    chart = (
        alt.layer(
            grey, faint, path, points, labels_other, labels.add_params(zoom).properties(name="wordPaths"), data=data
        )
        .transform_filter("datum.layer == layer && datum.place == place && datum.kinds == kinds")
        .transform_calculate(
            kindName="kindNames[datum.kind]",
            sentence=f"{json.dumps(sentences)}[datum.s]",
            label="optionLabels.word[datum.word] + '@' + kindNames[datum.kind] + '@' + datum.epoch",
            panels="kindLists[kinds]",
        )
        .transform_flatten(["panels"], as_=["panel"])
        .properties(width=260, height=220)
        .facet(
            facet=alt.Facet(
                "panel:N",
                sort=kinds_all,
                title=None,
                header=alt.Header(labelFontSize=12, labelExpr="datum.label"),
            ),
            columns=2,
        )
        .add_params(*params)
        .properties(title=alt.Title(alt.ExprRef(expr=title_expr), anchor="start"))
    )
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    n = {k: len(v) for k, v in controls.items()}
    description = (
        f"A word's path over epochs {' → '.join(map(str, epochs))}: interactive view of {n['word']} words × {n['layer']}"
        f" layers × {n['place']} places × {n['kinds']} kind sets (one PCA each, all heads), switched in the browser"
        " (a Vega-Lite chart; the static figure below shows one view)."
    )
    return ClientSideView(spec, description)


# ---- view 4: notebook 02's q, k and v of one word (projections.plot_word_qkv) per word choice and layer ----


def word_qkv_view(model, choices, *, layers=None, defaults: dict | None = None) -> ClientSideView:
    """projections.plot_word_qkv for every (sentence, word) of `choices` and every encoder layer, switched in the
    browser: the word's whole-layer q, k and v (3 rows × d_model columns, no numbers written: 64 per row), on
    plot_word_qkv's diverging colour scale, symmetric about 0 for each choice (its largest |value|), the rows
    labelled with their lengths. A word that is not in its sentence is read alone (projections.word_qkv)."""
    from .projections import word_qkv

    choices = [(str(s), str(w)) for s, w in choices]
    if not choices:
        raise ValueError("word_qkv_view needs at least one (sentence, word)")
    layers = list(range(len(model.encoder))) if layers is None else [int(x) for x in layers]
    rows, lims, notes, labels = [], {}, {}, []
    for c, (sentence, word) in enumerate(choices):
        for li, layer in enumerate(layers):
            M, note = word_qkv(model, sentence, word, layer)
            m = M.double().numpy()
            if li == 0:
                labels.append(f"{word.strip().lower()} {note}")
            lims[f"{c}|{li}"] = round(float(abs(m).max()), DECIMALS)
            notes[f"{c}|{li}"] = f"encoder layer {layer}: q, k, v of {word.strip().lower()!r} {note}"
            for r, (kind, vec) in enumerate(zip("qkv", m)):
                norm = float((vec**2).sum() ** 0.5)
                values = [round(float(x), DECIMALS) for x in vec]
                rows.append({"word": c, "layer": li, "q": _label_key(r, f"{kind}  |{kind}|={norm:.1f}"), "w": values})
    d = len(rows[0]["w"])
    data = alt.Data(
        values=rows_tsv(["word", "layer", "q", "w"], rows),
        format=alt.DataFormat(type="tsv", parse={"word": "number", "layer": "number"}),
    )
    params = control_params({"word": labels, "layer": layers}, defaults)
    params += [alt.param(name="lims", value=lims), alt.param(name="notes", value=notes)]
    params.append(alt.param(name="dims", value=list(range(d))))
    choice = "word + '|' + layer"
    x = alt.X(
        "k:O",
        title=f"output feature of w_q, w_k, w_v (0..{d - 1})",
        axis=alt.Axis(values=list(range(0, d, 8)), labelAngle=0),
    )
    y = alt.Y("q:O", title=None, axis=alt.Axis(labelExpr="substring(datum.label, 3)"))
    chart = (
        alt.Chart(data)
        .mark_rect()
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "w:Q",
                title="value",
                scale=alt.Scale(
                    scheme="redblue", reverse=True, domain=alt.ExprRef(expr=f"[-lims[{choice}], lims[{choice}]]")
                ),
            ),
            tooltip=[
                alt.Tooltip("q:N", title="vector"),
                alt.Tooltip("k:O", title="feature"),
                alt.Tooltip("w:Q", format=".3f"),
            ],
        )
        .transform_filter("datum.word == word && datum.layer == layer")
        .transform_calculate(ws="split(datum.w, ' ')", k="dims")
        .transform_flatten(["ws", "k"])
        .transform_calculate(w="toNumber(datum.ws)")
        .properties(width=alt.Step(11), height=alt.Step(26))
        .add_params(*params)
        .properties(title=alt.Title(alt.ExprRef(expr=f"notes[{choice}]"), anchor="start"))
    )
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    description = (
        f"q, k and v of a word: interactive view of {_choices(word=labels, layer=layers)}, switched in the browser"
        " (a Vega-Lite chart; the static figure below shows one view)."
    )
    return ClientSideView(spec, description)


# ---- view 5: notebook 05's attention heatmap per sentence AND training seed (attention_view with a seed control) ----


def seed_attention_view(
    traces: dict,
    *,
    title: str = "Attention weights",
    places=PLACES,
    defaults: dict | None = None,
    decimals: int = 2,
) -> ClientSideView:
    """attention_view with a seed control: `traces` is {seed: {sentence label: Trace}} (the same sentences for
    every seed), switched in the browser by five controls: sentence, seed, place, layer and head (panels, "all"
    first). `decimals`: the weights embedded (2 by default, the places the cells show: 5 seeds cost 5× the bytes).
    `defaults`: {control: option index} (heatmap_view's)."""
    traces, places = {s: dict(t) for s, t in traces.items()}, _checked_places(places)
    if not traces or not all(traces.values()):
        raise ValueError("seed_attention_view needs at least one seed with at least one trace")
    sentences = list(next(iter(traces.values())))
    if any(list(t) != sentences for t in traces.values()):
        raise ValueError("every seed needs the same sentences, in the same order")
    by_key = {
        (s, d): by_sentence[name] for d, by_sentence in enumerate(traces.values()) for s, name in enumerate(sentences)
    }
    by_key = dict(sorted(by_key.items(), key=lambda kv: (kv[0][1], kv[0][0])))  # seed by seed, as before
    return _attention_heatmaps(
        {"controls": {"sentence": sentences, "seed": [str(s) for s in traces]}, "traces": by_key},
        places,
        title=title,
        defaults=defaults,
        decimals=decimals,
    )


# ---- view 6: notebook 03's scaling picture (stepwise.plot_scaling) per d and divisor ----


def scaling_view(
    ds=(4, 16, 64, 256), divisors=None, *, n_rows: int = 5, n_keys: int = 8, defaults: dict | None = None
) -> ClientSideView:
    """stepwise.plot_scaling for every d × divisor, switched in the browser: left, the softmax weights of the first
    `n_rows` random queries over `n_keys` random keys (viridis 0..1, weights written); right, the histogram of all
    2000 × n_keys scaled scores on plot_scaling's fixed axis (−40..40, 80 bins, values beyond clipped into the
    edge bins). The titles carry plot_scaling's numbers (mean max weight; score std, mean entropy)."""
    import numpy as np
    import torch

    from .stepwise import DIVISORS, _stats, divisor_value, random_scores

    ds, divisors = [int(d) for d in ds], list(DIVISORS if divisors is None else divisors)
    lim, bins = 40.0, 80
    edges = np.linspace(-lim, lim, bins + 1)
    w_rows, h_rows, left, right = [], [], {}, {}
    for di, d in enumerate(ds):
        for vi, div in enumerate(divisors):
            scores = random_scores(d, n_keys=n_keys) / divisor_value(d, div)
            weights = torch.softmax(scores, dim=-1)
            st = _stats(scores, d, divisor_value(d, div))
            key = f"{di}|{vi}"
            left[key] = f"softmax(q·k / {div}), d = {d}: mean max weight {st['mean_max_weight']:.2f}"
            right[key] = (
                f"std {st['score_std']:.2f}; mean entropy {st['mean_entropy']:.2f} of max"
                f" {st['uniform_entropy']:.2f} nats"
            )
            for i, row in enumerate(weights[:n_rows].tolist()):
                w_rows.append({"d": di, "divide_by": vi, "q": _label_key(i, f"q{i}"), "w": [round(x, 4) for x in row]})
            counts, _ = np.histogram(scores.flatten().clamp(-lim, lim).numpy(), bins=bins, range=(-lim, lim))
            h_rows.append({"d": di, "divide_by": vi, "q": "counts", "w": [int(c) for c in counts]})
    params = control_params({"d": ds, "divide_by": divisors}, defaults, captions={"divide_by": "divide q·k by"})
    params += [
        alt.param(name="leftTitles", value=left),
        alt.param(name="rightTitles", value=right),
        alt.param(name="keyLabels", value=[f"k{j}" for j in range(n_keys)]),
        alt.param(name="binStarts", value=[round(float(x), 6) for x in edges[:-1]]),
    ]
    choice = "d + '|' + divide_by"
    keep = "datum.d == d && datum.divide_by == divide_by"
    fmt = alt.DataFormat(type="tsv", parse={"d": "number", "divide_by": "number"})
    x = alt.X("k:O", title="key", sort=None, axis=alt.Axis(labelAngle=0))
    y = alt.Y("q:O", title="query", axis=alt.Axis(labelExpr="substring(datum.label, 3)"))
    weights_chart = (
        alt.layer(
            alt.Chart()
            .mark_rect()
            .encode(
                x=x,
                y=y,
                color=alt.Color("w:Q", title="attention weight", scale=alt.Scale(scheme="viridis", domain=[0, 1])),
                tooltip=[
                    alt.Tooltip("q:N", title="query"),
                    alt.Tooltip("k:N", title="key"),
                    alt.Tooltip("w:Q", format=".3f"),
                ],
            ),
            alt.Chart()
            .mark_text(fontSize=9)
            .encode(
                x=x,
                y=y,
                text=alt.Text("w:Q", format=".2f"),
                color=alt.condition("datum.w > 0.6", alt.value("black"), alt.value("white")),
            ),
            data=alt.Data(values=rows_tsv(["d", "divide_by", "q", "w"], w_rows), format=fmt),
        )
        .transform_filter(keep)
        .transform_calculate(ws="split(datum.w, ' ')", k="keyLabels")
        .transform_flatten(["ws", "k"])
        .transform_calculate(w="toNumber(datum.ws)")
        .properties(width=alt.Step(34), height=alt.Step(26), title=alt.Title(alt.ExprRef(expr=f"leftTitles[{choice}]")))
    )
    hist_chart = (
        alt.Chart(alt.Data(values=rows_tsv(["d", "divide_by", "q", "w"], h_rows), format=fmt))
        .mark_bar(color="#1f77b4", binSpacing=0)
        .encode(
            x=alt.X("start:Q", title="score q·k / divisor  (clipped to ±40)", scale=alt.Scale(domain=[-lim, lim])),
            x2="end:Q",
            y=alt.Y("count:Q", title=f"count (2000 queries × {n_keys} keys)"),
            y2=alt.datum(0),
            tooltip=[alt.Tooltip("start:Q", title="from"), alt.Tooltip("end:Q", title="to"), "count:Q"],
        )
        .transform_filter(keep)
        .transform_calculate(ws="split(datum.w, ' ')", start="binStarts")
        .transform_flatten(["ws", "start"])
        .transform_calculate(count="toNumber(datum.ws)", end=f"datum.start + {(2 * lim) / bins}")
        .properties(width=330, height=190, title=alt.Title(alt.ExprRef(expr=f"rightTitles[{choice}]")))
    )
    chart = alt.hconcat(weights_chart, hist_chart, spacing=40).add_params(*params)
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    description = (
        f"Scaling the scores: interactive view of {len(ds)} values of d × {len(divisors)} divisors, switched in the"
        " browser"
        " (a Vega-Lite chart; the static figure below shows one view)."
    )
    return ClientSideView(spec, description)


# ---- view 7: notebook 01's two sentence vectors (vectors.plot_pair) for every pair ----


def pair_view(vectors=None, *, defaults: dict | None = None) -> ClientSideView:
    """vectors.plot_pair for every (first, second) of the 2-D sentence vectors (default vectors.SENTENCES_2D),
    switched in the browser: every arrow from the origin, the other sentences faded grey, the first in Okabe-Ito
    vermillion and the second in sky blue, bold; the title gives their dot product, cosine and angle (precomputed
    with vectors.dot / vectors.cosine, as plot_pair's)."""
    import numpy as np

    from .vectors import SENTENCES_2D, cosine, dot

    vectors = dict(SENTENCES_2D if vectors is None else vectors)
    names = list(vectors)
    titles = {}
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            va, vb = vectors[a], vectors[b]
            angle = np.degrees(np.arccos(np.clip(cosine(va, vb), -1.0, 1.0)))
            titles[f"{i}|{j}"] = [
                f"{a} · {b}",
                f"dot = {dot(va, vb):.2f}, cosine = {cosine(va, vb):.2f} (angle {angle:.0f}°)",
            ]
    defaults = {"second": min(1, len(names) - 1), **(defaults or {})}
    params = control_params({"first": names, "second": names}, defaults)
    params.append(alt.param(name="titles", value=titles))
    rows = [{"i": i, "s": s, "x": float(v[0]), "y": float(v[1])} for i, (s, v) in enumerate(vectors.items())]
    colour = alt.Color("colour:N", scale=None)  # the second wins where first == second
    colour_expr = "datum.i == second ? '#56B4E9' : datum.i == first ? '#D55E00' : 'grey'"
    chosen = "datum.i == first || datum.i == second"
    opacity = alt.condition(chosen, alt.value(1.0), alt.value(0.35))
    lim = 1.05
    x = alt.X("x:Q", title="dimension 1 (food)", scale=alt.Scale(domain=[0, lim], nice=False))
    y = alt.Y("y:Q", title="dimension 2 (reading)", scale=alt.Scale(domain=[0, lim], nice=False))
    base = alt.Chart().encode(color=colour, opacity=opacity)
    shafts = base.mark_rule().encode(
        x=alt.X("x0:Q", scale=alt.Scale(domain=[0, lim], nice=False), title="dimension 1 (food)"),
        y=alt.Y("y0:Q", scale=alt.Scale(domain=[0, lim], nice=False), title="dimension 2 (reading)"),
        x2="x:Q",
        y2="y:Q",
        strokeWidth=alt.condition(chosen, alt.value(2.4), alt.value(1.0)),
    )
    heads = base.mark_point(shape="triangle-up", filled=True).encode(
        x=x,
        y=y,
        angle=alt.Angle("angle:Q", scale=None),
        size=alt.condition(chosen, alt.value(90), alt.value(40)),
        tooltip=[
            alt.Tooltip("s:N", title="sentence"),
            alt.Tooltip("x:Q", format=".2f"),
            alt.Tooltip("y:Q", format=".2f"),
        ],
    )
    labels = base.mark_text(align="left", baseline="bottom", dx=4, dy=-4).encode(
        x=x, y=y, text="s:N", size=alt.condition(chosen, alt.value(12), alt.value(10))
    )
    chart = (
        alt.layer(shafts, heads, labels, data=alt.Data(values=rows))
        .transform_calculate(x0="0", y0="0", angle="90 - atan2(datum.y, datum.x) * 180 / PI", colour=colour_expr)
        .properties(width=320, height=320, title=alt.Title(alt.ExprRef(expr="titles[first + '|' + second]")))
        .add_params(*params)
    )
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    description = (
        f"Two sentence vectors: interactive view of {len(names)} × {len(names)} pairs (first, second), switched in"
        " the browser (a Vega-Lite chart; the static figure below shows one view)."
    )
    return ClientSideView(spec, description)


# ---- the controls every view above binds ----


def control_params(controls: dict, defaults: dict | None = None, *, panels: str | None = None, captions=None) -> list:
    """One Vega-Lite param per control ({name: option labels}), its value the option's index, bound to radio
    buttons (up to 4 options) or a select. `defaults`: {name: index} shown first (default 0; an unknown name or
    index is refused). `panels`: the control drawn as panels gets a first option "all" (value -1), its default.
    `captions`: {name: what the control is called next to it} (default: its name)."""
    defaults, captions = dict(defaults or {}), dict(captions or {})
    if set(defaults) - set(controls):
        raise ValueError(f"defaults name no control: {sorted(set(defaults) - set(controls))}")
    params = []
    for name, opts in controls.items():
        labels = [str(x) for x in opts]
        options = list(range(len(labels)))
        if name == panels:
            labels, options = ["all", *labels], [-1, *options]
        value = defaults.get(name, options[0])
        if value not in options:
            raise ValueError(f"default {value} is no option of {name}: {options}")
        binding = alt.binding_radio if len(labels) <= 4 else alt.binding_select
        caption = captions.get(name, name) + " "
        params.append(alt.param(name=name, value=value, bind=binding(options=options, labels=labels, name=caption)))
    return params


# ---- view 4: notebook 08's five sentences in one projection (probing.plot_five) per places, layer, kinds ----

FIVE_SHAPES = ("circle", "triangle-up", "square", "diamond", "triangle-down")  # clustering.SENTENCE_MARKERS


def _spread_labels(P, meta, labs, *, char=0.035, line=0.085) -> list:
    """Where five_view writes each label (data units): at its point, or moved down one line at a time while it
    would overlap a label already placed in the same panel (place, kind). `char`, `line`: a character's width and
    a line's height as shares of the projection's x and y span (10 px text on a ~170 px panel)."""
    span_x = float(P[:, 0].max() - P[:, 0].min()) or 1.0
    span_y = float(P[:, 1].max() - P[:, 1].min()) or 1.0
    anchors = [(float(x), float(y)) for x, y in P]
    placed: dict = {}
    for i in (i for i in range(len(labs)) if labs[i]):
        x, y = anchors[i]
        boxes = placed.setdefault((meta["place"][i], meta["kind"][i]), [])
        width = len(labs[i]) * char * span_x
        while any(abs(y - by) < line * span_y and x < bx + bw and bx < x + width for bx, by, bw in boxes):
            y -= line * span_y
        boxes.append((x, y, width))
        anchors[i] = (x, y)
    return anchors


def five_view(
    traces,
    *,
    place_sets=(("encoder self", "cross"), ("encoder self",), ("decoder self",), ("cross",)),
    kind_sets=(("q", "k", "v", "x1"), ("q", "v", "out", "layer_out")),
    layers=None,
    label: str = "",
) -> ClientSideView:
    """probing.plot_five (head "all", PCA of unit vectors) for every place set, layer and kind set, switched in
    the browser: one panel row per place and one panel per kind, all in ONE shared projection per choice
    (precomputed with probing.five_projection); the words at the same position in all five sentences
    (probing.shared_mask) solid in the kind's colour (KIND_COLOURS), one marker shape per sentence, one label
    per word at its central point (kind sets of one length: a row of panels per place); faint: the kind's other tokens; light grey: the place's other kinds.
    One head and t-SNE stay with plot_five (a kernel)."""
    import numpy as np

    from .plotting import KIND_COLOURS
    from .probing import five_projection, shared_mask

    traces = list(traces)
    place_sets = [tuple(ps) for ps in place_sets]
    kind_sets = [tuple(ks) for ks in kind_sets]
    width = len(kind_sets[0])
    if any(len(ks) != width for ks in kind_sets):
        raise ValueError("every kind set needs as many kinds: one row of panels per place")
    n_layers = sum(1 for k in traces[0].keys() if k.startswith("encoder.") and k.endswith(".self.weights"))
    layers = list(range(n_layers)) if layers is None else list(layers)
    names = [" ".join(t.src_tokens) for t in traces]
    words: list[str] = []
    rows = []
    for pi, ps in enumerate(place_sets):
        for li, layer in enumerate(layers):
            for ki, ks in enumerate(kind_sets):
                P, meta = five_projection(traces, ps, layer, ks)
                shared = shared_mask(meta)
                labs = [""] * len(meta)
                for (_pl, _k, _w), idx in meta[shared].groupby(["place", "kind", "word"], sort=False).groups.items():
                    idx = list(idx)
                    pts = P[idx]
                    labs[idx[int(np.linalg.norm(pts - pts.mean(0), axis=1).argmin())]] = _w
                anchors = _spread_labels(P, meta, labs)
                for i, r in meta.iterrows():
                    if r["word"] not in words:
                        words.append(r["word"])
                    rows.append(
                        [
                            pi, li, ki, PLACES.index(r["place"]), VECTOR_KINDS.index(r["kind"]),
                            int(r["sentence_no"]), words.index(r["word"]), int(shared[i]),
                            f"{P[i, 0]:.{DECIMALS}f}", f"{P[i, 1]:.{DECIMALS}f}",
                            f"{anchors[i][0]:.{DECIMALS}f}", f"{anchors[i][1]:.{DECIMALS}f}", labs[i] or "-",
                        ]
                    )  # fmt: skip
    fields = ["places", "layer", "kinds", "place", "kind", "no", "word", "shared", "x", "y", "lx", "ly", "lab"]
    text = "\n".join(["\t".join(fields), *("\t".join(map(str, r)) for r in rows)])
    data = alt.Data(values=text, format=alt.DataFormat(type="tsv", parse={f: "number" for f in fields[:-1]}))
    controls = {
        "places": [" + ".join(PLACE_NAMES[p] for p in ps) for ps in place_sets],
        "layer": [str(x) for x in layers],
        "kinds": [", ".join(ks) for ks in kind_sets],
    }
    params = [
        alt.param(
            name=name,
            value=0,
            bind=(alt.binding_radio if len(labels) <= 4 else alt.binding_select)(
                options=list(range(len(labels))), labels=labels, name=name + " "
            ),
        )
        for name, labels in controls.items()
    ]
    params += [
        alt.param(name="optionLabels", value=controls),
        alt.param(name="kindNames", value=list(VECTOR_KINDS)),
        alt.param(name="placeNames", value=[PLACE_NAMES[p] for p in PLACES]),
        alt.param(name="kindLists", value=[list(ks) for ks in kind_sets]),
        alt.param(name="words", value=words),
    ]
    glyphs = ("●", "▲", "■", "◆", "▼")
    legend = "   ".join(f"{glyphs[i]} {i + 1} = {s}" for i, s in enumerate(names))
    line1 = (
        json.dumps(
            (f"{label}: " if label else "") + "The five sentences in one shared projection (all heads, PCA of unit"
            " vectors); colour = kind, marker = sentence; "
        )
        + " + 'layer ' + optionLabels.layer[layer]"
    )
    line2 = json.dumps("solid and labelled: the words that sit at the same position in all five")
    title_expr = f"[{line1}, {line2}, {json.dumps(legend)}]"
    kinds_all = list(VECTOR_KINDS)
    colour = alt.Color(
        "kindName:N", scale=alt.Scale(domain=kinds_all, range=[KIND_COLOURS[k] for k in kinds_all]), legend=None
    )
    base = alt.Chart().encode(
        x=alt.X("x:Q", title="PCA of unit vectors 1", axis=alt.Axis(grid=False)),
        y=alt.Y("y:Q", title="PCA of unit vectors 2", axis=alt.Axis(grid=False)),
    )
    tip = [alt.Tooltip("word:N"), alt.Tooltip("kindName:N", title="kind"), alt.Tooltip("sentence:N")]
    own = "datum.kindName == datum.panel"
    grey = base.mark_circle(size=10, color="#cccccc", opacity=1).transform_filter(f"!({own})")
    faint = (
        base.mark_circle(size=14, opacity=0.3).encode(color=colour, tooltip=tip)
        .transform_filter(f"{own} && !datum.shared")
    )  # fmt: skip
    solid = (
        base.mark_point(filled=True, size=40, stroke="black", strokeWidth=0.4, opacity=0.85)
        .encode(
            color=colour,
            shape=alt.Shape("no:N", scale=alt.Scale(domain=list(range(1, len(names) + 1)), range=list(FIVE_SHAPES[: len(names)])), legend=None),
            tooltip=tip,
        )
        .transform_filter(f"{own} && datum.shared")
    )  # fmt: skip
    texts = (
        base.mark_text(align="left", dx=6, dy=-6, fontSize=10)
        .encode(
            x=alt.X("lx:Q", title="PCA of unit vectors 1", axis=alt.Axis(grid=False)),
            y=alt.Y("ly:Q", title="PCA of unit vectors 2", axis=alt.Axis(grid=False)),
            text="lab:N",
        )  # _spread_labels' anchors: no two labels piled
        .transform_filter(f"{own} && datum.shared && datum.lab != '-'")
    )  # fmt: skip
    leaders = (  # a thin line from a point to its label where _spread_labels moved the label down
        base.mark_rule(color="#555555", strokeWidth=0.6)
        .encode(x2="lx:Q", y2="ly:Q")
        .transform_filter(f"{own} && datum.shared && datum.lab != '-' && datum.ly != datum.y")
    )
    chart = (
        alt.layer(grey, faint, solid, leaders, texts, data=data)
        .transform_filter("datum.places == places && datum.layer == layer && datum.kinds == kinds")
        .transform_calculate(
            kindName="kindNames[datum.kind]",
            placeName="placeNames[datum.place]",
            word="words[datum.word]",
            sentence=f"{json.dumps(names)}[datum.no - 1]",
            panels="kindLists[kinds]",
        )
        .transform_flatten(["panels"], as_=["panel"])
        .transform_calculate(
            panelNo="datum.place * 10 + indexof(kindLists[kinds], datum.panel)",
            panelName="datum.placeName + ', layer ' + optionLabels.layer[layer] + ': ' + datum.panel",
        )
        .properties(width=190, height=170)
        .facet(  # one wrapped facet, not rows x columns: a row x column facet keeps the old rows when places change
            facet=alt.Facet("panelName:N", title=None, sort=alt.EncodingSortField("panelNo", op="min"), header=alt.Header(labelFontSize=11)),
            columns=width,
        )
        .add_params(*params)
        .properties(title=alt.Title(alt.ExprRef(expr=title_expr), anchor="start"))
    )  # fmt: skip
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    n = {k: len(v) for k, v in controls.items()}
    description = (
        f"The five sentences in one projection: interactive view of {n['places']} place sets × {n['layer']} layers"
        f" × {n['kinds']} kind sets (one PCA each, all heads), switched in the browser (a Vega-Lite chart; the"
        " static figure below shows one view)."
    )
    return ClientSideView(spec, description)
