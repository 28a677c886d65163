"""Build the course website from the committed notebooks (Sphinx + MyST-NB + sphinx-book-theme; nothing is run).

    python tools/site.py [--out build/site]        (what `make site` runs)

Lays out the sources in build/site_src/ (the notebooks, docs/site/index.md with the notebooks' toctree, the teaching
guide docs/teaching.md, a page with the README's claims ledger, docs/claims_ledger.md, docs/source_claims.md and
docs/glossary.md, with their links rewritten to the site's pages), then runs sphinx-build with docs/site/conf.py.
Every page works offline: see docs/site/conf.py. Prints the build time.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "docs" / "site"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = {  # page on the site -> (source, the part of it: a heading to start at, or None for all of it)
    "teaching": (ROOT / "docs" / "teaching.md", None),  # the teaching guide: the first page after the home page
    "claims": (ROOT / "README.md", "## Claims ledger"),
    "claims_ledger": (ROOT / "docs" / "claims_ledger.md", None),
    "source_claims": (ROOT / "docs" / "source_claims.md", None),
    "glossary": (ROOT / "docs" / "glossary.md", None),
}
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def _relink(text: str) -> str:
    """Markdown links to repository files as links to the site's pages; a link to a file the site does not
    have (LICENSE, CONTRIBUTING.md) keeps its text only; links to other sites and anchors stay."""
    names = {p.name for p in NOTEBOOKS} | {f"{page}.md" for page in PAGES}
    aliases = {"README.md": "claims.md"}

    def one(m):
        label, target = m.groups()
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            return m.group()
        path, _, anchor = target.partition("#")
        name = aliases.get(Path(path).name, Path(path).name)
        if name in names:
            anchor = "" if name in aliases.values() else anchor  # README's part is a page of its own
            return f"[{label}]({name}{'#' + anchor if anchor else ''})"
        return label

    return LINK.sub(one, text)


def _part(text: str, start: str | None) -> str:
    """The section of `text` from the heading `start` up to the next heading of its level (all if None), as a
    page of its own (its heading made the page title)."""
    if start is None:
        return text
    lines = text.splitlines()
    i = lines.index(start)
    level = start.split(" ")[0]
    end = next((j for j in range(i + 1, len(lines)) if lines[j].split(" ")[0] == level), len(lines))
    return "\n".join(["# " + start.split(" ", 1)[1], *lines[i + 1 : end]]) + "\n"


def layout(src: Path) -> Path:
    """Write the site's sources into `src` (emptied first)."""
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    for nb in NOTEBOOKS:  # a copy whose markdown links name the site's pages (the repository's stay as they are)
        notebook = json.loads(nb.read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            if cell["cell_type"] == "markdown":
                text = "".join(cell["source"])
                cell["source"] = _relink(text) if LINK.search(text) else cell["source"]
        (src / nb.name).write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    index = (CONF / "index.md").read_text(encoding="utf-8")
    (src / "index.md").write_text(index.replace("NOTEBOOKS", "\n".join(nb.stem for nb in NOTEBOOKS)), "utf-8")
    for page, (source, start) in PAGES.items():
        (src / f"{page}.md").write_text(_relink(_part(source.read_text(encoding="utf-8"), start)), "utf-8")
    return src


def build(out: Path, src: Path | None = None, quiet: bool = True) -> float:
    """Lay out the sources and build the site into `out`; returns the seconds it took. Raises on failure."""
    start = time.perf_counter()
    src = layout(src or out.parent / "site_src")
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(CONF), "-E", str(src), str(out)]
    if quiet:
        cmd.insert(3, "-q")
    subprocess.run(cmd, check=True, cwd=ROOT)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site", help="output folder (build/site)")
    args = parser.parse_args(argv)
    try:
        seconds = build(args.out.resolve(), quiet=False)
    except subprocess.CalledProcessError as e:
        print(f"error: sphinx-build failed ({e.returncode})", file=sys.stderr)
        return 1
    print(f"{args.out}/index.html: the course website, built in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
