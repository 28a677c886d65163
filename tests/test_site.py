"""The course website (`make site`, tools/site.py), built once per module from the committed notebooks and read in
headless Chromium from a local http.server on 127.0.0.1.

Every notebook page loads with no console error and no request to another host (the theme's files, MathJax, the
widget manager and Vega all come from the site); its math is typeset, its saved widgets drawn, every figure has an
alt text (never nbconvert's "No description has been provided for this image", never empty), and a client-side
view, where a page has one, redraws when one of its controls changes. Search finds "softmax" in notebook 03;
next/previous walk 01 -> 10 and back; the Evidence and Solutions sections are folded and a "Worked solution" link
opens its section; the README's claims ledger and the glossary are pages.

The build takes about 17 s on 2 CPU cores (measured), so the module fixture builds the site itself.
"""

from __future__ import annotations

import functools
import http.server
import re
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import missing_tool

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "docs" / "site" / "_ext"))
from course_site import NO_ALT  # the site's fallback alt for an output saved before figures carried one
from export_html import AssetError

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NBCONVERT_NO_ALT = "No description has been provided for this image"

# Everything the page draws by itself once loaded: MathJax's typesetting (where the page loads it), the widget
# manager's views and the client-side views (vega-embed's drawing, or the sentence saying it failed).
RENDERED_JS = """() => (!document.querySelector('script[src*="MathJax"]') || (window.MathJax && MathJax.isReady))
    && [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
           .every(s => s.parentElement.querySelector('.jupyter-widgets'))
    && [...document.querySelectorAll('.qkv-clientside')].every(v => v.querySelector('svg, canvas') || v.textContent)"""
IMAGES_JS = """() => [...document.querySelectorAll('article img')].map(img => ({
    src: img.getAttribute('src'), alt: img.getAttribute('alt'), loaded: img.complete && img.naturalWidth > 0,
    widget: !!img.closest('.jupyter-widgets')}))"""
VIEW_JS = """el => { const d = el.querySelector('svg, canvas');
                     return d ? (d.tagName === 'canvas' ? d.toDataURL() : d.outerHTML) : null; }"""
MATH_ERRORS_JS = """() => [...document.querySelectorAll('.MathJax .merror, .MathJax_Error')].map(e => e.textContent)"""


BLANK_FONT = "Access to font at 'about:blank'"
FAILED_LOAD = "Failed to load resource: net::ERR_FAILED"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The site built into a temporary folder and served on 127.0.0.1: yields (folder, base URL). tools/site.py is
    loaded by path (the standard library has a module named site)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_site_build", ROOT / "tools" / "site.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    out = tmp_path_factory.mktemp("site") / "site"
    try:
        tool.build(out)
    except AssetError as e:  # the first build fetches the pinned npm tarballs
        missing_tool(str(e))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


