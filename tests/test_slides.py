"""The slide decks for teaching the course in two weeks (`make slides`: tools/slides.py, outlines in slides/).

Without building anything (fast): each week's outline plans 8-12 slides of 2-4 bullets, opens with what the week
answers and ends with a recap, takes figures from its own notebooks (every one of them), and shows no claim ID or
verdict word (the lesson's rule, tests/test_notebook_standard.py), alt texts included; an outline naming a heading
that is not there (a copy with one heading misspelt) or a figure that is not there stops the build with a one-line
message, and nothing is written.

Built once into a temporary folder (slow: the first build fetches reveal.js's pinned tarball with `npm pack`; skipped
without npm, failed under CI): each deck has the planned slides in order; every figure is an embedded PNG that
decodes, is the one under the named heading of the named notebook (found here by its bytes, on its own) and has alt
text; no script or stylesheet comes from the network and every file a deck loads is there. In headless Chromium with
the network cut off (browser): reveal.js starts, counts the outline's slides, and every figure is drawn.
"""

from __future__ import annotations

import base64
import html
import importlib.util
import io
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import missing_tool, offline_page
from PIL import Image
from test_notebook_standard import CLAIM_ID, VERDICT_WORDS  # the lesson's rule for claim IDs and verdict words

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("course_slides", ROOT / "tools" / "slides.py")
tool = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = tool  # its dataclasses look their module up there
spec.loader.exec_module(tool)

WEEKS = {"week1": ("01", "02", "03", "04", "05"), "week2": ("06", "07", "08", "09", "10")}
OUTLINES = {w: ROOT / "slides" / f"{w}.md" for w in WEEKS}
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")


def figure_slides(outline):
    return [s for s in outline.slides if s.notebook]


@pytest.mark.parametrize("week", WEEKS)
def test_outline_plans_the_week(week):
    outline = tool.read_outline(OUTLINES[week])
    n = week[-1]
    assert 8 <= len(outline.slides) <= 12, f"{week}: {len(outline.slides)} slides"
    assert outline.slides[0].title == f"What week {n} answers"
    assert outline.slides[-1].title == f"Week {n} in plain words"
    assert all(2 <= len(s.bullets) <= 4 for s in outline.slides), [(s.title, len(s.bullets)) for s in outline.slides]
    named = {s.notebook[:2] for s in figure_slides(outline)}
    assert named == set(WEEKS[week]), f"{week}: figures from notebooks {sorted(named)}"
    assert len(figure_slides(outline)) >= len(outline.slides) // 2, "most slides show a figure"
    titles = [s.title for s in outline.slides]
    assert len(set(titles)) == len(titles), "slide titles differ"


@pytest.mark.parametrize("week", WEEKS)
def test_slides_carry_no_claim_ids_or_verdict_words(week):
    outline = tool.read_outline(OUTLINES[week])
    texts = [outline.title]
    for s in outline.slides:
        texts += [s.title, *s.bullets]
        if s.notebook:
            texts.append(s.alt or tool.find_figure(tool.NOTEBOOKS / s.notebook, s.under, s.number)[1])
    found = [m.group(0) for t in texts for m in (*CLAIM_ID.finditer(t), *VERDICT_WORDS.finditer(t))]
    assert not found, f"{week}: {found}"


def broken_copy(tmp_path, line, replacement):
    """A copy of week 1's outline with `line` replaced (the line must be there)."""
    text = OUTLINES["week1"].read_text(encoding="utf-8")
    assert line in text
    path = tmp_path / "week1.md"
    path.write_text(text.replace(line, replacement, 1), encoding="utf-8")
    return path


def test_a_renamed_heading_stops_the_build_with_one_line(tmp_path, capsys):
    path = broken_copy(tmp_path, "under: ## Six sentences as arrows", "under: ## Six sentences as arows")
    out = tmp_path / "out"
    with pytest.raises(tool.SlideError) as caught:
        tool.build([path], out)
    assert str(caught.value) == (
        "week1.md, slide 'Sentences as arrows': no heading 'Six sentences as arows' in 01_sentence_vectors.ipynb"
        " (renamed?)"
    )
    assert not out.exists(), "nothing written"
    assert tool.main(["--out", str(out), str(path)]) == 1
    err = capsys.readouterr().err
    assert err == f"error: {caught.value}\n", "one line"


def test_a_missing_figure_or_notebook_stops_the_build(tmp_path):
    path = broken_copy(tmp_path, "under: ## 6. Masks\nnumber: 2", "under: ## 6. Masks\nnumber: 3")
    with pytest.raises(tool.SlideError, match=r"slide 'Masks': 03_.*: 2 figure\(s\) under '6. Masks', not 3"):
        tool.build([path], tmp_path / "out")
    path = broken_copy(tmp_path, "figure: 04_multi_head_attention.ipynb", "figure: 04_multihead.ipynb")
    with pytest.raises(tool.SlideError, match=r"slide 'Several heads': no notebook 04_multihead.ipynb in "):
        tool.build([path], tmp_path / "out")
    path = broken_copy(
        tmp_path, "## What week 1 answers\n", "## What week 1 answers\nfigure: 01_sentence_vectors.ipynb\n"
    )
    with pytest.raises(
        tool.SlideError, match=r"slide 'What week 1 answers': a figure needs both 'figure:' and 'under:'"
    ):
        tool.build([path], tmp_path / "out")


def test_inline_marks():
    assert tool.inline("*eat* and **key** <pad>") == "<em>eat</em> and <strong>key</strong> &lt;pad&gt;"
    assert tool.inline("W^Q_h (W^K_h)ᵀ, W^O, d_model") == (
        "W<sup>Q</sup><sub>h</sub> (W<sup>K</sup><sub>h</sub>)ᵀ, W<sup>O</sup>, d_model"
    )


