"""Export the committed notebooks to static HTML the way nbviewer shows them, with an index page.

    python tools/export_html.py --out build/html [notebooks...]      (what `make html` runs)

Each notebook is rendered with nbconvert's HTMLExporter and its default "lab" template (nbviewer's),
from the committed outputs (nothing is executed): PNG figures are embedded as data: URLs and the saved
widget state is embedded too. Offline, or without JavaScript, the widgets cannot render, which is why
every widget cell in the course is followed by a static figure. OUT/index.html links the pages in order.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TITLE = "Understanding Q, K, V"

INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>body {{ font-family: sans-serif; max-width: 44em; margin: 2em auto; line-height: 1.6; }}</style>
</head>
<body>
<h1>{title}</h1>
<ol>
{items}
</ol>
</body>
</html>
"""


def heading(nb) -> str:
    """The notebook's first markdown heading as plain text (emphasis and code marks removed)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return re.sub(r"[*`]", "", line.lstrip("#")).strip()
    return ""


def export(paths: list[Path], out_dir: Path) -> list[Path]:
    """Export each notebook to out_dir/<stem>.html (in the given order) and write out_dir/index.html.

    Returns the exported pages, in order (the index is not among them)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter()  # template "lab", as nbviewer; embeds images and the saved widget state
    pages, items = [], []
    for path in map(Path, paths):
        nb = nbformat.read(path, as_version=4)
        title = heading(nb) or path.stem
        nb.metadata["title"] = title  # the page's <title> (else the file name); this copy is not saved
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
        page = out_dir / f"{path.stem}.html"
        page.write_text(body, encoding="utf-8")
        pages.append(page)
        items.append(f'<li><a href="{html.escape(page.name)}">{html.escape(title)}</a></li>')
    (out_dir / "index.html").write_text(
        INDEX.format(title=html.escape(TITLE), items="\n".join(items)), encoding="utf-8"
    )
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("build/html"), help="output folder (default build/html)")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb, sorted")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    for page in export(paths, args.out):
        print(f"{page}: {page.stat().st_size / 1e6:.2f} MB")
    print(f"{args.out / 'index.html'}: {len(paths)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
