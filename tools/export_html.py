"""Export the committed notebooks to static HTML the way nbviewer shows them, with an index page.

    python tools/export_html.py --out build/html [notebooks...]      (what `make html` runs)

Each notebook is rendered with nbconvert's HTMLExporter and its default "lab" template (nbviewer's),
from the committed outputs (nothing is executed): PNG figures are embedded as data: URLs and the saved
widget state is embedded too. OUT/index.html links the pages in order.

The pages work offline, opened from disk: every script they load lies in OUT/_static/ and is referenced
relatively (nbconvert's defaults fetch them from CDNs):
- MathJax 2.7.9 from the pip package jupyter-server-mathjax (all but its SVG output: TeX input, HTML-CSS output
  with its STIX-Web fonts), configured by _static/mathjax/config/local/course.js; it typesets `$W^Q$` in the prose;
- require.js and the widget manager's embed bundle (@jupyter-widgets/html-manager's dist/embed-amd.js), which
  renders the saved widget state: the controls are shown with their saved values, but changing one redraws
  nothing (there is no kernel; the template html_template/course/, nbconvert's "lab" otherwise, says so in a
  sentence under each widget), which is why every widget cell in the course is followed by a static figure;
- Vega, Vega-Lite and vega-embed (_static/vega/vega.min.js, vega-lite.min.js, vega-embed.min.js) for
  client-side views, which redraw in the browser from data saved in the output.
The npm files come from the pinned tarballs in NPM (`npm pack`, checked against their sha512 integrity),
fetched once into build/npm/ and reused; only that first fetch needs the npm registry.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from fnmatch import fnmatch
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NPM_CACHE = ROOT / "build" / "npm"
TEMPLATES = Path(__file__).resolve().parent / "html_template"  # course/: nbconvert's "lab" + a widget note
TITLE = "Understanding Q, K, V"

STATIC = "_static"  # folder next to the pages holding every script they load
# npm package -> (sha512 integrity of its tarball, {file in the tarball: where it goes under STATIC}).
# A key ending in "/" copies the files right under it whose names match one of WIDGET_FILES' patterns.
NPM = {
    "requirejs@2.3.8": (
        "sha512-7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+Jd5otXKGNehIonFlyQXSowL6Mw==",
        {"package/require.js": "require.js"},
    ),
    "@jupyter-widgets/html-manager@1.0.15": (  # html-manager 1.0 is ipywidgets 8's (widget state version 2)
        "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
        {"package/dist/": "html-manager/"},  # its licences: dist/embed.js.LICENSE.txt
    ),
    "vega@5.33.0": (
        "sha512-jNAGa7TxLojOpMMMrKMXXBos4K6AaLJbCgGDOw1YEkLRjUkh12pcf65J2lMSdEHjcEK47XXjKiOUVZ8L+MniBA==",
        {"package/build/vega.min.js": "vega/vega.min.js", "package/LICENSE": "vega/LICENSE-vega"},
    ),
    "vega-lite@5.20.1": (
        "sha512-rpw6aT3NXR4bIdctPpK/V+FZAt1VNHMEnfF/TxaZDc4PDOzfYXiYOFf0zOMURUq/EyzFCkhBvtkf1MzmqlAz9g==",
        {"package/build/vega-lite.min.js": "vega/vega-lite.min.js", "package/LICENSE": "vega/LICENSE-vega-lite"},
    ),
    "vega-embed@6.29.0": (
        "sha512-PmlshTLtLFLgWtF/b23T1OwX53AugJ9RZ3qPE2c01VFAbgt3/GSNI/etzA/GzdrkceXFma+FDHNXUppKuM0U6Q==",
        {"package/build/vega-embed.min.js": "vega/vega-embed.min.js", "package/LICENSE": "vega/LICENSE-vega-embed"},
    ),
}
# from html-manager's dist/: the bundle and the Font Awesome fonts its CSS loads (woff2 first; woff as fallback)
WIDGET_FILES = ("embed-amd.js", "*.woff2", "*.woff", "*.LICENSE.txt")

# MathJax 2 from jupyter-server-mathjax, less what these pages never load (its SVG output); its localization stays:
# MathJax loads the reader's browser language
MATHJAX_SKIP = ("jax/output/SVG",)
MATHJAX_CONFIG = """\
/* The course's MathJax settings on top of nbconvert's: the web font this MathJax copy ships (STIX-Web),
   no image fonts, and nothing fetched from the network. */
MathJax.Hub.Config({
  "HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},
  menuSettings: {zoom: "None"}
});
MathJax.Ajax.loadComplete("[MathJax]/config/local/course.js");
"""

URLS = {  # HTMLExporter settings, relative to the page
    "require_js_url": f"{STATIC}/require.js",
    "mathjax_url": f"{STATIC}/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe,local/course",
    "widget_renderer_url": f"{STATIC}/html-manager/embed-amd.js",
}

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


class AssetError(RuntimeError):
    """A script the pages need could not be had (npm or the registry unreachable on the first fetch)."""


def heading(nb) -> str:
    """The notebook's first markdown heading as plain text (emphasis and code marks removed)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return re.sub(r"[*`]", "", line.lstrip("#")).strip()
    return ""


