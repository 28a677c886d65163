"""tools/launch_links.py on copies of the README, pyproject.toml and the notebooks: one address, every link.

A fake address (teacher/qkv-course) must give Colab and Binder links to each notebook in the README and under each
notebook's title, and the setup cell's install source; a second run changes nothing; removing the address removes
every link and gives back the files as they were. The committed files carry no address and no link that points nowhere.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "launch_links.py"
REPO = "teacher/qkv-course"
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def run(root: Path, *args: str) -> None:
    subprocess.run([sys.executable, str(TOOL), "--root", str(root), *args], check=True, capture_output=True)


def snapshot(root: Path) -> dict[str, str]:
    files = [root / "README.md", root / "pyproject.toml", *sorted((root / "notebooks").glob("*.ipynb"))]
    return {p.name: p.read_text(encoding="utf-8") for p in files}


def cells(root: Path, name: str) -> list[dict]:
    return json.loads((root / "notebooks" / name).read_text(encoding="utf-8"))["cells"]


def first(root: Path, name: str, kind: str) -> str:
    return "".join(next(c for c in cells(root, name) if c["cell_type"] == kind)["source"])


@pytest.fixture
def course(tmp_path):
    shutil.copy(ROOT / "README.md", tmp_path)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return tmp_path


def colab(name: str) -> str:
    return f"https://colab.research.google.com/github/{REPO}/blob/main/notebooks/{name}"


def binder(name: str) -> str:
    return f"https://mybinder.org/v2/gh/{REPO}/main?urlpath=lab/tree/notebooks/{name}"


def test_an_address_gives_every_link_once_and_idempotently(course):
    run(course, "--repo", REPO)
    assert f'Repository = "https://github.com/{REPO}"' in (course / "pyproject.toml").read_text(encoding="utf-8")
    readme = (course / "README.md").read_text(encoding="utf-8")
    cloud = readme.split("## Run it in the cloud", 1)[1].split("\n## ", 1)[0]
    for name in NOTEBOOKS:
        assert f"({colab(name)})" in cloud and f"({binder(name)})" in cloud, name
        title, blank, badges, *_ = first(course, name, "markdown").split("\n")
        assert title.startswith("# ") and blank == ""
        assert f"]({colab(name)})" in badges and f"]({binder(name)})" in badges, name
        setup = first(course, name, "code")
        assert f'"https://github.com/{REPO}/archive/refs/heads/main.zip"' in setup
    assert "03_scaled_dot_product_attention.ipynb" in NOTEBOOKS  # the example the links are modelled on
    once = snapshot(course)
    run(course, "--repo", REPO)
    run(course)  # no --repo: rewrite from the address pyproject.toml has
    assert snapshot(course) == once


def test_removing_the_address_removes_every_link(course):
    before = snapshot(course)
    run(course, "--repo", f"https://github.com/{REPO}.git")  # a full URL is read as owner/name
    assert snapshot(course) != before
    run(course, "--repo", "")
    after = snapshot(course)
    assert after == before
    for text in after.values():
        assert REPO not in text and "colab.research.google.com/github" not in text


def test_the_committed_files_carry_no_address_and_no_dead_link():
    """No address is set yet: the tool, run on the committed files, changes nothing."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[project.urls]" in text and "\nRepository =" not in text
    for name in NOTEBOOKS:
        assert "colab-badge" not in first(ROOT, name, "markdown"), name
        assert 'os.environ.get("COURSE_UTILS_WHEEL", "")' in first(ROOT, name, "code"), name
    assert "mybinder.org/v2" not in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_committed_files_are_what_the_tool_writes(course):
    before = snapshot(course)
    run(course)
    assert snapshot(course) == before


def test_every_notebook_starts_with_the_setup_cell():
    for name in NOTEBOOKS:
        code = [c for c in cells(ROOT, name) if c["cell_type"] == "code"]
        setup = "".join(code[0]["source"])
        assert code[0]["id"] == "course-setup" and setup.startswith("# Colab or a bare Jupyter"), name
        assert len(setup.splitlines()) <= 9, name  # 8 lines and the blank line ruff wants after the imports
        assert "%matplotlib inline" in "".join(code[1]["source"]), name  # the CONTRIBUTING setup cell comes next


@pytest.mark.parametrize("bad", ["teacher", "teacher/qkv course", "a/b/c", "-x/y"])
def test_a_bad_address_is_refused(course, bad):
    before = snapshot(course)
    with pytest.raises(subprocess.CalledProcessError):
        run(course, "--repo", bad)
    assert snapshot(course) == before
