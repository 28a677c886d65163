"""The display protocol of the client-side views: the data for every choice is embedded once in the output, and
the controls (Vega-Lite params bound to select/radio inputs) filter it in the browser, with no kernel.

    from course_utils.views.clientside.attention import attention_view
    from course_utils.views.clientside.word_order import word_order_view
    attention_view({sentence: run_with_trace(model, sentence) for sentence in sentences})  # last line of a cell
    word_order_view({pe: word_order_traces(load_standard_model(pe).model) for pe in PES})

One view per notebook widget whose choices are finite, each in its own module of views/clientside/: pair_view
(01), word_qkv_view (02), scaling_view (03), attention_view (04, 09, 10), seed_attention_view (05), word_path_view
(06), word_order_view (07), five_view (08). What they share is split by job: this module is what a view displays
(`ClientSideView`, its two outputs); `loader` is the script in output 2 that loads the Vega files; `tsv` is the
embedded data (`rows_tsv`); `controls` the params bound to inputs (`control_params`).

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
   stays empty in JupyterLab, trusted or not). Elsewhere it loads the Vega files (`loader`: the copies next to an
   exported page, the CDN only where those are missing) and draws. GitHub strips scripts: it shows the sentence
   of output 1 and the static fallback cell.

       _static/vega/vega.min.js         npm vega@5.33.0        build/vega.min.js
       _static/vega/vega-lite.min.js    npm vega-lite@5.20.1   build/vega-lite.min.js  (Altair 5.5.0's version)
       _static/vega/vega-embed.min.js   npm vega-embed@6.29.0  build/vega-embed.min.js

Every output is deterministic (same traces -> same bytes): no uuid, no timestamps; values are rounded to
`tsv.DECIMALS` places (heatmap_view: more where that would change a written annotation, `embedded_value`) and travel
as one TSV string, which keeps a view small (`ClientSideView.nbytes`: 52 kB for attention_view of 5 sentences,
91 kB for word_order_view of 3 encodings; both outputs together).
"""

from __future__ import annotations

import hashlib
import html
import json

import altair as alt

from course_utils.views.clientside.loader import loader_script

VEGALITE_MIME = "application/vnd.vegalite.v5+json"


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


def view_html(spec: dict) -> str:
    """The text/html of a view: a div with a deterministic id and the script that draws `spec` into it.

    Used by ClientSideView: output 2 of every browser view (notebooks 01-10).
    """
    vid = view_id(spec)
    # "</" cannot appear inside a script element: escape it in the JSON (valid JSON either way)
    js = loader_script(vid, spec_json(spec).replace("</", "<\\/"))
    # a screen reader announces the view by its description (vega-embed also labels the drawing with it)
    label = html.escape(spec.get("description", ""), quote=True)
    div = f'<div id="{vid}" class="qkv-clientside" role="figure" aria-label="{label}"></div>'
    return f'{div}\n<script type="text/javascript">\n{js}\n</script>'


class ClientSideView:
    """A Vega-Lite spec with all its data, shown as the two outputs the module docstring describes.

    Used by every view of views.clientside (notebooks 01-10).
    """

    def __init__(self, spec: dict, description: str):
        self.spec = {**spec, "description": description}  # Vega-Lite's description: the drawing's aria-label
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


# ---- a view of an Altair chart ----


SWITCHED = "switched in the browser (the figure below shows one view)."


def chart_view(chart, what: str) -> ClientSideView:
    """The view of an Altair chart that resizes with its output area. Its one-sentence description is `what`
    (e.g. "Two sentence vectors: interactive view of 6 × 6 pairs (first, second)") followed by SWITCHED.
    Used by every view in this folder (notebooks 01-10)."""
    spec = chart.configure(autosize=alt.AutoSizeParams(type="pad", resize=True)).to_dict()
    return ClientSideView(spec, f"{what}, {SWITCHED}")
