"""Sphinx configuration of the course website (`make site`: tools/site.py builds it into build/site/).

The sources are the committed notebooks, as they are (MyST-NB, nothing executed), and pages made from the
README's claims ledger and docs/*.md (tools/site.py lays them out in build/site_src/ with this folder's
index.md and _static/). Everything a page loads lies in the site: the theme's own bundled files, MathJax 2
(mathjax_path below), require.js and the widget manager (nb_ipywidgets_js), the Vega files of the client-side
views (docs/site/_ext/course_site.py copies them, with tools/export_html.py's pinned npm machinery).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))  # course_site.py and its entry point (the MyST-NB mime render plugin)
sys.path.insert(0, str(HERE.parents[1]))  # course_utils, for the client-side views' drawing script

project = "Understanding Q, K, V"
author = "the course authors"
copyright = "the course authors (MIT)"
language = "en"

extensions = ["myst_nb", "course_site"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
root_doc = "index"

# MyST-NB: the committed outputs, never re-executed
nb_execution_mode = "off"
nb_output_stderr = "show"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
# The notebooks link their worked solutions the way Jupyter names heading anchors ("#Solution-to-exercise-1":
# the heading text, spaces as hyphens); the site gives every heading that anchor too.
myst_heading_anchors = 4
myst_heading_slug_func = "course_site.jupyter_slug"
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

# Offline: MathJax 2 (pip package jupyter-server-mathjax, copied into _static/mathjax/ at the end of the build)
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe,local/course"
# ipywidgets' saved state: require.js and the widget manager's embed bundle, from _static/ (MyST-NB's default
# loads both from CDNs)
nb_ipywidgets_js = {
    "require.js": {},
    "html-manager/embed-amd.js": {"crossorigin": "anonymous"},
}

html_theme = "sphinx_book_theme"
html_title = "Understanding Q, K, V"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_js_files = ["course.js"]
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False
html_theme_options = {
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
    "show_prev_next": True,
}
# the theme's colour mode, set (left empty, the theme logs "Got invalid theme mode" as a console error)
html_context = {"default_mode": "light"}
