"""Client-side views: the data for every choice is embedded once in the output, and the controls (Vega-Lite
params bound to select/radio inputs) filter it in the browser, with no kernel.

    from course_utils.clientside import attention_view
    attention_view({"i like to eat": trace_a, "the cat eats": trace_b})   # last line of a cell

Built with Altair 5 (Vega-Lite 5: JupyterLab 4.6.6 renders Vega-Lite 3, 4 and 5 with its own vega 5.33 /
vega-lite 5.6.1 / vega-embed 6.21 bundle, even in an untrusted notebook).

What a view displays: TWO outputs (`ClientSideView._ipython_display_`), because JupyterLab prefers text/html
(rank 50) to the Vega-Lite mimetype (rank 57) in one bundle, and would then show the html's script-less sanitized
copy (untrusted) or need the network (trusted):

1. `application/vnd.vegalite.v5+json` (the spec) + `text/plain` (one sentence saying what the view is).
   JupyterLab draws the spec itself, also from the saved output before the notebook is trusted or run.
   nbconvert and nbviewer do not render this mimetype: they print the sentence, a caption for output 2.
2. `text/html` + `text/plain`: a `<div>` with a deterministic id (`qkv-view-` + the first 12 hex digits of the
   spec's sha256) and a script that draws the same spec with vega-embed. The script does nothing where
   JupyterLab already drew output 1 (a `.jp-RenderedVegaCommon5` in the same output area). It loads, in order,
   from these paths relative to the page, and from the jsDelivr CDN where a local file fails to load:

       _static/vega/vega.min.js         npm vega@5.33.0        build/vega.min.js
       _static/vega/vega-lite.min.js    npm vega-lite@5.20.1   build/vega-lite.min.js  (Altair 5.5.0's version)
       _static/vega/vega-embed.min.js   npm vega-embed@6.29.0  build/vega-embed.min.js

   (`VEGA_FILES`). `make html` copies them next to the pages (offline); nbviewer has no `_static/` and takes
   the CDN. The UMD bundles are loaded with require.js's `define` hidden, so they set `window.vega*` globals.
   GitHub strips scripts: it shows the sentences and the notebook's static fallback cell under the view.

Every output is deterministic (same traces -> same bytes): no uuid, no timestamps; weights are rounded to
`DECIMALS` places, which also keeps a view small (`ClientSideView.nbytes`).
"""

from __future__ import annotations

import hashlib
import json

import altair as alt

from .plotting import decoder_row_labels
from .tracing import PLACE_NAMES, PLACES, trace_key

