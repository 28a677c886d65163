"""Build one reveal.js slide deck per teaching week from the outlines in slides/ and the notebooks' figures.

    python tools/slides.py --out build/slides [slides/week1.md ...]      (what `make slides` runs)

An outline (slides/weekN.md) is plain markdown: a `# ` line titles the deck, each `## ` line starts a slide, and
under it come 2-4 bullet lines (`- ...`) and, optionally, one figure from a notebook's committed outputs, named
by the markdown heading it sits under (so it survives cells being added or moved):

    ## Why divide by √d?
    figure: 03_scaled_dot_product_attention.ipynb
    under: ## 4. Why divide by √d?
    number: 2                  (optional: the 2nd figure in that section; default 1)
    alt: ...                   (optional: else the figure's own alt text, saved in the notebook)
    - Dot products grow with the width d ...

An HTML comment (<!-- ... -->, on one line or several) is a note for the teacher and is not shown.

A heading's section runs from it to the next heading of the same or a higher level (its subsections are in it).
The figure is that section's n-th image/png output, embedded in the page as a data: URL; nothing is executed. If the notebook, the
heading or the figure is not there (a heading renamed, a figure removed), the build stops with one line saying
which slide names what. In bullets, *word* is italic, **word** bold, W^Q a superscript and W_h a subscript.

Each deck is OUT/weekN.html; reveal.js (the pinned npm tarball in REVEAL, fetched once into build/npm/ with
`npm pack` and checked against its sha512, as tools/export_html.py does) is copied into OUT/reveal/, referenced
relatively: the decks open from disk with no network. Keys: arrows or space to move, Esc for the overview,
F for full screen.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import html
import json
import re
import struct
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_html import NPM_CACHE, AssetError, npm_tarball  # noqa: E402  (one way to fetch a pinned npm file)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
OUTLINES = sorted((ROOT / "slides").glob("week*.md"))
REVEAL_DIR = "reveal"  # folder next to the decks holding reveal.js
# reveal.js's tarball (npm pack), its sha512 integrity, {file in the tarball: where it goes under REVEAL_DIR}.
# The white theme embeds its fonts as data: URLs (other themes @import Google Fonts).
REVEAL = (
    "reveal.js@6.0.2",
    "sha512-JYIg5D9aoxoaLeb84O+OvAwsKWdIavVgEDScxtYEXFCT6t6TQrhNtSgogcjdCpdLsWglhJn3zyE3fUOwiH5KEg==",
    {
        "package/dist/reveal.js": "reveal.js",
        "package/dist/reset.css": "reset.css",
        "package/dist/reveal.css": "reveal.css",
        "package/dist/theme/white.css": "theme/white.css",
        "package/LICENSE": "LICENSE",
    },
)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$")
FIELD = re.compile(r"^(figure|under|number|alt):\s*(.*?)\s*$")
WIDE = 1.6  # a figure wider than this (width / height) goes under the bullets, a narrower one beside them

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{title}</title>
<link rel="stylesheet" href="{reveal}/reset.css">
<link rel="stylesheet" href="{reveal}/reveal.css">
<link rel="stylesheet" href="{reveal}/theme/white.css">
<style>
.reveal h1 {{ font-size: 1.6em; }}
.reveal h2 {{ font-size: 1.25em; margin-bottom: 0.4em; }}
.reveal .course-source {{ font-size: 0.45em; color: #666; margin: 0 0 0.6em; }}
.reveal ul.course-points {{ font-size: 0.62em; line-height: 1.35; margin: 0; }}
.reveal ul.course-points li {{ margin-bottom: 0.45em; }}
.reveal .course-side {{ display: flex; gap: 1.2em; align-items: center; text-align: left; }}
.reveal .course-side ul.course-points {{ flex: 0 0 38%; }}
.reveal .course-side figure {{ flex: 1 1 auto; margin: 0; }}
.reveal .course-side img {{ max-height: 540px; max-width: 100%; margin: 0; }}
.reveal .course-stack ul.course-points {{ display: block; }}
.reveal .course-stack img {{ max-height: 400px; max-width: 100%; margin: 0.5em auto 0; display: block; }}
</style>
</head>
<body>
<div class="reveal">
<div class="slides">
{slides}
</div>
</div>
<script src="{reveal}/reveal.js"></script>
<script>
Reveal.initialize({{width: 1280, height: 720, hash: true, slideNumber: "c/t", transition: "none"}});
</script>
</body>
</html>
"""


class SlideError(ValueError):
    """An outline that cannot be built: unreadable, or naming a notebook, heading or figure that is not there."""


