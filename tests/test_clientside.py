"""course_utils.clientside: every choice's data embedded once, controls listing every choice, deterministic
outputs, and a headless-Chromium check that changing a control redraws the view with no kernel."""

import hashlib
import json
import math
import re
import tarfile
from pathlib import Path

import numpy as np
import pytest
from clientside_rows import tsv_rows  # tests/ is on sys.path under pytest
from conftest import missing_tool

from course_utils.core.data import load_probes
from course_utils.core.places import PLACE_NAMES, PLACES, trace_key
from course_utils.core.pretrained import load_minilm
from course_utils.measures.clustering import PAIR
from course_utils.measures.probing import five_projection, five_sentences
from course_utils.measures.qkv import word_qkv
from course_utils.trace.pretrained import trace_sentence
from course_utils.trace.tracing import run_with_trace
from course_utils.views.clientside.attention import attention_view
from course_utils.views.clientside.base import VEGALITE_MIME, spec_json, view_html
from course_utils.views.clientside.five import five_view
from course_utils.views.clientside.loader import NPM_PACKAGES, VEGA_FILES, VEGA_STATIC_DIR
from course_utils.views.clientside.seed_attention import seed_attention_view
from course_utils.views.clientside.tsv import DECIMALS
from course_utils.views.clientside.word_path import word_path_view

ROOT = Path(__file__).resolve().parent.parent
NPM_CACHE = ROOT / "build" / "npm"  # where tools/export_html.py keeps the pinned npm tarballs (`make html`)


@pytest.fixture(scope="module")
def traces(shipped_model):
    sentences = list(load_probes("five_sentences"))[:3]
    return {s: run_with_trace(shipped_model, s) for s in sentences}


@pytest.fixture(scope="module")
def view(traces):
    return attention_view(traces)


def params(spec) -> dict:
    return {p["name"]: p for p in spec["params"]}


# ---- independent references for the views' numbers (numpy on the traces' tensors; no course_utils measure)


def heads_joined(t) -> np.ndarray:
    """A traced tensor as one row per token: (H, T, dh) -> (T, H*dh), heads side by side; (T, d) as it is."""
    t = t.double().numpy()
    return t.transpose(1, 0, 2).reshape(t.shape[1], -1) if t.ndim == 3 else t


def cosines_by_hand(A, B) -> np.ndarray:
    return (A @ B.T) / (np.sqrt((A * A).sum(1))[:, None] * np.sqrt((B * B).sum(1))[None, :])


def pca_by_svd(X, k: int = 2) -> np.ndarray:
    centred = X - X.mean(0)
    return centred @ np.linalg.svd(centred, full_matrices=False)[2][:k].T


def assert_equal_up_to_sign(got, ref, tol: float) -> None:
    """Each column of got equals ref's column or its negative (a PCA axis has no sign of its own)."""
    for j in range(ref.shape[1]):
        err = min(np.abs(got[:, j] - ref[:, j]).max(), np.abs(got[:, j] + ref[:, j]).max())
        assert err <= tol, f"axis {j} differs from the PCA by hand by {err:.3g}"


def row_tokens(trace, place: str, kind: str) -> list[str]:
    """English rows: encoder self-attention, and cross-attention's keys and values; German rows otherwise."""
    english = place == "encoder self" or (place == "cross" and kind in ("k", "v"))
    return trace.src_tokens if english else trace.tgt_tokens


def n_layers(trace) -> int:
    return sum(1 for k in trace.keys() if k.startswith("encoder.") and k.endswith(".self.weights"))


def test_spec_embeds_every_choice_once(traces, view):
    rows = tsv_rows(view.spec["data"]["values"])
    expected = {}
    for s, trace in enumerate(traces.values()):
        for p, place in enumerate(PLACES):
            for layer in range(n_layers(trace)):
                w = trace[trace_key(place, layer, "weights")]
                for h in range(w.shape[0]):
                    expected[(s, p, layer, h)] = w[h]
    seen = {}
    for r in rows:
        seen.setdefault((r["sentence"], r["place"], r["layer"], r["head"]), []).append(r["w"])
    assert seen.keys() == expected.keys()  # every sentence x place x layer x head, none twice
    for choice, w in expected.items():
        assert len(seen[choice]) == w.shape[0]  # one row per query
        assert all(len(row) == w.shape[1] for row in seen[choice])  # one weight per key
        got = [x for row in seen[choice] for x in row]
        want = w.flatten().tolist()
        assert max(abs(a - b) for a, b in zip(got, want)) <= 0.5 * 10**-DECIMALS + 1e-9
    assert len(rows) == sum(len(rs) for rs in seen.values())


def test_word_labels_on_both_axes(traces, view):
    keys = params(view.spec)["colLabels"]["value"]  # "sentence|place|layer|head" -> key labels
    trace = next(iter(traces.values()))
    assert [k[3:] for k in keys["0|0|0|0"]] == trace.src_tokens  # encoder self: English keys
    assert [k[3:] for k in keys["0|1|1|1"]] == trace.tgt_tokens  # decoder self: German input keys
    assert [k[3:] for k in keys["0|2|0|1"]] == trace.src_tokens  # cross: English keys
    queries = [
        r["q"][3:]
        for r in tsv_rows(view.spec["data"]["values"])
        if (r["sentence"], r["place"], r["layer"], r["head"]) == (0, 1, 0, 0)
    ]
    assert queries[0] == f"<bos> → {trace.tgt_tokens[1]}"  # decoder rows as plot_attention labels them
    spec = json.dumps(view.spec)
    assert '"labelExpr": "substring(datum.label, 3)"' in spec  # the axes show the words, not the sort prefix


def test_controls_list_every_choice(traces, view):
    p = params(view.spec)
    trace = next(iter(traces.values()))
    heads = trace[trace_key("encoder self", 0, "weights")].shape[0]
    assert p["sentence"]["bind"]["options"] == list(range(len(traces)))
    assert p["sentence"]["bind"]["labels"] == list(traces)
    assert p["place"]["bind"]["labels"] == [PLACE_NAMES[x] for x in PLACES]
    assert p["layer"]["bind"]["options"] == list(range(n_layers(trace)))
    assert p["head"]["bind"]["options"] == [-1, *range(heads)]
    assert p["head"]["bind"]["labels"][0] == "all"
    assert view.spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v5")  # what JupyterLab 4.6 draws


