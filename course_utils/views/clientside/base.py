"""Client-side views: the data for every choice is embedded once in the output, and the controls (Vega-Lite
params bound to select/radio inputs) filter it in the browser, with no kernel.

    from course_utils.views.clientside.attention import attention_view
    from course_utils.views.clientside.word_order import word_order_view
    attention_view({sentence: run_with_trace(model, sentence) for sentence in sentences})  # last line of a cell
    word_order_view({pe: word_order_traces(load_standard_model(pe).model) for pe in PES})

One view per notebook widget whose choices are finite, each in its own module of views/clientside/: pair_view
(01), word_qkv_view (02), scaling_view (03), attention_view (04, 09, 10), seed_attention_view (05), word_path_view
(06), word_order_view (07), five_view (08). This module holds what they share: the two outputs (`ClientSideView`),
the embedded data (`rows_tsv`) and the controls (`control_params`).

`heatmap_view` (views.clientside.heatmap) draws any word-labelled heatmap whose choices are finite
(views.heatmaps.heatmap's look); the two views above are built on it (views.heatmaps.plot_attention of notebooks
04, 09, 10; views.probing.plot_word_order of notebook 07). The static fallback cell under a view stays: it is what
GitHub shows and what nbval compares as a figure.

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
`DECIMALS` places (heatmap_view: more where that would change a written annotation, `embedded_value`) and travel
as one TSV string, which keeps a view small (`ClientSideView.nbytes`: 52 kB for attention_view of 5 sentences,
91 kB for word_order_view of 3 encodings; both outputs together).
"""

from __future__ import annotations

import hashlib
import json

import altair as alt

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
    """The spec as compact JSON with sorted keys: the same spec gives the same bytes.

    Used by view_id and view_html, for every browser view (notebooks 01-10).
    """
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def view_id(spec: dict) -> str:
    """A deterministic element id for the view: 'qkv-view-' + 12 hex digits of the spec's sha256.

    Used by view_html and ClientSideView, for every browser view (notebooks 01-10).
    """
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
    """The text/html of a view: a div with a deterministic id and the script that draws `spec` into it.

    Used by ClientSideView: output 2 of every browser view (notebooks 01-10).
    """
    files = [[name, VEGA_STATIC_DIR + local, cdn] for name, (local, cdn) in VEGA_FILES.items()]
    vid = view_id(spec)
    # "</" cannot appear inside a script element: escape it in the JSON (valid JSON either way)
    js = _SCRIPT % {"id": vid, "spec": spec_json(spec).replace("</", "<\\/"), "files": json.dumps(files)}
    return f'<div id="{vid}" class="qkv-clientside"></div>\n<script type="text/javascript">\n{js}\n</script>'


class ClientSideView:
    """A Vega-Lite spec with all its data, shown as the two outputs the module docstring describes.

    Used by every view of views.clientside (notebooks 01-10).
    """

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
                "text/plain": "(If no view shows above, the figure below shows its first choice.)",
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


SWITCHED = "switched in the browser (the figure below shows one view)."


def chart_view(chart, what: str) -> ClientSideView:
    """The view of an Altair chart that resizes with its output area. Its one-sentence description is `what`
    (e.g. "Two sentence vectors: interactive view of 6 × 6 pairs (first, second)") followed by SWITCHED.
    Used by every view in this folder (notebooks 01-10)."""
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    return ClientSideView(spec, f"{what}, {SWITCHED}")


def label_key(i: int, word: str) -> str:
    """A row or column label that sorts by position `i` and shows `word`: "03 eat".

    Used by heatmap_view, word_qkv_view and scaling_view (notebooks 02-05, 07, 09, 10).
    """
    return f"{i:02d} {word}"  # sorts by position; the axis shows the word after the 3-character prefix


def rows_tsv(fields: list[str], rows: list[dict]) -> str:
    """Rows as one TSV string, the last field (the weights) space-separated: one JSON string in the notebook,
    not one line per number as nbformat's indented JSON would write a list.

    Used by heatmap_view, word_qkv_view and scaling_view (notebooks 02-05, 07, 09, 10).
    """
    lines = ["\t".join(fields)]
    for r in rows:
        lines.append("\t".join([*(str(r[f]) for f in fields[:-1]), " ".join(f"{x:g}" for x in r[fields[-1]])]))
    return "\n".join(lines)


def tsv_rows(text: str) -> list[dict]:
    """rows_tsv's rows read back: control indices as ints, `q` the row label, `w` the list of cell values.

    Used by tests/test_clientside.py and tests/test_widget_nb05.py, which read views (e.g. notebook 05's) back.
    """
    head, *lines = text.split("\n")
    rows = [dict(zip(head.split("\t"), line.split("\t"))) for line in lines]
    return [
        {k: (v if k == "q" else [float(x) for x in v.split(" ")] if k == "w" else int(v)) for k, v in r.items()}
        for r in rows
    ]


# ---- the controls every view above binds ----


def control_params(controls: dict, defaults: dict | None = None, *, panels: str | None = None, captions=None) -> list:
    """One Vega-Lite param per control ({name: option labels}), its value the option's index, bound to radio
    buttons (up to 4 options) or a select. `defaults`: {name: index} shown first (default 0; an unknown name or
    index is refused). `panels`: the control drawn as panels gets a first option "all" (value -1), its default.
    `captions`: {name: what the control is called next to it} (default: its name).

    Used by pair_view, word_qkv_view, scaling_view and heatmap_view (notebooks 01-05, 07, 09, 10).
    """
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