@dataclass
class Slide:
    title: str
    bullets: list[str] = field(default_factory=list)
    notebook: str | None = None  # file name in the notebooks folder
    under: str | None = None  # the markdown heading the figure sits under (text, with or without its #s)
    number: int = 1  # which figure of that section
    alt: str | None = None  # None: the figure's own alt text from the notebook


@dataclass
class Outline:
    path: Path
    title: str
    slides: list[Slide]


def read_outline(path: Path) -> Outline:
    """The deck title and slides of the markdown outline at `path` (format: this module's docstring).

    Raises SlideError, naming the line, on anything it does not understand."""
    path = Path(path)
    title, slides, comment = None, [], False
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        where = f"{path.name}:{n}"
        if line.startswith("<!--") or comment:  # an HTML comment, on one line or several: for the teacher
            comment = "-->" not in line
            continue
        if not line:
            continue
        if line.startswith("# "):
            if title is not None:
                raise SlideError(f"{where}: a second deck title {line!r}")
            title = line[2:].strip()
        elif line.startswith("## "):
            slides.append(Slide(title=line[3:].strip()))
        elif not slides:
            raise SlideError(f"{where}: {line!r} comes before the first slide (## title)")
        elif line.startswith("- "):
            slides[-1].bullets.append(line[2:].strip())
        elif raw.startswith("  ") and slides[-1].bullets:  # a bullet continued on the next line
            slides[-1].bullets[-1] += " " + line
        elif m := FIELD.match(line):
            key, value = m.groups()
            slide = slides[-1]
            if key == "figure":
                slide.notebook = value
            elif key == "under":
                slide.under = value
            elif key == "alt":
                slide.alt = value
            elif not value.isdigit() or int(value) < 1:
                raise SlideError(f"{where}: number must be 1, 2, ... (got {value!r})")
            else:
                slide.number = int(value)
        else:
            raise SlideError(
                f"{where}: not a bullet (- ...) or a figure line (figure:, under:, number:, alt:): {line!r}"
            )
    if title is None:
        raise SlideError(f"{path.name}: no deck title (a line starting with '# ')")
    if not slides:
        raise SlideError(f"{path.name}: no slides (lines starting with '## ')")
    for s in slides:
        if (s.notebook is None) != (s.under is None):
            raise SlideError(f"{path.name}, slide {s.title!r}: a figure needs both 'figure:' and 'under:'")
        if not s.bullets:
            raise SlideError(f"{path.name}, slide {s.title!r}: no bullet lines")
    return Outline(path, title, slides)


def _heading_text(text: str) -> str:
    m = HEADING.match(text.strip())
    return m.group(2) if m else text.strip()


def headings(cells: list[dict]) -> list[tuple[int, int, str]]:
    """(cell index, level, text) of every markdown heading of a notebook's cells, in order (not in code fences)."""
    found = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            fenced = False
            for line in "".join(cell["source"]).splitlines():
                fenced ^= line.lstrip().startswith("```")
                if not fenced and (m := HEADING.match(line)):
                    found.append((i, len(m.group(1)), m.group(2)))
    return found