def test_outputs_are_deterministic_and_carry_no_random_ids(traces, view):
    again = attention_view(traces)  # built later in the same process: Altair's counters must not leak in
    assert json.dumps(again.bundles()) == json.dumps(view.bundles())
    digest = hashlib.sha256(spec_json(view.spec).encode()).hexdigest()[:12]
    html = view.bundles()[1]["text/html"]
    assert view.id == f"qkv-view-{digest}"
    assert re.findall(r'id="([^"]+)"', html) == [view.id]
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-|uuid|Math\.random|Date\.now|altair-viz-|view_\d|param_\d", html)


def test_bundles_say_plainly_what_they_are(traces, view):
    first, second = view.bundles()
    assert set(first) == {VEGALITE_MIME, "text/plain"}  # no text/html here: JupyterLab would prefer it
    assert set(second) == {"text/html", "text/plain"}
    text = first["text/plain"]
    assert text.startswith("Attention weights: interactive view of 3 sentences × 3 places × 2 layers")
    assert "<" not in text and "object" not in text and "Chart" not in text  # a sentence, never a repr
    assert repr(view) == text
    assert view.nbytes < 60_000  # 3 sentences; both outputs together
    # a screen reader: the spec's description (vega-embed's aria-label of the drawing) and the div's label say it too
    assert view.spec["description"] == text
    assert f'role="figure" aria-label="{text}"' in second["text/html"]


def test_view_html_loads_local_files_then_the_cdn():
    html = view_html({"mark": "point"})
    for name, (local, cdn) in VEGA_FILES.items():
        assert f'"{VEGA_STATIC_DIR}{local}"' in html and cdn in html and f'["{name}", ' in html
    assert html.count("<script") == 1 and "</script>" not in html.split("<script", 1)[1][:-9]


def test_one_output_per_bundle_in_a_notebook(view, monkeypatch):
    published = []
    monkeypatch.setattr("IPython.display.publish_display_data", lambda data, **kw: published.append(data))
    view._ipython_display_()
    assert published == view.bundles()


# ---- in a browser ----


def npm_files(requirejs: bool = False) -> dict[str, bytes]:
    """{file name: bytes} of the three vega files (and require.js), read from the npm tarballs `make html`
    caches in build/npm/ (tools/export_html.py)."""
    tarballs = [NPM_CACHE / (spec.replace("@", "-") + ".tgz") for spec in NPM_PACKAGES]
    wanted = {f"package/build/{local}" for local, _ in VEGA_FILES.values()}
    if requirejs:
        tarballs.append(NPM_CACHE / "requirejs-2.3.8.tgz")
        wanted.add("package/require.js")
    absent = [p.name for p in tarballs if not p.exists()]
    if absent:
        missing_tool(f"{', '.join(absent)} not in build/npm/: `make html` fetches them once")
    files = {}
    for tarball in tarballs:
        with tarfile.open(tarball) as tar:
            for member in tar.getmembers():
                if member.name in wanted:
                    files[Path(member.name).name] = tar.extractfile(member).read()
    return files


def page_with(tmp_path, html: str, *, requirejs: bool = False, static: bool = True) -> Path:
    """An exported-page stand-in: `html` in a body, the vega files under _static/vega/ unless not `static`,
    and require.js loaded first (as in nbconvert's pages) if `requirejs`."""
    head = ""
    if static or requirejs:
        out = tmp_path / VEGA_STATIC_DIR
        out.mkdir(parents=True, exist_ok=True)
        for name, data in npm_files(requirejs).items():
            if static or name == "require.js":
                (out / name).write_bytes(data)
        if requirejs:
            head = f'<script src="{VEGA_STATIC_DIR}require.js"></script>'
    page = tmp_path / "page.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'>{head}</head><body>{html}</body></html>")
    return page


def open_offline(browser, path: Path, cdn: dict[str, bytes] | None = None):
    """A page showing `path` with every request but file: and data: aborted; URLs in `cdn` are answered with
    their bytes (a stand-in for the CDN nbviewer's pages load from)."""
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    cdn = cdn or {}

    def handle(route):
        url = route.request.url
        if url in cdn:
            route.fulfill(status=200, body=cdn[url], content_type="text/javascript")
        elif url.startswith(("file:", "data:")):
            route.continue_()
        else:
            route.abort()

    page.route("**/*", handle)
    page.goto(path.as_uri())
    return page, errors


def drawing(page, vid: str) -> str:
    return page.inner_html(f"#{vid} svg")


@pytest.mark.parametrize("requirejs", [False, True], ids=["plain page", "page with require.js"])
def test_changing_a_control_redraws_the_view_offline(browser, tmp_path, view, requirejs):
    page, errors = open_offline(browser, page_with(tmp_path, view.bundles()[1]["text/html"], requirejs=requirejs))
    try:
        page.wait_for_selector(f"#{view.id} svg .mark-rect", state="attached", timeout=30_000)
        before = drawing(page, view.id)
        assert "apple" in before  # word labels drawn
        page.check("input[name=place][value='2']")  # cross-attention
        page.wait_for_function(f"document.querySelector('#{view.id} svg').innerHTML.includes('→')", timeout=10_000)
        after_place = drawing(page, view.id)
        assert after_place != before
        page.check(f"#{view.id} input[name=sentence][value='2']")  # 3 sentences: radio buttons
        page.wait_for_function(
            f"document.querySelector('#{view.id} svg').innerHTML !== {json.dumps(after_place)}", timeout=10_000
        )
        assert drawing(page, view.id) != after_place
        assert not errors
    finally:
        page.close()


