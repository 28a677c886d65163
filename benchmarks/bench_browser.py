"""How fast a client-side view (course_utils/views/clientside/) redraws in the browser after a control change.

    .venv/bin/python benchmarks/bench_browser.py [--rounds 2] [pages.html ...]

Pages: the exported pages given (e.g. build/html/*.html from `make html`); with none, the exported pages in
build/html/ that hold a client-side view; with none of those either, a stand-in page with the course's two
views, `attention_view` of the five probe sentences on the shipped model (seed 0),
`word_order_view` of the three positional encodings' models (seed 0) and `word_path_view`
(notebook 06's scatter of a word's path over the epochs, 156 choices) and `five_view` (notebook 08's
five sentences in one projection, 16 choices), its vega files
taken from the npm tarballs `make html` caches in build/npm/.

Each page is opened in headless Chromium (Debian's /usr/bin/chromium driven by Playwright; only file: and
data: URLs load, as offline). For every view on it, every combination of its controls' values is visited in a
"snake" order, so that each step changes exactly one control (select options, radio buttons), `--rounds` times.
One timing: from the control's change event to (a) the first change of the view's SVG (MutationObserver: vega
has re-run its dataflow and drawn) and (b) the next animation frame after it (the new drawing is on screen).
Printed per view: median and p95 of both, over all changes. Goal: p95 <= 50 ms (the kernel widgets took
230-400 ms p95; `benchmarks/bench_notebooks.py` prints those).
This script prints figures; it is not a test and always exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the course's one way to start Chromium)

from course_utils.measures.probing import five_sentences, word_order_traces  # noqa: E402
from course_utils.views.clientside.attention import attention_view  # noqa: E402
from course_utils.views.clientside.five import five_view  # noqa: E402
from course_utils.views.clientside.loader import NPM_PACKAGES, VEGA_FILES, VEGA_STATIC_DIR  # noqa: E402
from course_utils.views.clientside.word_order import word_order_view  # noqa: E402
from course_utils.views.clientside.word_path import word_path_view  # noqa: E402

NPM_CACHE = ROOT / "build" / "npm"

# In the page: the controls of one view, as [[kind, name, [values...]], ...] (kind "select" or "radio").
CONTROLS_JS = """vid => {
  const root = document.getElementById(vid);
  return [...root.querySelectorAll('.vega-bind')].map(b => {
    const sel = b.querySelector('select');
    if (sel) return ['select', sel.name || b.querySelector('.vega-bind-name').textContent, [...sel.options].map(o => o.value)];
    const radios = [...b.querySelectorAll('input[type=radio]')];
    return ['radio', radios[0].name, radios.map(r => r.value)];
  });
}"""

# In the page: the value each control of one view shows now, in CONTROLS_JS's order.
CURRENT_JS = """vid => [...document.getElementById(vid).querySelectorAll('.vega-bind')].map(b => {
  const sel = b.querySelector('select');
  return sel ? sel.value : [...b.querySelectorAll('input[type=radio]')].find(r => r.checked).value;
})"""

# In the page: set control i to value v, resolve with [ms to the SVG's first change, ms to the next frame].
CHANGE_JS = """([vid, i, v]) => new Promise((resolve, reject) => {
  const root = document.getElementById(vid);
  const bind = root.querySelectorAll('.vega-bind')[i];
  const target = root.querySelector('svg');
  let t0, tDom;
  const obs = new MutationObserver(() => {
    if (tDom !== undefined) return;
    tDom = performance.now() - t0;
    obs.disconnect();
    requestAnimationFrame(() => resolve([tDom, performance.now() - t0]));
  });
  obs.observe(target, {subtree: true, childList: true, attributes: true, characterData: true});
  setTimeout(() => { obs.disconnect(); if (tDom === undefined) reject(new Error('no redraw in 5 s')); }, 5000);
  const sel = bind.querySelector('select');
  t0 = performance.now();
  if (sel) {
    sel.value = v;
    sel.dispatchEvent(new Event('change', {bubbles: true}));
  } else {
    const r = [...bind.querySelectorAll('input[type=radio]')].find(r => r.value === v);
    r.checked = true;
    r.dispatchEvent(new Event('change', {bubbles: true}));
  }
})"""


def snake(values: list[list]) -> list[tuple[int, str]]:
    """Steps (control index, value) that visit every combination of `values`, one control changed per step
    (a boustrophedon walk: the last control sweeps forward, then backward, ...), starting from each first value."""
    steps: list[tuple[int, str]] = []

    def walk(i: int, forward: list[bool]):
        if i == len(values):
            return
        order = values[i] if forward[i] else values[i][::-1]
        for n, v in enumerate(order):
            if n:
                steps.append((i, v))
            walk(i + 1, forward)
        forward[i] = not forward[i]

    walk(0, [True] * len(values))
    return steps


def stand_in_page(folder: Path) -> Path:
    """A page with attention_view, word_order_view, word_path_view and five_view, and the vega files from build/npm/."""
    pass
    from course_utils.core.data import load_probes
    from course_utils.measures.clustering import PAIR
    from course_utils.trace.tracing import run_with_trace
    from course_utils.training.zoo import load_standard_model

    static = folder / VEGA_STATIC_DIR
    static.mkdir(parents=True)
    for spec in NPM_PACKAGES:
        tarball = NPM_CACHE / (spec.replace("@", "-") + ".tgz")
        if not tarball.exists():
            sys.exit(f"{tarball.relative_to(ROOT)} missing: run `make html` once (it fetches the pinned npm packages)")
        with tarfile.open(tarball) as tar:
            for local, _ in VEGA_FILES.values():
                member = f"package/build/{local}"
                if member in tar.getnames():
                    (static / local).write_bytes(tar.extractfile(member).read())
    model = load_standard_model().model
    views = [
        attention_view({s: run_with_trace(model, s) for s in load_probes("five_sentences")}),
        word_order_view(
            {pe: word_order_traces(load_standard_model(pe).model) for pe in ("learned", "sinusoidal", "none")}
        ),
        word_path_view(load_standard_model().snapshots, PAIR, defaults={"layer": 1}),  # notebook 06
        five_view(five_sentences(), label="seed 0"),  # notebook 08
    ]
    page = folder / "clientside_views.html"
    body = "\n".join(v.bundles()[1]["text/html"] for v in views)
    page.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'></head><body>{body}</body></html>", encoding="utf-8"
    )
    for v in views:
        print(f"stand-in page: {v.id}: {v.description.split(':')[0]} ({v.nbytes / 1000:.0f} kB in a notebook)")
    return page


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[-1] if len(xs) > 1 else xs[0]


def bench_page(browser, path: Path, rounds: int) -> list[tuple[str, int, list[float], list[float]]]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:")) else r.abort())
    page.goto(path.resolve().as_uri())
    results = []
    for vid in page.eval_on_selector_all(".qkv-clientside", "els => els.map(e => e.id)"):
        page.wait_for_selector(f"#{vid} svg .mark-rect, #{vid} svg .mark-symbol, #{vid} svg path", state="attached")
        controls = page.evaluate(CONTROLS_JS, vid)
        current = page.evaluate(CURRENT_JS, vid)  # a view may open on other values than the first (defaults=)
        controls = [
            [kind, name, [now, *(v for v in vals if v != now)]] for (kind, name, vals), now in zip(controls, current)
        ]
        steps = snake([c[2] for c in controls])
        states = [[c[2][0] for c in controls]]  # the values before each step (the shown ones first), to walk back
        for i, v in steps:
            states.append(states[-1][:i] + [v] + states[-1][i + 1 :])
        back = [(i, states[k][i]) for k, (i, _) in reversed(list(enumerate(steps)))]
        dom, frame = [], []
        for r in range(rounds):  # forward, back, forward, ...: every step changes one control
            for i, v in steps if r % 2 == 0 else back:
                a, b = page.evaluate(CHANGE_JS, [vid, i, v])
                dom.append(a)
                frame.append(b)
        n_choices = 1
        for c in controls:
            n_choices *= len(c[2])
        results.append((f"{path.name}#{vid} ({n_choices} choices)", len(steps), dom, frame))
    page.close()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pages", nargs="*", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        pages = args.pages or [
            p for p in sorted((ROOT / "build" / "html").glob("*.html")) if "qkv-clientside" in p.read_text("utf-8")
        ]
        if not pages:
            pages = [stand_in_page(Path(tmp))]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            print("client-side views: control change -> redrawn (ms; goal p95 <= 50)")
            for path in pages:
                for name, _steps, dom, frame in bench_page(browser, path, args.rounds):
                    print(
                        f"  {name}: {len(dom)} changes; SVG changed median {statistics.median(dom):.1f}"
                        f" p95 {p95(dom):.1f}; on screen (next frame) median {statistics.median(frame):.1f}"
                        f" p95 {p95(frame):.1f}"
                    )
            browser.close()


if __name__ == "__main__":
    main()
