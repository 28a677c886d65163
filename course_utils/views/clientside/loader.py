"""The script in a browser view's text/html output (output 2, `base.view_html`): it draws the view's spec with
vega-embed where JupyterLab has not drawn it already, loading the three Vega files first.

Where the files come from, in order, for each of them (`VEGA_FILES`, from the npm packages `NPM_PACKAGES`):

       _static/vega/vega.min.js         npm vega@5.33.0        build/vega.min.js
       _static/vega/vega-lite.min.js    npm vega-lite@5.20.1   build/vega-lite.min.js  (Altair 5.5.0's version)
       _static/vega/vega-embed.min.js   npm vega-embed@6.29.0  build/vega-embed.min.js

1. the path relative to the page (`VEGA_STATIC_DIR`): `make html` copies the files there, so the exported pages
   draw offline;
2. the jsDelivr CDN, only where the local file fails to load: a saved notebook opened outside the course's own
   pages (nbviewer, a plain `jupyter nbconvert --to html`) has no `_static/`. That page is on the web already.

The course itself never reaches the CDN: in JupyterLab (offline, trusted or not) the script returns at its first
lines because JupyterLab drew output 1 itself, and the exported pages find their local copies
(tests/test_html_export.py and benchmarks/bench_browser.py check both with no network). The CDN addresses are part
of every committed client-side output (nbval compares them byte for byte), so changing them means re-executing the
notebooks. The UMD bundles are loaded with require.js's `define.amd` hidden, so they set `window.vega*` globals on
nbconvert's pages (which load require.js). Where no file loads, the div says so in one sentence.
"""

from __future__ import annotations

import json

VEGA_STATIC_DIR = "_static/vega/"  # relative to an exported page
VEGA_FILES = {  # global the bundle defines -> (file under VEGA_STATIC_DIR, CDN url)
    "vega": ("vega.min.js", "https://cdn.jsdelivr.net/npm/vega@5.33.0/build/vega.min.js"),
    "vegaLite": ("vega-lite.min.js", "https://cdn.jsdelivr.net/npm/vega-lite@5.20.1/build/vega-lite.min.js"),
    "vegaEmbed": ("vega-embed.min.js", "https://cdn.jsdelivr.net/npm/vega-embed@6.29.0/build/vega-embed.min.js"),
}
NPM_PACKAGES = ("vega@5.33.0", "vega-lite@5.20.1", "vega-embed@6.29.0")  # where the three files come from


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


def loader_script(element_id: str, spec_text: str) -> str:
    """The JavaScript that draws the spec (`spec_text`: JSON, with "</" already escaped) into the element
    `element_id`, loading the Vega files from `VEGA_STATIC_DIR` and, where one fails, from the CDN.

    Used by base.view_html: output 2 of every browser view (notebooks 01-10).
    """
    files = [[name, VEGA_STATIC_DIR + local, cdn] for name, (local, cdn) in VEGA_FILES.items()]
    return _SCRIPT % {"id": element_id, "spec": spec_text, "files": json.dumps(files)}