def test_without_static_files_the_view_loads_from_the_cdn(browser, tmp_path, view):
    """nbviewer: the same page with no _static/ folder; the CDN's answers are the pinned files."""
    files = npm_files()
    cdn = {url: files[local] for local, url in VEGA_FILES.values()}
    page, errors = open_offline(browser, page_with(tmp_path, view.bundles()[1]["text/html"], static=False), cdn)
    try:
        page.wait_for_selector(f"#{view.id} svg .mark-rect", state="attached", timeout=30_000)
        before = drawing(page, view.id)
        page.check("input[name=layer][value='1']")
        page.wait_for_function(
            f"document.querySelector('#{view.id} svg').innerHTML !== {json.dumps(before)}", timeout=10_000
        )
        assert not errors
    finally:
        page.close()


def test_without_its_scripts_the_view_says_so_in_one_sentence(browser, tmp_path):
    html = view_html({"mark": "point", "data": {"values": [{"a": 1}]}, "encoding": {"x": {"field": "a"}}})
    page, _ = open_offline(browser, page_with(tmp_path, html, static=False))  # no _static/, CDN blocked
    try:
        page.wait_for_function("document.querySelector('.qkv-clientside').textContent.length > 0", timeout=30_000)
        text = page.inner_text(".qkv-clientside")
        assert text.startswith("This interactive view could not load its scripts") and "figure below" in text
    finally:
        page.close()


def test_the_html_copy_stays_out_of_the_way_where_jupyterlab_drew_the_spec(browser, tmp_path):
    html = view_html({"mark": "point"})
    area = f'<div class="jp-OutputArea"><div class="jp-RenderedVegaCommon5"></div><div>{html}</div></div>'
    page, errors = open_offline(browser, page_with(tmp_path, area))
    try:
        page.wait_for_timeout(500)
        assert page.inner_html(".qkv-clientside") == "" and not errors
        assert page.evaluate("window.__qkvVega === undefined")  # not even loaded
    finally:
        page.close()


# ---- view 2: notebook 07's word-order table ----


@pytest.fixture(scope="module")
def order_pairs():
    from course_utils.measures.probing import word_order_traces
    from course_utils.training.zoo import load_standard_model

    return {pe: word_order_traces(load_standard_model(pe).model) for pe in ("learned", "none")}


def check_word_order_view(view, order_pairs) -> None:
    """Every cell of every choice is 1 − cos (clipped to 0..2) of the two traces' vectors, to 4 decimals."""
    from course_utils.core.places import VECTOR_KINDS

    rows = tsv_rows(view.spec["data"]["values"])
    for e, (a, b) in enumerate(order_pairs.values()):
        for layer in range(2):
            for k, kind in enumerate(VECTOR_KINDS):
                for p, place in enumerate(PLACES):
                    key = trace_key(place, layer, kind)
                    want = np.clip(1 - cosines_by_hand(heads_joined(a[key]), heads_joined(b[key])), 0, 2)
                    got = [
                        r["w"] for r in rows if (r["encoding"], r["layer"], r["vector"], r["place"]) == (e, layer, k, p)
                    ]
                    assert np.abs(np.array(got) - want).max() <= 0.5e-4 + 1e-12, key  # 4 decimals


def test_word_order_view_embeds_every_choice(order_pairs):
    from course_utils.core.places import VECTOR_KINDS
    from course_utils.views.clientside.word_order import word_order_view

    view = word_order_view(order_pairs)
    p = params(view.spec)
    assert p["encoding"]["bind"]["labels"] == ["learned", "none"]
    assert p["vector"]["bind"]["labels"] == list(VECTOR_KINDS)
    assert p["place"]["bind"]["labels"] == [PLACE_NAMES[x] for x in PLACES]
    rows = tsv_rows(view.spec["data"]["values"])
    choices = {(r["encoding"], r["layer"], r["vector"], r["place"]) for r in rows}
    assert len(choices) == 2 * 2 * len(VECTOR_KINDS) * len(PLACES)
    check_word_order_view(view, order_pairs)
    assert "log" in json.dumps(view.spec)  # plot_word_order's log colour scale
    assert view.description.startswith(
        "1 − cosine between the two word orders' vectors: interactive view of 2 encodings"
    )
    assert json.dumps(word_order_view(order_pairs).bundles()) == json.dumps(view.bundles())


def test_word_order_view_redraws_offline(browser, tmp_path, order_pairs):
    from course_utils.views.clientside.word_order import word_order_view

    view = word_order_view(order_pairs)
    redraws_offline(browser, tmp_path, view, [], "vector", "5", "layer_out")


# ---- attention_view's places= and defaults= (notebook 10: a pretrained encoder's traces, encoder self only) ----


@pytest.fixture(scope="module")
def minilm_traces():
    model = load_minilm()
    return {s: trace_sentence(model, s) for s in ("we want to eat apple", "apple eat can we")}


def test_attention_view_on_a_pretrained_encoders_traces(minilm_traces):
    view = attention_view(minilm_traces, places=("encoder self",), defaults={"layer": 0, "head": 2})
    p = params(view.spec)
    assert p["sentence"]["bind"]["labels"] == list(minilm_traces)
    assert p["place"]["bind"]["labels"] == [PLACE_NAMES["encoder self"]]  # the only place an encoder has
    assert p["layer"]["bind"]["labels"] == [str(x) for x in range(6)]
    assert p["head"]["bind"]["labels"] == ["all", *map(str, range(12))]
    assert (p["sentence"]["value"], p["layer"]["value"], p["head"]["value"]) == (0, 0, 2)  # the defaults asked
    rows = tsv_rows(view.spec["data"]["values"])
    assert {(r["sentence"], r["place"], r["layer"], r["head"]) for r in rows} == {
        (s, 0, layer, h) for s in range(2) for layer in range(6) for h in range(12)
    }
    trace = minilm_traces["apple eat can we"]
    w = trace[trace_key("encoder self", 5, "weights")][11]
    got = [r["w"] for r in rows if (r["sentence"], r["layer"], r["head"]) == (1, 5, 11)]
    assert [r["q"][3:] for r in rows if (r["sentence"], r["layer"], r["head"]) == (1, 5, 11)] == trace.src_tokens
    assert max(abs(a - b) for g, row in zip(got, w.tolist()) for a, b in zip(g, row)) <= 0.5e-3 + 1e-9
    again = attention_view(minilm_traces, places=("encoder self",), defaults={"layer": 0, "head": 2})
    assert json.dumps(again.bundles()) == json.dumps(view.bundles())  # deterministic