def open_page(browser, url: str):
    """A new page at `url`, once drawn; with the requests to any other host (aborted) and the console errors."""
    page, elsewhere, errors = browser.new_page(), [], []
    host = urlparse(url).netloc

    def route(route):
        if urlparse(route.request.url).netloc == host or route.request.url.startswith("data:"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    failed = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(url, wait_until="load")
    page.wait_for_function(RENDERED_JS, timeout=30_000)
    if page.locator('script[src*="MathJax"]').count():
        page.evaluate("() => new Promise(done => MathJax.Hub.Queue(done))")
    # MathJax 2's HTML-CSS output probes font loading with a font at about:blank, which Chrome refuses (two console
    # lines, no request anywhere): the only console errors let through, and only while about:blank is the only
    # request that failed
    if all(u == "about:blank" for u in failed):
        errors[:] = [e for e in errors if not (BLANK_FONT in e or (failed and e == FAILED_LOAD))]
    return page, elsewhere, errors


def redraw_views(page) -> int:
    """Change one control of every client-side view on the page and wait for the view to redraw; returns how
    many views there are."""
    views = page.locator(".qkv-clientside")
    for i in range(views.count()):
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
    return views.count()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_notebook_page(browser, served, notebook):
    out, base = served
    page, elsewhere, errors = open_page(browser, base + f"{notebook.stem}.html")
    try:
        assert not elsewhere, f"requests to another host: {elsewhere[:3]}"
        assert page.evaluate(MATH_ERRORS_JS) == [], "TeX errors"
        images = page.evaluate(IMAGES_JS)
        figures = [img for img in images if not img["widget"]]
        assert figures, "no figure on the page"
        assert all(img["loaded"] for img in images), [img["src"] for img in images if not img["loaded"]]
        for img in figures:
            assert img["alt"] and img["alt"].strip(), f"{img['src']}: no alt text"
            assert NBCONVERT_NO_ALT not in img["alt"], f"{img['src']}: nbconvert's placeholder alt"
        redraw_views(page)
        # the Evidence part and the Solutions section: on the page, folded
        folded = page.locator("details.course-folded")
        assert folded.count() == 2, "the Evidence part and the Solutions section, each folded"
        assert not any(folded.nth(i).evaluate("d => d.open") for i in range(2))
        assert not errors, f"console errors: {errors[:5]}"
    finally:
        page.close()


def test_notebook_pages_have_their_alt_text(served):
    """Where a notebook's saved figure carries an alt (course_utils.views.style.describe), the site uses it."""
    import json

    out, _ = served
    html = "\n".join(p.read_text(encoding="utf-8") for p in out.glob("[0-9][0-9]_*.html"))
    alts = [
        (o.get("metadata", {}).get("image/png") or {}).get("alt") or o.get("metadata", {}).get("alt")
        for nb in NOTEBOOKS
        for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    ]
    from html import unescape

    text = unescape(html)  # the alt attribute as the browser reads it (&lt;bos&gt; is <bos>, &quot; is ")
    for alt in filter(None, alts):
        assert f'alt="{alt}"' in text, alt
    if not any(alts):
        pytest.skip(f"no committed figure carries an alt yet (re-execute the notebooks): the site shows {NO_ALT!r}")


def test_search_finds_softmax_in_03(browser, served):
    _, base = served
    page, elsewhere, errors = open_page(browser, base + "search.html?q=softmax")
    try:
        page.wait_for_selector("#search-results li a", timeout=30_000)
        hrefs = page.eval_on_selector_all("#search-results li a", "as => as.map(a => a.getAttribute('href'))")
        assert any("03_scaled_dot_product_attention" in h for h in hrefs), hrefs[:10]
        assert not elsewhere and not errors, (elsewhere, errors)
    finally:
        page.close()


def test_previous_next_walk_01_to_10(browser, served):
    _, base = served
    stems = [p.stem for p in NOTEBOOKS]
    # The links are plain anchors in the HTML: the walk needs no script, so none runs (test_notebook_page checks the
    # pages as drawn, MathJax, figures and views included); without scripts each step costs a fraction of a page load.
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(base + f"{stems[0]}.html", wait_until="domcontentloaded")
        walked = [stems[0]]
        for _ in stems[1:]:
            with page.expect_navigation(wait_until="domcontentloaded"):  # the links, not the figures and MathJax
                page.click("a.right-next")
            walked.append(Path(urlparse(page.url).path).stem)
        assert walked == stems, "next walks the notebooks in order"
        back = [walked[-1]]
        for _ in stems[1:]:
            with page.expect_navigation(wait_until="domcontentloaded"):  # the links, not the figures and MathJax
                page.click("a.left-prev")
            back.append(Path(urlparse(page.url).path).stem)
        assert back == stems[::-1], "previous walks them back"
        # the sidebar lists the notebooks in order
        page.goto(base + "index.html")
        links = page.eval_on_selector_all(
            "nav.bd-docs-nav a.reference.internal", "as => as.map(a => a.getAttribute('href'))"
        )
        listed = [Path(h.split("#")[0]).stem for h in links if re.match(r"\d\d_", h)]
        assert listed == stems, links
        assert {"claims.html", "glossary.html"} <= set(links), "the claims ledger and the glossary are pages"
    finally:
        context.close()


def test_worked_solution_link_opens_its_section(browser, served):
    _, base = served
    page, _, _ = open_page(browser, base + "03_scaled_dot_product_attention.html")
    try:
        link = page.locator("a", has_text="Worked solution").first
        target = link.get_attribute("href").lstrip("#")
        link.click()
        page.wait_for_function(f"() => document.getElementById({target!r}).closest('details').open", timeout=5_000)
        assert page.locator(f"#{target}").is_visible()
    finally:
        page.close()


def test_pages_offline_in_the_html(served):
    """No page names another host in a script, style sheet, font or image it loads."""
    out, _ = served
    loads = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["'](https?:)?//""", re.IGNORECASE)
    for page in out.glob("*.html"):
        assert not loads.search(page.read_text(encoding="utf-8")), page.name
    for css in (out / "_static").rglob("*.css"):
        text = css.read_text(encoding="utf-8", errors="replace")
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", text), css