# ---- the built decks --------------------------------------------------------------------------------------------


class Tags(HTMLParser):
    """Every start tag (name, attributes), the <h2> texts and the number of <section>s of a page."""

    def __init__(self):
        super().__init__()
        self.tags, self.h2, self.sections, self._in_h2 = [], [], 0, False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.sections += tag == "section"
        if tag == "h2":
            self._in_h2 = True
            self.h2.append("")

    def handle_endtag(self, tag):
        self._in_h2 = self._in_h2 and tag != "h2"

    def handle_data(self, data):
        if self._in_h2:
            self.h2[-1] += data


def parse(deck: Path) -> Tags:
    tags = Tags()
    tags.feed(deck.read_text(encoding="utf-8"))
    return tags


def plain(text: str) -> str:
    """A title as the page shows it: the outline's marks (*, **, ^, _) dropped."""
    return re.sub(r"\*+|\^|(?<=[A-Z])_", "", text)


def figures_under_headings(notebook: Path) -> dict[bytes, list[str]]:
    """Every PNG output of a notebook -> the headings it sits under (the open heading of each level above its
    cell, outermost first), read here on its own."""
    found, open_ = {}, {}  # level -> heading text
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for line in re.sub(r"^```.*?^```", "", "".join(cell["source"]), flags=re.M | re.S).splitlines():
                if m := HEADING.match(line):
                    level = len(line) - len(line.lstrip("#"))
                    open_ = {lv: t for lv, t in open_.items() if lv < level} | {level: m.group(1)}
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                found[base64.b64decode("".join(output["data"]["image/png"]))] = [open_[lv] for lv in sorted(open_)]
    return found


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    """Both weeks built once: {week: deck path}."""
    out = tmp_path_factory.mktemp("slides")
    try:
        built = tool.build(list(OUTLINES.values()), out)
    except tool.AssetError as e:  # the first build fetches reveal.js's pinned tarball with npm pack
        missing_tool(str(e))
    return {p.stem: p for p in built}


@pytest.mark.slow
@pytest.mark.parametrize("week", WEEKS)
def test_deck_has_the_planned_slides(decks, week):
    outline = tool.read_outline(OUTLINES[week])
    page = parse(decks[week])
    assert page.sections == len(outline.slides)
    assert page.h2 == [plain(s.title) for s in outline.slides]
    assert f"<title>{html.escape(outline.title)}</title>" in decks[week].read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("week", WEEKS)
def test_every_figure_is_the_named_embedded_png(decks, week):
    outline = tool.read_outline(OUTLINES[week])
    images = [attrs for tag, attrs in parse(decks[week]).tags if tag == "img"]
    assert len(images) == len(figure_slides(outline))
    for slide, img in zip(figure_slides(outline), images):
        prefix = "data:image/png;base64,"
        assert img["src"].startswith(prefix), slide.title
        png = base64.b64decode(img["src"][len(prefix) :], validate=True)
        with Image.open(io.BytesIO(png)) as im:
            im.load()  # decodes every pixel
            assert im.format == "PNG"
            assert im.size == (int(img["width"]), int(img["height"])), slide.title
        under = figures_under_headings(tool.NOTEBOOKS / slide.notebook).get(png)
        assert under, f"{slide.title}: no such figure in {slide.notebook}"
        assert tool._heading_text(slide.under) in under, f"{slide.title}: the figure sits under {under}"
        assert len(img["alt"].split()) >= 5, f"{slide.title}: alt {img['alt']!r}"


@pytest.mark.slow
@pytest.mark.parametrize("week", WEEKS)
def test_nothing_is_loaded_from_the_network(decks, week):
    deck = decks[week]
    tags = parse(deck).tags
    loaded = [
        a.get("src") or a.get("href") for t, a in tags if t in ("script", "link") and (a.get("src") or a.get("href"))
    ]
    assert len(loaded) == 4, loaded  # reset.css, reveal.css, the theme, reveal.js
    for ref in loaded:
        assert not re.match(r"(https?:)?//", ref), ref
        assert (deck.parent / ref).is_file(), f"{ref} is not next to the deck"
    every_ref = [v for _, a in tags for k, v in a.items() if k in ("src", "href") and v]
    assert not [r for r in every_ref if re.match(r"(https?:)?//", r)]
    theme = (deck.parent / tool.REVEAL_DIR / "theme" / "white.css").read_text(encoding="utf-8")
    assert "@import" not in theme and not re.search(r"url\((['\"]?)(https?:)?//", theme), (
        "the theme's fonts are embedded"
    )


@pytest.mark.slow
def test_reveal_starts_offline_with_every_slide(decks, browser):
    outline = tool.read_outline(OUTLINES["week1"])
    page, aborted = offline_page(browser, viewport={"width": 1280, "height": 720})
    try:
        page.goto(decks["week1"].as_uri())
        page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=30_000)
        assert page.evaluate("Reveal.getTotalSlides()") == len(outline.slides)
        drawn = page.evaluate("[...document.images].filter(i => i.complete && i.naturalWidth > 0).length")
        assert drawn == len(figure_slides(outline))
        page.evaluate("Reveal.slide(Reveal.getTotalSlides() - 1)")
        assert page.evaluate("Reveal.isLastSlide()")
        assert page.evaluate("Reveal.getCurrentSlide().querySelector('h2').textContent") == outline.slides[-1].title
        assert not aborted, f"requests off the disk: {aborted}"
    finally:
        page.close()
