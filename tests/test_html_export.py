"""The nbviewer-style HTML export (`make html`), checked in headless Chromium with the network cut off.

All notebooks are exported once per module. Each page is opened offline (only file: and data: URLs load) and
must need nothing else: every script it loads lies in the export's _static/ folder (MathJax, require.js, the
widget manager, Vega). Then, on every page: no request left the disk; the math is typeset (no raw `$...$` in
the prose, no TeX error); the saved widgets are rendered (every control of the saved view, with its saved
value); every figure is there and loaded; the static figure under every widget is visible; no traceback is
shown; a client-side view, where a page has one, redraws when one of its controls changes; and the index links
every page in notebook order. A small notebook made here with a client-side view's output
(course_utils/views/clientside/) checks the client-side view on its own (the course notebooks get theirs later).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import nbformat
import pytest
from conftest import missing_tool, offline_page

from course_utils.views.clientside.base import ClientSideView
from course_utils.views.clientside.loader import NPM_PACKAGES, VEGA_FILES, VEGA_STATIC_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from export_html import NPM, STATIC, URLS, AssetError, export, heading  # build tooling lives in tools/

# the slow tier (make test-all): exports every notebook, reads the pages in Chromium
pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
WIDGET = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
ERROR = re.compile(r"Traceback|^\w+(Error|Exception)\b", re.MULTILINE)
# widget models that are not controls (containers, the Output widget, layouts and styles)
NOT_CONTROLS = re.compile(r"(Box|Output|Layout|Style)Model$")

# Per DOM cell (nbconvert's lab template: one .jp-Cell per notebook cell, in order, id="cell-id=<id>"):
# its id, how many loaded images its outputs show outside rendered widgets, each visible and with a nonzero box,
# and, in rendered widgets, its visible controls, the chosen labels of its dropdowns and toggle buttons, and the
# sentences under them saying that the controls need a kernel.
CELLS_JS = """() => [...document.querySelectorAll('.jp-Cell.jp-Notebook-cell')].map(cell => {
    const shown = el => el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})
                        && el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().height > 0;
    const outputs = [...cell.querySelectorAll('.jp-OutputArea-output')];
    const images = outputs.flatMap(o => [...o.querySelectorAll('img')])
                          .filter(img => !img.closest('.jupyter-widgets'))
                          .filter(img => img.complete && img.naturalWidth > 0 && shown(img));
    const controls = [...cell.querySelectorAll('.jupyter-widgets .widget-inline-hbox, .jupyter-widgets .widget-toggle-buttons')];
    const chosen = [...cell.querySelectorAll('.jupyter-widgets .widget-dropdown select, .jupyter-widgets .widget-toggle-buttons')]
        .map(el => el.tagName === 'SELECT' ? (el.selectedIndex >= 0 ? el.options[el.selectedIndex].text : null)
                                           : (el.querySelector('.mod-active') || {}).textContent);
    const notes = [...cell.querySelectorAll('.jupyter-widgets .course-widget-note')].filter(shown);
    return {id: cell.id, images: images.length, controls: controls.filter(shown).length, chosen: chosen,
            notes: notes.map(n => n.innerText)};
})"""

IMAGES_JS = """() => [...document.images].map(img => ({loaded: img.complete && img.naturalWidth > 0, alt: img.alt,
                                                     widget: !!img.closest('.jupyter-widgets')}))"""

STDERR_JS = """() => [...document.querySelectorAll(
    '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]')].map(el => el.innerText)"""

# The prose as read: rendered markdown less code, scripts (MathJax keeps the TeX in <script type="math/tex">)
# and MathJax's previews; what is left of TeX delimiters was not typeset.
PROSE_JS = """() => [...document.querySelectorAll('.jp-MarkdownOutput')].map(md => {
    const copy = md.cloneNode(true);
    copy.querySelectorAll('code, pre, script, .MathJax_Preview').forEach(e => e.remove());
    return copy.textContent;
})"""
RAW_TEX = re.compile(r"\$[^$]+\$|\\\(|\\\[")
MATH_JS = """() => ({typeset: document.querySelectorAll('.MathJax').length,
                     errors: [...document.querySelectorAll('.MathJax .merror, .MathJax .noError, .MathJax_Error')]
                             .map(e => e.textContent)})"""

# Everything the page draws by itself once loaded: MathJax's typesetting, the widget manager's views (next to
# each saved view's <script>) and the client-side views (vega-embed's drawing, or the message saying it failed).
RENDERED_JS = """() => window.MathJax && MathJax.isReady
    && [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
           .every(s => s.parentElement.querySelector('.jupyter-widgets'))
    && [...document.querySelectorAll('.qkv-clientside')].every(v => v.querySelector('svg, canvas') || v.textContent)"""
TYPESET_JS = "() => new Promise(done => MathJax.Hub.Queue(done))"  # resolves once the queued typesetting is done

VIEW_JS = """el => { const d = el.querySelector('svg, canvas');
                     return d ? (d.tagName === 'canvas' ? d.toDataURL() : d.outerHTML) : null; }"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """All notebooks exported once, in order, into a temporary folder (with index.html and _static/)."""
    out = tmp_path_factory.mktemp("html")
    try:
        export(NOTEBOOKS, out)
    except AssetError as e:  # the first export fetches the pinned npm tarballs
        missing_tool(str(e))
    return out


def open_offline(browser, path: Path):
    """A new page showing `path`, with every request other than file: and data: aborted (and listed in the
    returned list), once it has drawn everything it draws by itself (math, widgets, client-side views)."""
    page, aborted = offline_page(browser)
    page.goto(path.as_uri(), wait_until="load")
    if page.locator("script[src*='mathjax']").count():
        page.wait_for_function(RENDERED_JS, timeout=30_000)
        page.evaluate(TYPESET_JS)
    return page, aborted


def _has(output, mime: str) -> bool:
    return mime in output.get("data", {})


def _text(label: str) -> str:
    return unicodedata.normalize("NFKC", label).replace("\xa0", " ")  # the widget manager writes no-break spaces


def saved_controls(nb, model_id: str) -> tuple[int, list[str]]:
    """The controls in the saved view `model_id` (following children): how many, and the saved choices of its
    dropdowns and toggle buttons, in order."""
    state = nb.metadata["widgets"][STATE]["state"]
    count, labels, todo = 0, [], [model_id]
    while todo:
        model = state[todo.pop(0)]
        children = model["state"].get("children", [])
        todo[:0] = [c.removeprefix("IPY_MODEL_") for c in children]
        if not NOT_CONTROLS.search(model["model_name"]):
            count += 1
            if (
                model["model_name"] in ("DropdownModel", "ToggleButtonsModel")
                and model["state"].get("index") is not None
            ):
                labels.append(model["state"]["_options_labels"][model["state"]["index"]])
    return count, labels


def check_page(page, aborted):
    """What every exported page must show, offline: nothing fetched, math typeset, client-side views live."""
    assert not aborted, f"the page requested something off the disk: {aborted[:3]}"
    raw = [m.group() for text in page.evaluate(PROSE_JS) for m in RAW_TEX.finditer(text)]
    assert not raw, f"math left as TeX in the prose (MathJax did not typeset it): {raw[:5]}"
    math = page.evaluate(MATH_JS)
    assert not math["errors"], f"TeX errors: {math['errors'][:5]}"
    views = page.locator(".qkv-clientside")
    for i in range(views.count()):  # a client-side view: changing a control redraws it, in the browser
        view = views.nth(i)
        before = view.evaluate(VIEW_JS)
        assert before, f"client-side view {i} drew nothing: {view.inner_text()[:300]!r}"
        select, radios = view.locator(".vega-bindings select"), view.locator(".vega-bindings input[type=radio]")
        if select.count():
            options = select.first.locator("option")
            assert options.count() > 1, "a view's control offers one choice only"
            select.first.select_option(
                index=(options.evaluate_all("os => os.findIndex(o => o.selected)") + 1) % options.count()
            )
        else:
            assert radios.count() > 1, f"client-side view {i} has no control with two choices"
            radios.locator(":scope:not(:checked)").first.check()
        page.wait_for_function(
            f"([el, before]) => ({VIEW_JS})(el) !== before", arg=[view.element_handle(), before], timeout=10_000
        )
    return math["typeset"], views.count()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_page_offline(browser, site, notebook):
    nb = nbformat.read(notebook, as_version=4)
    page, aborted = open_offline(browser, site / f"{notebook.stem}.html")
    try:
        assert page.title().strip() == heading(nb), "the page title is the notebook's first heading"
        typeset, _ = check_page(page, aborted)
        if any("$" in c.source for c in nb.cells if c.cell_type == "markdown"):
            assert typeset > 0, "the notebook's prose has math, the page shows none typeset"

        # every figure: as many <img> outside widgets as image/png outputs in the notebook, each one loaded
        pngs = sum(_has(o, "image/png") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
        images = page.evaluate(IMAGES_JS)
        outside = [img for img in images if not img["widget"]]
        assert len(outside) == pngs, f"{len(outside)} <img> on the page, {pngs} image/png outputs in the notebook"
        assert all(img["loaded"] for img in images), f"images not loaded: {[i for i in images if not i['loaded']]}"

        # DOM cells are the notebook's cells, in order
        cells = page.evaluate(CELLS_JS)
        assert [c["id"] for c in cells] == [f"cell-id={c.id}" for c in nb.cells]

        # every widget is rendered from the saved state: its controls shown, each choice at its saved value, a
        # sentence under it saying the controls need a kernel;
        # under it the next code cell draws its default view: a visible figure
        # (CONTRIBUTING.md: "The next cell draws the default view statically")
        code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        for k, i in enumerate(code):
            views = [o["data"][WIDGET]["model_id"] for o in nb.cells[i].outputs if _has(o, WIDGET)]
            if views:
                count, labels = map(list, zip(*(saved_controls(nb, v) for v in views)))
                assert cells[i]["controls"] == sum(count), f"cell {i}: controls shown vs saved"
                shown = [_text(t) for t in cells[i]["chosen"]]
                assert shown == [_text(t) for ts in labels for t in ts], f"cell {i}: the saved choices shown"
                assert len(cells[i]["notes"]) == len(views), f"cell {i}: one note per widget: it needs a kernel"
                assert all("Run the notebook" in note for note in cells[i]["notes"])
                assert k + 1 < len(code), f"cell {i} is a widget with no code cell (static fallback) after it"
                j = code[k + 1]
                assert cells[j]["images"] > 0, f"cell {j}, the fallback under widget cell {i}, shows no figure"

        # the saved widget state is embedded (what the widget manager renders)
        state = page.locator(f'script[type="{STATE}"]').count()
        assert state == (1 if "widgets" in nb.metadata else 0), "embedded widget state"

        # no traceback or error output anywhere
        errors = [t for t in page.evaluate(STDERR_JS) if ERROR.search(t)]
        assert not errors, f"error output on the page: {errors[0][:500]}"
    finally:
        page.close()


def test_index(browser, site):
    page, aborted = open_offline(browser, site / "index.html")
    try:
        assert page.title() == "Understanding Q, K, V"
        links = page.eval_on_selector_all("ol > li > a", "as => as.map(a => [a.getAttribute('href'), a.innerText])")
    finally:
        page.close()
    assert not aborted
    assert [href for href, _ in links] == [f"{p.stem}.html" for p in NOTEBOOKS], "one link per notebook, in order"
    for (href, text), notebook in zip(links, NOTEBOOKS):
        assert (site / href).is_file(), f"{href} does not exist"
        assert text == heading(nbformat.read(notebook, as_version=4)), f"link text of {href}"
        assert text.startswith(notebook.name[:2]), f"link text {text!r} should start with the notebook number"


def test_static_files(site):
    """The pages' script URLs point into _static/, which holds them; and the Vega files the client-side views
    load (views.clientside.loader.VEGA_FILES) are there, from the npm versions that module names."""
    for url in URLS.values():
        assert url.startswith(f"{STATIC}/") and (site / url.split("?")[0]).is_file(), url
    for local, _ in VEGA_FILES.values():
        assert (site / VEGA_STATIC_DIR / local).is_file(), local
    assert set(NPM_PACKAGES) <= set(NPM), "the Vega versions the views name are the ones exported"


def test_clientside_view_offline(browser, tmp_path):
    """A notebook with math and a client-side view, exported: offline, the math is typeset and changing the
    view's control redraws it (the course notebooks' views are checked by test_page_offline)."""
    import altair as alt

    data = [{"choice": c, "x": x, "y": (x * (c + 1)) % 5} for c in range(3) for x in range(5)]
    choice = alt.param(name="choice", value=0, bind=alt.binding_select(options=[0, 1, 2], name="choice "))
    chart = (
        alt.Chart(alt.Data(values=data))
        .mark_bar()
        .encode(x="x:O", y=alt.Y("y:Q", scale=alt.Scale(domain=[0, 5])))
        .transform_filter("datum.choice == choice")
        .add_params(choice)
    )
    view = ClientSideView(chart.to_dict(), "A test view: three choices, switched in the browser.")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 99 Fixture\n\nThe query matrix $W^Q$ and $$\\mathrm{softmax}(QK^T)$$."),
        nbformat.v4.new_code_cell(
            "view", outputs=[nbformat.v4.new_output("display_data", data=b) for b in view.bundles()]
        ),
    ]
    path = tmp_path / "99_fixture.ipynb"
    nbformat.write(nb, path)
    try:
        (page_path,) = export([path], tmp_path / "html")
    except AssetError as e:
        missing_tool(str(e))
    page, aborted = open_offline(browser, page_path)
    try:
        typeset, views = check_page(page, aborted)
        assert typeset == 2, "both formulas typeset"
        assert views == 1, "the view is drawn (and redrawn on a control change) by check_page"
    finally:
        page.close()