def test_a_choice_of_one_gets_no_buttons(minilm_traces):
    """Notebook 10's one place (an encoder has no other): hide_single leaves it unbound, named in the title only."""
    view = attention_view(minilm_traces, places=("encoder self",), defaults={"layer": 0, "head": 2}, hide_single=True)
    p = params(view.spec)
    assert p["place"] == {"name": "place", "value": 0} and "bind" in p["layer"] and "bind" in p["sentence"]
    assert "1 place" not in view.description and "2 sentences × 6 layers × 12 heads" in view.description
    assert "optionLabels.place[place]" in view.spec["title"]["text"]["expr"]  # the title still names the place
    one = attention_view(dict(list(minilm_traces.items())[:1]), places=("encoder self",), hide_single=True)
    assert "bind" not in params(one.spec)["sentence"] and "bind" in params(one.spec)["head"]  # heads: panels stay


def test_attention_view_refuses_unknown_places_and_defaults(traces):
    with pytest.raises(ValueError, match="places"):
        attention_view(traces, places=("encoder cross",))
    with pytest.raises(ValueError, match="defaults name no control"):
        attention_view(traces, defaults={"heads": 0})
    with pytest.raises(ValueError, match="no option of head"):
        attention_view(traces, defaults={"head": 99})
    assert params(attention_view(traces).spec)["head"]["value"] == -1  # no defaults: "all" heads, as before


def test_twelve_head_panels_drawn_in_head_order_offline(browser, tmp_path, minilm_traces):
    """'all' heads of notebook 10's view: twelve panels in reading order head 0 .. head 11 (not 'head 10' after 1),
    wrapped into rows of clientside.WRAP_PANELS (12 side by side were squeezed unreadably into the page)."""
    from course_utils.views.clientside.heatmap import WRAP_PANELS

    view = attention_view(minilm_traces, places=("encoder self",), defaults={"layer": 0, "head": 2})
    assert view.spec["facet"]["sort"] == {"field": "head", "op": "min"}
    assert view.spec["columns"] == WRAP_PANELS
    page, errors = open_offline(browser, page_with(tmp_path, view.bundles()[1]["text/html"]))
    try:
        page.wait_for_selector(f"#{view.id} svg .mark-rect", state="attached", timeout=30_000)
        assert "head 2" in drawing(page, view.id) and "head 10" not in drawing(page, view.id)  # the default: one
        page.select_option(f"#{view.id} select[name=head]", "-1")
        page.wait_for_function(f"document.querySelector('#{view.id} svg').innerHTML.includes('head 11')")
        headers = page.eval_on_selector_all(
            f"#{view.id} svg text",
            "ts => ts.map(t => [t.textContent, t.getBoundingClientRect().y, t.getBoundingClientRect().x])",
        )
        heads = [h for h in headers if h[0].startswith("head ")]
        titles = [t for t, _, _ in sorted(heads, key=lambda h: (round(h[1]), h[2]))]  # row by row, left to right
        assert titles == [f"head {h}" for h in range(12)]
        assert len({round(y) for _, y, _ in heads}) == 12 // WRAP_PANELS  # rows of WRAP_PANELS panels
        assert not errors
    finally:
        page.close()


# ---- word_qkv_view (notebook 02: projections.plot_word_qkv per word choice and layer) ----

QKV_CHOICES = [("we want to eat apple", "eat"), ("they want to eat bread", "eat"), ("eat", "eat")]


def check_word_qkv_view(view, model, choices) -> None:
    """The labels say where each word was read; each choice's rows are q, k and v of the word, read here from a
    trace of its sentence (the word alone where it is not in it), heads side by side, to 3 decimals."""
    p = params(view.spec)
    rows = tsv_rows(view.spec["data"]["values"])
    labels = []
    for c, (sentence, word) in enumerate(choices):
        inside = word in sentence.split()
        pos = sentence.split().index(word) if inside else 0
        labels.append(
            f"{word} in {sentence!r}, position {pos}" if inside else f"{word} alone (not in the sentence), position 0"
        )
        trace = run_with_trace(model, sentence if inside else word)
        for layer in range(len(model.encoder)):
            M = np.stack([heads_joined(trace[f"encoder.{layer}.self.{k}"])[pos] for k in "qkv"])
            got = [r for r in rows if (r["word"], r["layer"]) == (c, layer)]
            assert [r["q"][3:4] for r in got] == ["q", "k", "v"]
            assert np.abs(np.array([r["w"] for r in got]) - M).max() <= 0.5e-3 + 1e-9, (c, layer)
            assert p["lims"]["value"][f"{c}|{layer}"] == pytest.approx(np.abs(M).max(), abs=1e-3)
    assert p["word"]["bind"]["labels"] == labels


def test_word_qkv_view_embeds_every_choice(shipped_model):
    from course_utils.views.clientside.word_qkv import word_qkv_view

    view = word_qkv_view(shipped_model, QKV_CHOICES, defaults={"word": 1, "layer": 1})
    p = params(view.spec)
    n = len(shipped_model.encoder)
    assert p["word"]["bind"]["labels"][2] == "eat in 'eat', position 0"
    assert p["layer"]["bind"]["labels"] == [str(x) for x in range(n)]
    assert (p["word"]["value"], p["layer"]["value"]) == (1, 1)
    rows = tsv_rows(view.spec["data"]["values"])
    assert len(rows) == 3 * len(QKV_CHOICES) * n  # q, k, v rows of every choice, none twice
    check_word_qkv_view(view, shipped_model, QKV_CHOICES)
    again = word_qkv_view(shipped_model, QKV_CHOICES, defaults={"word": 1, "layer": 1})
    assert json.dumps(again.bundles()) == json.dumps(view.bundles())  # deterministic
    with pytest.raises(ValueError, match="no option of word"):
        word_qkv_view(shipped_model, QKV_CHOICES, defaults={"word": 3})


