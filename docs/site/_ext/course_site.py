"""The course website's own Sphinx extension (docs/site/conf.py loads it; tools/site.py runs the build).

- Each notebook's Evidence part and its Solutions section stay on the notebook's page, but folded: their
  heading is shown, the rest sits in a closed <details> (opened by clicking its summary, or by a link into it:
  _static/course.js); they leave the page's table of contents.
- CourseMimeRenderer (a MyST-NB mime render plugin, registered by the entry point in
  course_site-1.0.dist-info/ next to this file) renders:
  * the Vega-Lite spec of a client-side view (application/vnd.vegalite.v5+json) live, with the view's own
    drawing script (course_utils.views.clientside.base.view_html), which loads the pinned Vega files from the
    site's _static/vega/; the view's text/html twin (the same drawing, for nbconvert) is then left out;
  * every image with the alt text saved in its output's metadata (course_utils.views.style.describe), or, for an
    output saved before figures carried one, the sentence "A figure." (never an empty alt).
- At the end of the build, copies the offline assets into the site's _static/ (tools/export_html.copy_assets:
  MathJax 2 from jupyter-server-mathjax, require.js, the widget manager, Vega; pinned npm tarballs).
"""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parents[3]
VEGALITE_MIME = "application/vnd.vegalite.v5+json"
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
NO_ALT = "A figure."  # the fallback for an image output saved with no alt in its metadata


def folded(title: str) -> bool:
    """Whether a notebook's level-2 section goes out of the lesson's way: its Evidence part and its Solutions."""
    return "Evidence" in title or title.strip() == "Solutions"


class details(nodes.General, nodes.Element):
    """A <details> element: its `summary` attribute is the clickable line; its children are folded."""


def visit_details(self, node):
    self.body.append(f'<details class="course-folded"><summary>{self.encode(node["summary"])}</summary>\n')


def depart_details(self, node):
    self.body.append("</details>\n")


def fold_sections(app, doctree):
    """Fold the Evidence and Solutions sections of a notebook page (level 2: children of the page's section)."""
    if app.env.docname[:2].isdigit():
        for top in doctree.findall(nodes.section):
            for section in [c for c in top.children if isinstance(c, nodes.section)]:
                title = section.next_node(nodes.title)
                text = title.astext() if title is not None else ""
                if folded(text):
                    body = [c for c in section.children if not isinstance(c, nodes.title)]
                    summary = "Show the worked solutions" if text.strip() == "Solutions" else "Show the evidence"
                    box = details(summary=summary)
                    for child in body:
                        section.remove(child)
                    box.extend(body)
                    section.append(box)
            break  # the page's own (first) section only


class CourseMimeRenderer:
    """MyST-NB mime render plugin: live client-side views, and alt text on every image."""

    # the Vega-Lite spec ahead of its text/plain sentence (the html builder's text/html is 30, image/png 50)
    mime_priority_overrides = [("html", VEGALITE_MIME, 20)]

    @staticmethod
    def handle_mime(renderer, data, inline):
        if inline:
            return None
        if data.mime_type == VEGALITE_MIME:
            from course_utils.views.clientside.base import view_html  # noqa: PLC0415

            spec = data.content if isinstance(data.content, dict) else __import__("json").loads(data.content)
            return [nodes.raw(text=view_html(spec), format="html")]
        if data.mime_type == "text/html" and 'class="qkv-clientside"' in data.string:
            return []  # the twin of a Vega-Lite output, drawn above from the spec
        if data.mime_type in IMAGE_MIMES:
            images = renderer.render_image(data)
            meta = data.output_metadata or {}
            alt = (meta.get(data.mime_type) or {}).get("alt") or meta.get("alt") or NO_ALT
            for image in images:
                if isinstance(image, nodes.image):
                    image["alt"] = str(alt)
            return images
        return None


def copy_static(app, exception):
    if exception is None and app.builder.format == "html":
        sys.path.insert(0, str(ROOT / "tools"))
        from export_html import copy_assets  # noqa: PLC0415  (the pinned npm files and MathJax)

        copy_assets(Path(app.outdir))


def setup(app):
    app.add_node(details, html=(visit_details, depart_details))
    app.connect("doctree-read", fold_sections, priority=400)  # before the toctree collector reads the sections
    app.connect("build-finished", copy_static)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def jupyter_slug(title: str) -> str:
    """A heading's anchor as Jupyter names it: the heading text with its spaces as hyphens (case kept)."""
    return "-".join(title.strip().split(" "))