VEGALITE_MIME = "application/vnd.vegalite.v5+json"
DECIMALS = 3  # weights in the embedded data; the annotations show 2
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
      var s = document.createElement("script"), amd = window.define;
      window.define = undefined;  // require.js on the page: let the UMD bundle set its global
      s.src = urls[0];
      s.onload = function () { window.define = amd; resolve(); };
      s.onerror = function () {
        window.define = amd;
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


# ---- view 1: the attention heatmap (plotting.plot_attention) for every sentence, place, layer and head ----


def _label_key(i: int, word: str) -> str:
    return f"{i:02d} {word}"  # sorts by position; the axis shows the word after the 3-character prefix


TSV_FIELDS = ("s", "p", "l", "h", "q", "w")  # sentence, place, layer, head (indices), query label, weights
TSV_FORMAT = alt.DataFormat(type="tsv", parse={"s": "number", "p": "number", "l": "number", "h": "number"})


def rows_tsv(rows: list[dict]) -> str:
    """The rows as one TSV string (weights space-separated): one JSON string in the notebook, not one line per
    number as nbformat's indented JSON would write a list."""
    lines = ["\t".join(TSV_FIELDS)]
    for r in rows:
        lines.append("\t".join([*(str(r[f]) for f in TSV_FIELDS[:5]), " ".join(f"{x:g}" for x in r["w"])]))
    return "\n".join(lines)


def tsv_rows(text: str) -> list[dict]:
    """rows_tsv's rows read back (tests)."""
    head, *lines = text.split("\n")
    rows = [dict(zip(head.split("\t"), line.split("\t"))) for line in lines]
    return [{**r, **{f: int(r[f]) for f in "splh"}, "w": [float(x) for x in r["w"].split(" ")]} for r in rows]


def attention_rows(traces: dict) -> tuple[list[dict], dict]:
    """Long-form rows for `attention_view`: one row per (sentence, place, layer, head, query position) with the
    query's label and the row of weights `w`; and the key labels per (sentence, place) (`keys["s|p"]`).
    Labels are as plot_attention writes them: decoder rows 'input → word it produces'."""
    rows, keys = [], {}
    for s, trace in enumerate(traces.values()):
        for p, place in enumerate(PLACES):
            layer = 0
            while trace_key(place, layer, "weights") in trace.keys():
                key = trace_key(place, layer, "weights")
                w = trace[key]
                queries = trace.query_tokens(key)
                if place != "encoder self":
                    queries = decoder_row_labels(queries, trace.tgt_tokens[1:])
                keys[f"{s}|{p}"] = [_label_key(k, t) for k, t in enumerate(trace.key_tokens(key))]
                for h in range(w.shape[0]):
                    for q, label in enumerate(queries):
                        weights = [round(float(x), DECIMALS) for x in w[h, q]]
                        rows.append({"s": s, "p": p, "l": layer, "h": h, "q": _label_key(q, label), "w": weights})
                layer += 1
    return rows, keys


def attention_view(traces: dict, *, title: str = "Attention weights") -> ClientSideView:
    """The course's attention heatmap (plotting.plot_attention: query rows × key columns, word labels on both
    axes, one colour scale 0..1, weights written in the cells, one panel per head) for every sentence, place,
    layer and head of `traces` ({sentence label: Trace}), switched in the browser by four controls."""
    traces = dict(traces)
    if not traces:
        raise ValueError("attention_view needs at least one trace")
    rows, keys = attention_rows(traces)
    n_layers = 1 + max(r["l"] for r in rows)
    n_heads = 1 + max(r["h"] for r in rows)
    sentence = alt.param(
        name="sentence",
        value=0,
        bind=alt.binding_select(options=list(range(len(traces))), labels=list(traces), name="sentence "),
    )
    place = alt.param(
        name="place",
        value=0,
        bind=alt.binding_radio(
            options=list(range(len(PLACES))), labels=[PLACE_NAMES[p] for p in PLACES], name="place "
        ),
    )
    layer = alt.param(name="layer", value=0, bind=alt.binding_radio(options=list(range(n_layers)), name="layer "))
    head = alt.param(
        name="head",
        value=-1,
        bind=alt.binding_radio(options=[-1, *range(n_heads)], labels=["all", *map(str, range(n_heads))], name="head "),
    )
    base = alt.Chart()
    x = alt.X("k:O", title="key", axis=alt.Axis(labelExpr="substring(datum.label, 3)", labelAngle=-45))
    y = alt.Y("q:O", title="query", axis=alt.Axis(labelExpr="substring(datum.label, 3)"))
    cells = base.mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=x,
        y=y,
        color=alt.Color("w:Q", title="attention weight", scale=alt.Scale(scheme="viridis", domain=[0, 1])),
        tooltip=[alt.Tooltip("q:N", title="query"), alt.Tooltip("k:N", title="key"), alt.Tooltip("w:Q", format=".3f")],
    )
    numbers = base.mark_text(fontSize=9).encode(
        x=x,
        y=y,
        text=alt.Text("w:Q", format=".2f"),
        color=alt.condition("datum.w > 0.5", alt.value("black"), alt.value("white")),
    )
    key_labels = alt.param(name="keyLabels", value=keys)
    place_names = alt.param(name="placeNames", value=[PLACE_NAMES[p] for p in PLACES])
    chart = (
        alt.layer(cells, numbers, data=alt.Data(values=rows_tsv(rows), format=TSV_FORMAT))
        .transform_filter(
            "datum.s == sentence && datum.p == place && datum.l == layer && (head < 0 || datum.h == head)"
        )
        .transform_calculate(
            k="keyLabels[datum.s + '|' + datum.p]", ws="split(datum.w, ' ')", panel="'head ' + datum.h"
        )
        .transform_flatten(["ws", "k"])
        .transform_calculate(w="toNumber(datum.ws)")
        .properties(width=alt.Step(26), height=alt.Step(20))
        .facet(column=alt.Column("panel:N", title=None, header=alt.Header(labelFontSize=11)))
        .add_params(sentence, place, layer, head, key_labels, place_names)
        .properties(
            title=alt.Title(
                alt.ExprRef(
                    expr=f"{json.dumps(title)} + ': layer ' + layer + ', ' + placeNames[place]"
                    " + ' (query rows: ' + (place == 0 ? 'English' : 'German input → word it produces')"
                    " + '; key columns: ' + (place == 1 ? 'German input' : 'English') + ')'"
                ),
                anchor="start",
            )
        )
    )
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    n = len(traces)
    description = (
        f"{title}: interactive view of {n} sentence{'s' * (n != 1)} × {len(PLACES)} places × {n_layers} layers"
        f" × {n_heads} heads, switched in the browser (a Vega-Lite chart; the static figure below shows one view)."
    )
    return ClientSideView(spec, description)