def test_word_qkv_view_shared_scale_is_one_scale_for_every_choice(shipped_model):
    from course_utils.views.clientside.word_qkv import word_qkv_view

    view = word_qkv_view(shipped_model, QKV_CHOICES, scale="shared")  # notebook 02: compare choices by colour
    lims = params(view.spec)["lims"]["value"]
    each = params(word_qkv_view(shipped_model, QKV_CHOICES).spec)["lims"]["value"]
    assert len(set(lims.values())) == 1 and set(lims.values()) == {max(each.values())} and len(each) == len(lims)
    assert len(set(each.values())) > 1  # the default keeps one scale per choice
    with pytest.raises(ValueError, match="scale"):
        word_qkv_view(shipped_model, QKV_CHOICES, scale="one")


def redraws_offline(browser, tmp_path, view, first: list[str], control: str, option: str, then: str):
    """Open `view` offline; its first drawing shows every text of `first`; choosing `option` of `control` (radio
    or select) redraws it with `then` in it, with no page error."""
    page, errors = open_offline(browser, page_with(tmp_path, view.bundles()[1]["text/html"]))
    try:
        page.wait_for_selector(
            f"#{view.id} svg .mark-rect, #{view.id} svg .mark-rule", state="attached", timeout=30_000
        )
        before = drawing(page, view.id)
        assert all(text in before for text in first)
        if page.locator(f"#{view.id} select[name={control}]").count():
            page.select_option(f"#{view.id} select[name={control}]", option)
        else:
            page.check(f"#{view.id} input[name={control}][value='{option}']")
        page.wait_for_function(f"document.querySelector('#{view.id} svg').innerHTML.includes({json.dumps(then)})")
        assert drawing(page, view.id) != before
        assert not errors
    finally:
        page.close()


def test_word_qkv_view_redraws_offline(browser, tmp_path, shipped_model):
    from course_utils.views.clientside.word_qkv import word_qkv_view

    view = word_qkv_view(shipped_model, QKV_CHOICES)
    redraws_offline(browser, tmp_path, view, ["we want to eat apple", "encoder layer 0"], "word", "1", "eat bread")


# ---- word_path_view: notebook 06's projection (clustering.plot_word_projection, PCA, all heads) ----


@pytest.fixture(scope="module")
def path_view():
    from course_utils.training.zoo import load_standard_model

    snaps = load_standard_model().snapshots
    return snaps, word_path_view(snaps, PAIR, defaults={"layer": 1})


def path_rows(view) -> list[dict]:
    head, *lines = view.spec["data"]["values"].split("\n")
    return [dict(zip(head.split("\t"), line.split("\t"))) for line in lines]


def check_word_path_view(view, snaps, choices=((1, 0, 0), (0, 2, 1))) -> None:
    """For (layer, place, kind set) choices: one row per vector of the traces (epoch, then sentence, kind,
    position), labelled word@kind@epoch, at the PCA of all of them computed here (numpy SVD), up to each axis's sign."""
    from course_utils.core.places import VECTOR_KINDS

    rows, p = path_rows(view), params(view.spec)
    kind_sets, words = p["kindLists"]["value"], p["optionLabels"]["value"]["word"]
    for la, pl, k in choices:
        place, vecs, labels = PLACES[pl], [], []
        for epoch in sorted(snaps):
            for sentence in PAIR:
                trace = snaps[epoch][sentence]
                for kind in kind_sets[k]:
                    X = heads_joined(trace[trace_key(place, la, kind)])
                    tokens = row_tokens(trace, place, kind)
                    assert len(tokens) == len(X)
                    vecs += list(X)
                    labels += [f"{tok}@{kind}@{epoch}" for tok in tokens]
        mine = [r for r in rows if (r["layer"], r["place"], r["kinds"]) == (str(la), str(pl), str(k))]
        assert [f"{words[int(r['word'])]}@{VECTOR_KINDS[int(r['kind'])]}@{r['epoch']}" for r in mine] == labels
        got = np.array([(float(r["x"]), float(r["y"])) for r in mine])
        assert_equal_up_to_sign(got, pca_by_svd(np.stack(vecs)), 0.5 * 10**-DECIMALS + 1e-9)


def test_word_path_view_embeds_one_pca_per_choice(path_view):
    snaps, view = path_view
    rows = path_rows(view)
    p = params(view.spec)
    kind_sets = p["kindLists"]["value"]
    assert p["optionLabels"]["value"]["kinds"] == [", ".join(ks) for ks in kind_sets]
    assert {(r["layer"], r["place"], r["kinds"]) for r in rows} == {
        (str(la), str(pl), str(k)) for la in range(2) for pl in range(len(PLACES)) for k in range(len(kind_sets))
    }  # every layer x place x kind set, each with its own PCA
    check_word_path_view(view, snaps)


def test_word_path_view_controls_and_defaults(path_view):
    snaps, view = path_view
    p = params(view.spec)
    words = p["optionLabels"]["value"]["word"]
    assert "eat" in words and "essen" in words  # English and German tokens
    assert p["word"]["bind"]["options"] == list(range(len(words)))
    assert p["word"]["bind"]["labels"] == words
    assert p["word"]["value"] == words.index("eat") and p["layer"]["value"] == 1  # notebook 06's default view
    assert p["place"]["bind"]["labels"] == [PLACE_NAMES[x] for x in PLACES]
    notes = p["notes"]["value"]
    e = str(words.index("eat"))
    assert notes[f"1|0|0|{e}"] == ""  # eat is an encoder token: every panel draws its path
    assert notes[f"1|1|0|{e}"].startswith("'eat' is no token of decoder self")
    assert notes[f"1|2|0|{e}"].startswith("no 'eat' among q, x1")  # cross: eat has k and v only
    with pytest.raises(ValueError):
        word_path_view(snaps, ("we want to eat apple", "we want to eat bread"), defaults={"head": 0})