def find_figure(notebook: Path, under: str, number: int = 1) -> tuple[bytes, str]:
    """The `number`-th PNG figure (bytes, its saved alt text) in the section of `notebook` under the markdown
    heading `under` (from that heading to the next of the same or a higher level: its subsections included), read
    from the committed outputs.

    Raises SlideError when the notebook, the heading (exactly one) or that figure is not there."""
    notebook = Path(notebook)
    if not notebook.is_file():
        raise SlideError(f"no notebook {notebook.name} in {notebook.parent}")
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    want = _heading_text(under)
    marks = headings(cells)
    starts = [k for k, (_, _, text) in enumerate(marks) if text == want]
    if len(starts) != 1:
        found = "no heading" if not starts else f"{len(starts)} headings"
        raise SlideError(f"{found} {want!r} in {notebook.name} (renamed?)")
    first, level, _ = marks[starts[0]]
    last = next((i for i, lv, _ in marks[starts[0] + 1 :] if lv <= level), len(cells))  # the next section's cell
    figures = []
    for cell in cells[first + 1 : last]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                meta = output.get("metadata", {})
                alt = (meta.get("image/png") or {}).get("alt") or meta.get("alt") or ""
                figures.append((data["image/png"], alt))
    if len(figures) < number:
        raise SlideError(
            f"{notebook.name}: {len(figures)} figure(s) under {want!r}, not {number} (figure removed or moved?)"
        )
    encoded, alt = figures[number - 1]
    try:
        png = base64.b64decode("".join(encoded), validate=False)
    except binascii.Error as e:
        raise SlideError(f"{notebook.name}: figure {number} under {want!r} is not base64 ({e})") from e
    if not png.startswith(PNG_SIGNATURE):
        raise SlideError(f"{notebook.name}: figure {number} under {want!r} is not a PNG")
    return png, alt


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) of a PNG, read from its IHDR chunk."""
    return struct.unpack(">II", png[16:24])


def inline(text: str) -> str:
    """Escape `text` for HTML and render **bold**, *italic*, X^Q superscripts and X_h subscripts."""
    out = html.escape(text, quote=False)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"\*(.+?)\*", r"<em>\1</em>", out)
    out = re.sub(
        r"(?<=\w)\^([A-Za-z0-9]+)(?:_([A-Za-z0-9])\b)?",
        lambda m: f"<sup>{m[1]}</sup>" + (f"<sub>{m[2]}</sub>" if m[2] else ""),
        out,
    )
    return re.sub(r"(?<=[A-Z])_([A-Za-z0-9])\b", r"<sub>\1</sub>", out)


def render_slide(slide: Slide, notebooks: Path) -> str:
    """One reveal.js <section>: title, bullets and, if named, the figure as a data: URL with its alt text."""
    points = "\n".join(f"<li>{inline(b)}</li>" for b in slide.bullets)
    ul = f'<ul class="course-points">\n{points}\n</ul>'
    if slide.notebook is None:
        return f"<section>\n<h2>{inline(slide.title)}</h2>\n{ul}\n</section>"
    png, saved_alt = find_figure(notebooks / slide.notebook, slide.under, slide.number)
    alt = (slide.alt or saved_alt).replace("$", "").strip()
    if not alt:
        raise SlideError(f"{slide.notebook}: the figure under {_heading_text(slide.under)!r} has no alt text")
    width, height = png_size(png)
    src = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    img = f'<figure><img src="{src}" alt="{html.escape(alt)}" width="{width}" height="{height}"></figure>'
    layout = "course-stack" if width / height > WIDE else "course-side"
    source = f"Notebook {slide.notebook[:2]}, {inline(_heading_text(slide.under))}"
    return (
        f'<section>\n<h2>{inline(slide.title)}</h2>\n<p class="course-source">{source}</p>\n'
        f'<div class="{layout}">\n{ul}\n{img}\n</div>\n</section>'
    )


def copy_reveal(out_dir: Path, cache: Path = NPM_CACHE) -> Path:
    """Put reveal.js's script, styles, white theme and licence into out_dir/reveal/ (from the pinned tarball)."""
    spec, integrity, files = REVEAL
    target = Path(out_dir) / REVEAL_DIR
    copied = set()
    with tarfile.open(npm_tarball(spec, integrity, cache)) as tar:
        for member in tar.getmembers():
            if member.name in files:
                dest = target / files[member.name]
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(tar.extractfile(member).read())
                copied.add(member.name)
    if copied != set(files):
        raise AssetError(f"{spec}: nothing in its tarball for {sorted(set(files) - copied)}")
    return target


def build(outlines: list[Path], out_dir: Path, notebooks: Path = NOTEBOOKS, cache: Path = NPM_CACHE) -> list[Path]:
    """Write one deck per outline, out_dir/<outline stem>.html, and reveal.js into out_dir/reveal/.

    Every outline is read and every figure found before anything is written. Raises SlideError (an outline or a
    figure it names) or AssetError (reveal.js could not be had). Returns the decks, in order."""
    rendered = []
    for path in map(Path, outlines):
        outline = read_outline(path)
        sections = []
        for slide in outline.slides:
            try:
                sections.append(render_slide(slide, Path(notebooks)))
            except SlideError as e:
                raise SlideError(f"{path.name}, slide {slide.title!r}: {e}") from None
        page = PAGE.format(title=html.escape(outline.title), reveal=REVEAL_DIR, slides="\n".join(sections))
        rendered.append((path.stem, page))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    copy_reveal(out_dir, cache)
    decks = []
    for stem, page in rendered:
        deck = out_dir / f"{stem}.html"
        deck.write_text(page, encoding="utf-8")
        decks.append(deck)
    return decks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("build/slides"), help="output folder (default build/slides)")
    parser.add_argument("outlines", nargs="*", type=Path, help="default: slides/week*.md")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        decks = build(args.outlines or OUTLINES, args.out)
    except (SlideError, AssetError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    for deck in decks:
        n = deck.read_text(encoding="utf-8").count("<section>")
        print(f"{deck}: {n} slides, {deck.stat().st_size / 1e6:.2f} MB")
    reveal = args.out / REVEAL_DIR
    size = sum(f.stat().st_size for f in reveal.rglob("*") if f.is_file())
    print(f"{reveal}/: {size / 1e6:.2f} MB (reveal.js, shared by the decks); built in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