def _integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def npm_tarball(spec: str, integrity: str, cache: Path = NPM_CACHE) -> Path:
    """The tarball of the pinned npm package `spec` (name@version) in `cache`, fetched with `npm pack` if absent.

    Raises AssetError when it cannot be fetched or its sha512 is not the pinned one."""
    name, version = spec.rsplit("@", 1)
    tarball = cache / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"  # npm pack's file name
    if not (tarball.is_file() and _integrity(tarball) == integrity):
        cache.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        if npm is None:
            raise AssetError(f"npm is needed once to fetch {spec} into {cache} (install Node.js)")
        with tempfile.TemporaryDirectory(dir=cache) as tmp:  # then moved into place: parallel exports are safe
            done = subprocess.run(
                [npm, "pack", spec, "--pack-destination", tmp, "--silent"], capture_output=True, text=True
            )
            fetched = Path(tmp) / tarball.name
            if done.returncode != 0 or not fetched.is_file():
                raise AssetError(f"`npm pack {spec}` failed (no npm registry?): {done.stderr.strip()[-500:]}")
            if _integrity(fetched) != integrity:
                raise AssetError(f"{spec}: the registry's tarball is not the pinned one (sha512 differs)")
            fetched.replace(tarball)
    return tarball


def copy_assets(out_dir: Path, cache: Path = NPM_CACHE) -> Path:
    """Put every script the pages load into out_dir/_static (MathJax, require.js, widget manager, Vega)."""
    try:
        import jupyter_server_mathjax  # noqa: PLC0415  (the pip package that ships MathJax 2)
    except ImportError as e:
        raise AssetError("the pip package jupyter-server-mathjax (MathJax) is missing: `make install`") from e

    static = Path(out_dir) / STATIC
    mathjax = Path(jupyter_server_mathjax.__file__).parent / "static"
    shutil.copytree(
        mathjax,
        static / "mathjax",
        dirs_exist_ok=True,
        ignore=lambda d, names: [n for n in names if (Path(d) / n).relative_to(mathjax).as_posix() in MATHJAX_SKIP],
    )
    local = static / "mathjax" / "config" / "local"
    local.mkdir(parents=True, exist_ok=True)
    (local / "course.js").write_text(MATHJAX_CONFIG, encoding="utf-8")
    for spec, (integrity, files) in NPM.items():
        copied = set()
        with tarfile.open(npm_tarball(spec, integrity, cache)) as tar:
            for member in tar.getmembers():
                for src, dest in files.items():
                    if src.endswith("/"):
                        rest = member.name.removeprefix(src)
                        if (
                            member.name.startswith(src)
                            and "/" not in rest
                            and any(fnmatch(rest, p) for p in WIDGET_FILES)
                        ):
                            target = static / dest / rest
                            break
                    elif member.name == src:
                        target = static / dest
                        break
                else:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())
                copied.add(src)
        if copied != set(files):
            raise AssetError(f"{spec}: nothing in its tarball for {sorted(set(files) - copied)}")
    return static


def export(paths: list[Path], out_dir: Path) -> list[Path]:
    """Export each notebook to out_dir/<stem>.html (in the given order), write out_dir/index.html and the
    scripts the pages load into out_dir/_static/.

    Returns the exported pages, in order (the index is not among them)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    copy_assets(out_dir)
    # nbviewer's template "lab" (html_template/course/ adds a sentence under each saved widget); embeds images
    # as data: URLs and the saved widget state
    exporter = HTMLExporter(template_name="course", extra_template_basedirs=[str(TEMPLATES)], **URLS)
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
    parser.add_argument(
        "--fetch-only", action="store_true", help="only fetch the pinned npm tarballs into build/npm/ (make test)"
    )
    args = parser.parse_args(argv)
    if args.fetch_only:
        try:
            tarballs = [npm_tarball(spec, integrity) for spec, (integrity, _files) in NPM.items()]
        except AssetError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"{NPM_CACHE}: {len(tarballs)} pinned npm tarballs")
        return 0
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    try:
        pages = export(paths, args.out)
    except AssetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for page in pages:
        print(f"{page}: {page.stat().st_size / 1e6:.2f} MB")
    static = args.out / STATIC
    size = sum(f.stat().st_size for f in static.rglob("*") if f.is_file())
    print(f"{static}/: {size / 1e6:.2f} MB (scripts and fonts shared by every page)")
    print(f"{args.out / 'index.html'}: {len(paths)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