def test_word_path_view_is_deterministic(path_view):

    snaps, view = path_view
    again = word_path_view(snaps, PAIR, defaults={"layer": 1})
    assert again.bundles() == view.bundles() and again.id == view.id
    assert view.nbytes < 300_000


def test_word_path_view_redraws_offline(browser, tmp_path, path_view):
    _, view = path_view
    page, errors = open_offline(browser, page_with(tmp_path, view.bundles()[1]["text/html"]))
    try:
        page.wait_for_selector(f"#{view.id} svg .mark-symbol", state="attached", timeout=30_000)
        before = drawing(page, view.id)
        assert "over epochs 1 → 15 → 30" in before and "encoder self-attention layer 1" in before
        page.select_option(f"#{view.id} select[name=word]", label="want")
        page.wait_for_function(
            f"document.querySelector('#{view.id} svg').innerHTML !== {json.dumps(before)}", timeout=10_000
        )
        after = drawing(page, view.id)
        assert "'want' over epochs" in after
        page.check(f"#{view.id} input[name=place][value='2']")
        page.wait_for_function(
            f"document.querySelector('#{view.id} svg').innerHTML.includes('cross-attention layer 1')", timeout=10_000
        )
        assert not errors
    finally:
        page.close()


# ---- seed_attention_view: notebook 05's attention per sentence and training seed ----


@pytest.fixture(scope="module")
def seed_traces(learned_seeds):
    sentences = list(load_probes("five_sentences"))[:2]
    return {s: {x: run_with_trace(r.model, x) for x in sentences} for s, r in learned_seeds.items()}


@pytest.fixture(scope="module")
def seed_view(seed_traces):
    return seed_attention_view(seed_traces, defaults={"sentence": 1, "place": 2, "layer": 1})


def test_seed_attention_view_embeds_every_sentence_seed_place_layer_head(seed_traces, seed_view):
    rows = tsv_rows(seed_view.spec["data"]["values"])
    seen = {}
    for r in rows:
        seen.setdefault((r["sentence"], r["seed"], r["place"], r["layer"], r["head"]), []).append(r["w"])
    expected = {}
    for d, by_sentence in enumerate(seed_traces.values()):
        for s, trace in enumerate(by_sentence.values()):
            for p, place in enumerate(PLACES):
                for layer in range(n_layers(trace)):
                    w = trace[trace_key(place, layer, "weights")]
                    for h in range(w.shape[0]):
                        expected[(s, d, p, layer, h)] = w[h]
    assert seen.keys() == expected.keys()  # 2 sentences x 5 seeds x 3 places x 2 layers x 2 heads, none twice
    for choice, w in expected.items():
        got = [x for row in seen[choice] for x in row]
        assert len(got) == w.numel()
        assert max(abs(a - b) for a, b in zip(got, w.flatten().tolist())) <= 0.005 + 1e-9  # 2 decimals
    assert len(rows) == sum(len(v) for v in seen.values())


def test_seed_attention_view_controls_defaults_and_refusals(seed_traces, seed_view):
    p = params(seed_view.spec)
    first = next(iter(seed_traces.values()))
    assert p["sentence"]["bind"]["labels"] == list(first)
    assert p["seed"]["bind"]["labels"] == [str(s) for s in seed_traces]
    assert p["seed"]["bind"]["options"] == list(range(len(seed_traces)))
    assert p["place"]["bind"]["labels"] == [PLACE_NAMES[x] for x in PLACES]
    assert p["head"]["bind"]["options"] == [-1, 0, 1] and p["head"]["bind"]["labels"][0] == "all"
    assert (p["sentence"]["value"], p["seed"]["value"], p["place"]["value"], p["layer"]["value"]) == (1, 0, 2, 1)
    assert "5 seeds" in seed_view.description
    with pytest.raises(ValueError):
        seed_attention_view(seed_traces, defaults={"epoch": 0})
    with pytest.raises(ValueError):
        seed_attention_view({0: first, 1: dict(list(first.items())[:1])})  # different sentences


def test_seed_attention_view_is_deterministic(seed_traces, seed_view):
    again = seed_attention_view(seed_traces, defaults={"sentence": 1, "place": 2, "layer": 1})
    assert json.dumps(again.bundles()) == json.dumps(seed_view.bundles()) and again.id == seed_view.id


def test_seed_attention_view_redraws_offline_on_a_seed_change(browser, tmp_path, seed_view):
    page, errors = open_offline(browser, page_with(tmp_path, seed_view.bundles()[1]["text/html"]))
    try:
        page.wait_for_selector(f"#{seed_view.id} svg .mark-rect", state="attached", timeout=30_000)
        before = drawing(page, seed_view.id)
        assert "seed 0" in before and "cross-attention" in before
        page.select_option(f"#{seed_view.id} select[name=seed]", label="3")
        page.wait_for_function(
            f"document.querySelector('#{seed_view.id} svg').innerHTML.includes('seed 3')", timeout=10_000
        )
        assert drawing(page, seed_view.id) != before
        assert not errors
    finally:
        page.close()


# ---- scaling_view (notebook 03: stepwise.plot_scaling per d and divisor) ----


