"""The nbviewer-style HTML export (`make html`), checked in headless Chromium with the network cut off.

All notebooks are exported once per module. Each page is opened offline (only file: and data: URLs load; the
CDN scripts nbconvert's template references - require.js, MathJax, the widget html-manager - simply fail), as
on nbviewer without JavaScript. Then: every figure is there and loaded, the static figure under every widget
is visible, no traceback is shown, and the index links every page in notebook order.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from export_html import export, heading  # noqa: E402  (build tooling lives in tools/, outside the package)

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
WIDGET = "application/vnd.jupyter.widget-view+json"
ERROR = re.compile(r"Traceback|^\w+(Error|Exception)\b", re.MULTILINE)

# Per DOM cell (nbconvert's lab template: one .jp-Cell per notebook cell, in order, id="cell-id=<id>"):
# its id and how many loaded images its outputs show, each visible and with a nonzero box.
CELLS_JS = """() => [...document.querySelectorAll('.jp-Cell.jp-Notebook-cell')].map(cell => {
    const shown = el => el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})
                        && el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().height > 0;
    const outputs = [...cell.querySelectorAll('.jp-OutputArea-output')];
    const images = outputs.flatMap(o => [...o.querySelectorAll('img')])
                          .filter(img => img.complete && img.naturalWidth > 0 && shown(img));
    return {id: cell.id, images: images.length};
})"""

IMAGES_JS = "() => [...document.images].map(img => ({loaded: img.complete && img.naturalWidth > 0, alt: img.alt}))"

STDERR_JS = """() => [...document.querySelectorAll(
    '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]')].map(el => el.innerText)"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """All notebooks exported once, in order, into a temporary folder (with index.html)."""
    out = tmp_path_factory.mktemp("html")
    export(NOTEBOOKS, out)
    return out


def open_offline(browser, path: Path):
    """A new page showing `path`, with every request other than file: and data: aborted."""
    page = browser.new_page()
    page.route(
        "**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:")) else route.abort()
    )
    page.goto(path.as_uri(), wait_until="load")
    return page


def _has(output, mime: str) -> bool:
    return mime in output.get("data", {})


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_page_offline(browser, site, notebook):
    nb = nbformat.read(notebook, as_version=4)
    page = open_offline(browser, site / f"{notebook.stem}.html")
    try:
        assert page.title().strip() == heading(nb), "the page title is the notebook's first heading"

        # every figure: as many <img> as image/png outputs in the notebook, each one loaded
        pngs = sum(_has(o, "image/png") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
        images = page.evaluate(IMAGES_JS)
        assert len(images) == pngs, f"{len(images)} <img> on the page, {pngs} image/png outputs in the notebook"
        assert all(img["loaded"] for img in images), f"images not loaded: {[i for i in images if not i['loaded']]}"

        # DOM cells are the notebook's cells, in order
        cells = page.evaluate(CELLS_JS)
        assert [c["id"] for c in cells] == [f"cell-id={c.id}" for c in nb.cells]

        # under every widget (not rendered offline) the next code cell draws its default view: a visible figure
        # (CONTRIBUTING.md: "The next cell draws the default view statically")
        code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        for k, i in enumerate(code):
            if any(_has(o, WIDGET) for o in nb.cells[i].outputs):
                assert k + 1 < len(code), f"cell {i} is a widget with no code cell (static fallback) after it"
                j = code[k + 1]
                assert cells[j]["images"] > 0, f"cell {j}, the fallback under widget cell {i}, shows no figure"

        # the saved widget state is embedded (what the html-manager would render online)
        state = page.locator('script[type="application/vnd.jupyter.widget-state+json"]').count()
        assert state == (1 if "widgets" in nb.metadata else 0), "embedded widget state"

        # no traceback or error output anywhere
        errors = [t for t in page.evaluate(STDERR_JS) if ERROR.search(t)]
        assert not errors, f"error output on the page: {errors[0][:500]}"
    finally:
        page.close()


def test_index(browser, site):
    page = open_offline(browser, site / "index.html")
    try:
        assert page.title() == "Understanding Q, K, V"
        links = page.eval_on_selector_all("ol > li > a", "as => as.map(a => [a.getAttribute('href'), a.innerText])")
    finally:
        page.close()
    assert [href for href, _ in links] == [f"{p.stem}.html" for p in NOTEBOOKS], "one link per notebook, in order"
    for (href, text), notebook in zip(links, NOTEBOOKS):
        assert (site / href).is_file(), f"{href} does not exist"
        assert text == heading(nbformat.read(notebook, as_version=4)), f"link text of {href}"
        assert text.startswith(notebook.name[:2]), f"link text {text!r} should start with the notebook number"