def check_scaling_view(view) -> None:
    """softmax(score / divisor) of the first 5 random queries (numpy, divisors 1, √d, d written out), the histogram
    of all scores clipped into −40..40 in 80 unit bins, and the titles' mean max weight and std, computed here."""
    import math

    from course_utils.measures.attention_stats import random_scores

    p = params(view.spec)
    weights_data, hist_data = (c["data"]["values"] for c in (view.spec["hconcat"][0], view.spec["hconcat"][1]))
    w_rows, h_rows = tsv_rows(weights_data), tsv_rows(hist_data)
    for di, d in enumerate((4, 16, 64, 256)):
        for vi, divisor in enumerate((1.0, math.sqrt(d), float(d))):
            s = random_scores(d).numpy() / divisor
            e = np.exp(s - s.max(1, keepdims=True))
            w = e / e.sum(1, keepdims=True)
            got = np.array([r["w"] for r in w_rows if (r["d"], r["divide_by"]) == (di, vi)])
            assert got.shape == (5, 8) and np.abs(got - w[:5]).max() <= 0.5e-3 + 1e-9, (d, divisor)
            (counts,) = [r["w"] for r in h_rows if (r["d"], r["divide_by"]) == (di, vi)]
            bins = np.minimum(np.floor(np.clip(s, -40, 40) + 40), 79).astype(int).ravel()  # [k-40, k-39), last closed
            assert counts == np.bincount(bins, minlength=80).tolist(), (d, divisor)
            assert f"mean max weight {w.max(1).mean():.2f}" in p["leftTitles"]["value"][f"{di}|{vi}"]
            assert f"std {s.std(ddof=1):.2f}" in p["rightTitles"]["value"][f"{di}|{vi}"]


def test_scaling_view_embeds_every_choice():
    from course_utils.measures.attention_stats import DIVISORS
    from course_utils.views.clientside.scaling import scaling_view

    view = scaling_view(defaults={"d": 2, "divide_by": 1})
    p = params(view.spec)
    assert p["d"]["bind"]["labels"] == ["4", "16", "64", "256"]
    assert list(DIVISORS) == p["divide_by"]["bind"]["labels"] == ["1", "√d", "d"]
    assert (p["d"]["value"], p["divide_by"]["value"]) == (2, 1)  # d = 64, √d: plot_scaling's default
    weights_data, hist_data = (c["data"]["values"] for c in (view.spec["hconcat"][0], view.spec["hconcat"][1]))
    assert len(tsv_rows(weights_data)) == 4 * 3 * 5 and len(tsv_rows(hist_data)) == 4 * 3  # 5 queries; 1 histogram
    check_scaling_view(view)
    assert json.dumps(scaling_view(defaults={"d": 2, "divide_by": 1}).bundles()) == json.dumps(view.bundles())


def test_scaling_view_redraws_offline(browser, tmp_path):
    from course_utils.views.clientside.scaling import scaling_view

    view = scaling_view(defaults={"d": 2, "divide_by": 1})
    redraws_offline(browser, tmp_path, view, ["d = 64", "std 0.99"], "divide_by", "0", "std 7.94")  # divide by 1


# ---- pair_view (notebook 01: vectors.plot_pair for every pair of sentences) ----


def check_pair_view(view) -> None:
    """Every (first, second) title: the dot product, cosine and angle of the two vectors, computed here."""
    from course_utils.core.toys import SENTENCES_2D

    titles, names = params(view.spec)["titles"]["value"], list(SENTENCES_2D)
    assert len(titles) == len(names) ** 2
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            va, vb = np.asarray(SENTENCES_2D[a], dtype=float), np.asarray(SENTENCES_2D[b], dtype=float)
            dot = float(va[0] * vb[0] + va[1] * vb[1])
            cos = dot / math.hypot(*va) / math.hypot(*vb)
            angle = math.degrees(math.acos(max(-1.0, min(1.0, cos))))
            assert titles[f"{i}|{j}"] == [f"{a} · {b}", f"dot = {dot:.2f}, cosine = {cos:.2f} (angle {angle:.0f}°)"]


def test_pair_view_embeds_every_pair():
    from course_utils.core.toys import SENTENCES_2D
    from course_utils.views.clientside.pair import pair_view

    view = pair_view(defaults={"first": 0, "second": 5})
    p = params(view.spec)
    names = list(SENTENCES_2D)
    assert p["first"]["bind"]["labels"] == names and p["second"]["bind"]["labels"] == names
    assert (p["first"]["value"], p["second"]["value"]) == (0, 5)  # eat apple · read book, plot_pair's default
    assert p["titles"]["value"]["0|1"] == ["eat apple · eat bread", "dot = 0.58, cosine = 0.99 (angle 9°)"]
    check_pair_view(view)
    assert [(r["s"], r["x"], r["y"]) for r in view.spec["data"]["values"]] == [(s, *v) for s, v in SENTENCES_2D.items()]
    assert json.dumps(pair_view(defaults={"first": 0, "second": 5}).bundles()) == json.dumps(view.bundles())
    with pytest.raises(ValueError, match="no option of second"):
        pair_view(defaults={"second": 6})


def test_pair_view_redraws_offline(browser, tmp_path):
    from course_utils.views.clientside.pair import pair_view

    view = pair_view(defaults={"first": 0, "second": 5})
    redraws_offline(browser, tmp_path, view, ["dot = 0.24"], "second", "1", "dot = 0.58")  # eat bread


# ---- five_view: notebook 08's five sentences in one projection (probing.plot_five, PCA, all heads) ----


@pytest.fixture(scope="module")
def five():
    traces = five_sentences()
    return traces, five_view(traces, label="seed 0")


def check_five_view(view, traces) -> None:
    """Choice 0 (encoder self + cross, layer 0, q k v x1): one row per vector (place, sentence, kind, position), at
    the PCA computed here of the vectors scaled to length 1, up to each axis's sign; "shared" marks the words at
    the same position in all five sentences, found here from the tokens."""
    from course_utils.core.places import VECTOR_KINDS

    rows, words = path_rows(view), params(view.spec)["words"]["value"]
    mine = [r for r in rows if (r["places"], r["layer"], r["kinds"]) == ("0", "0", "0")]
    vecs, meta = [], []
    for place in ("encoder self", "cross"):
        for no, trace in enumerate(traces, start=1):
            for kind in ("q", "k", "v", "x1"):
                X = heads_joined(trace[trace_key(place, 0, kind)])
                for pos, tok in enumerate(row_tokens(trace, place, kind)):
                    vecs.append(X[pos] / np.linalg.norm(X[pos]))
                    same = all(
                        pos < len(toks) and toks[pos] == tok for toks in (row_tokens(t, place, kind) for t in traces)
                    )
                    meta.append((PLACES.index(place), VECTOR_KINDS.index(kind), no, tok, int(same)))
    got_meta = [(int(r["place"]), int(r["kind"]), int(r["no"]), words[int(r["word"])], int(r["shared"])) for r in mine]
    assert got_meta == meta
    got = np.array([(float(r["x"]), float(r["y"])) for r in mine])
    assert_equal_up_to_sign(got, pca_by_svd(np.stack(vecs)), 0.5 * 10**-DECIMALS + 1e-9)


def test_five_view_embeds_one_projection_per_choice(five):
    traces, view = five
    rows = path_rows(view)
    p = params(view.spec)
    assert p["optionLabels"]["value"]["places"][0] == "encoder self-attention + cross-attention"
    assert [len(p[n]["bind"]["options"]) for n in ("places", "layer", "kinds")] == [4, 2, 2]
    assert {(r["places"], r["layer"], r["kinds"]) for r in rows} == {
        (str(a), str(b), str(c)) for a in range(4) for b in range(2) for c in range(2)
    }
    check_five_view(view, traces)
    mine = [r for r in rows if (r["places"], r["layer"], r["kinds"]) == ("0", "0", "0")]
    labelled = {r["lab"] for r in mine if r["lab"] != "-"}
    assert labelled == {"i", "can", "eat", "<bos>", "ich", "kann"}  # one label per shared word and panel


def test_five_view_is_deterministic_and_redraws_offline(browser, tmp_path, five):
    traces, view = five
    again = five_view(traces, label="seed 0")
    assert again.bundles() == view.bundles()
    with pytest.raises(ValueError):
        five_view(traces, kind_sets=(("q",), ("q", "k")))
    page, errors = open_offline(browser, page_with(tmp_path, view.bundles()[1]["text/html"]))
    try:
        page.wait_for_selector(f"#{view.id} svg .mark-symbol", state="attached", timeout=30_000)
        before = drawing(page, view.id)
        assert "cross-attention, layer 0: x1" in before
        page.check(f"#{view.id} input[name=places][value='2']")
        page.wait_for_function(
            f"document.querySelector('#{view.id} svg').innerHTML.includes('decoder self-attention, layer 0: q')",
            timeout=10_000,
        )
        assert "cross-attention, layer 0" not in drawing(page, view.id)  # the old panels are gone
        assert not errors
    finally:
        page.close()


def test_embedded_weights_write_the_static_figures_annotations():
    """A weight travels with DECIMALS places, more where that rounding would change the 2-place annotation
    (0.1552 -> 0.155 -> '0.15', where plotting.heatmap writes '0.16'): the view's numbers are the figure's."""
    import numpy as np

    from course_utils.views.clientside.heatmap import embedded_value as _embedded

    assert _embedded(0.1552, 3, ".2f") == 0.1552 and _embedded(0.1548, 3, ".2f") == 0.155
    xs = np.random.default_rng(0).random(20_000)
    for fmt, decimals in ((".2f", 3), (".3f", 4), (".2f", 2)):
        got = [_embedded(float(x), decimals, fmt) for x in xs]
        assert all(format(g, fmt) == format(float(x), fmt) for g, x in zip(got, xs))
        assert max(abs(g - x) for g, x in zip(got, xs)) <= 0.5 * 10**-decimals + 1e-12


# ---- each view check above rejects a view built from a broken copy of its computation


def _dot_matrix(A, B):
    return np.asarray(A) @ np.asarray(B).T


def _uncentred_pca(X, method="pca", n_components=2, seed=0):
    return X @ np.linalg.svd(X, full_matrices=False)[2][:n_components].T


BROKEN_VIEWS = {  # name: (module to patch, attribute, the wrong version, build the view and check it)
    "word order: the dot product for the cosine": (
        "course_utils.views.clientside.word_order",
        "cosine_matrix",
        _dot_matrix,
        lambda m, fx: check_word_order_view(m.word_order_view(fx["order_pairs"]), fx["order_pairs"]),
    ),
    "pair: the dot product for the cosine": (
        "course_utils.views.clientside.pair",
        "cosine",
        lambda a, b: float(np.dot(a, b)),
        lambda m, fx: check_pair_view(m.pair_view()),
    ),
    "scaling: no division": (
        "course_utils.views.clientside.scaling",
        "divisor_value",
        lambda d, divide_by: 1.0,
        lambda m, fx: check_scaling_view(m.scaling_view()),
    ),
    "word qkv: always layer 0": (
        "course_utils.views.clientside.word_qkv",
        "word_qkv",
        lambda model, sentence, word, layer=0: word_qkv(model, sentence, word, 0),
        lambda m, fx: check_word_qkv_view(m.word_qkv_view(fx["model"], QKV_CHOICES), fx["model"], QKV_CHOICES),
    ),
    "word path: PCA without centring": (
        "course_utils.views.clientside.word_path",
        "fit_projection",
        _uncentred_pca,
        lambda m, fx: check_word_path_view(m.word_path_view(fx["snaps"], PAIR), fx["snaps"], ((0, 0, 0),)),
    ),
    "five: vectors not scaled to length 1": (
        "course_utils.views.clientside.five",
        "five_projection",
        lambda *args, **kw: five_projection(*args, **kw, unit=False),
        lambda m, fx: check_five_view(m.five_view(fx["traces"], layers=[0]), fx["traces"]),
    ),
}


@pytest.mark.parametrize("broken", list(BROKEN_VIEWS))
def test_the_view_checks_reject_a_view_built_from_a_broken_copy(broken, monkeypatch, order_pairs, shipped_model):
    import importlib

    from course_utils.training.zoo import load_standard_model

    module_name, attribute, wrong, build_and_check = BROKEN_VIEWS[broken]
    module = importlib.import_module(module_name)
    monkeypatch.setattr(module, attribute, wrong)
    fixtures = {
        "order_pairs": order_pairs,
        "model": shipped_model,
        "snaps": load_standard_model().snapshots,
        "traces": five_sentences(),
    }
    with pytest.raises(AssertionError):
        build_and_check(module, fixtures)
