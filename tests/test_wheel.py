"""The package as a learner gets it: a wheel, installed outside the repository, run outside the repository.

1. The wheel holds every sub-package, the corpus and the shipped models. Installed with
   `pip install --no-deps --target <tmp>` and imported from <tmp> (PYTHONPATH) in a Python that cannot see the
   repository, it loads the corpus and a shipped model and runs notebook 02 (which loads the shipped models).
2. A notebook's setup cell installs the package itself: notebook 01, copied outside the repository, runs in a Python
   where course_utils cannot be imported, with COURSE_UTILS_WHEEL pointing at the wheel (the offline stand-in for
   the course's address); its first cell's `%pip install` puts the wheel into that Python, and the notebook runs.

"A Python that cannot see the repository" is a throw-away venv (`python -m venv --without-pip`, from the base
interpreter) whose site-packages holds one .pth line naming this venv's site-packages: every pinned package is
importable, but this venv's own .pth files are not run, so its editable install of course_utils is not there
(nor anything on the repository's path: the working directory is a temporary folder). `%pip` in its kernel runs
`<that python> -m pip` (pip comes through the .pth line) and installs into the throw-away venv, nowhere else.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SHORT_NOTEBOOK = "01_sentence_vectors.ipynb"  # the setup-cell test
MODEL_NOTEBOOK = "02_qkv_linear_layers.ipynb"  # loads the shipped models: package data from the wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of what the wheel is made of (no build/ or egg-info written into the repository)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src)
    shutil.copytree(ROOT / "course_utils", src / "course_utils", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(tmp),
            str(src),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = tmp.glob("course_utils-*.whl")
    return built


@pytest.fixture
def bare_python(tmp_path_factory) -> Path:
    """A Python that sees this venv's packages but not course_utils (see the module docstring); one per test."""
    env = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "course_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return python


def outside(tmp: Path, extra_env: dict[str, str]) -> dict[str, str]:
    """The environment of a process outside the repository: a kernel spec for the bare Python, no PYTHONPATH
    unless given, Jupyter's folders in tmp."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COURSE_UTILS_WHEEL")}
    env.update(
        JUPYTER_PATH=str(tmp / "jupyter"), JUPYTER_DATA_DIR=str(tmp / "jupyter"), IPYTHONDIR=str(tmp / "ipython")
    )
    env.update(extra_env)
    return env


def kernel_spec(tmp: Path, python: Path) -> str:
    spec = tmp / "jupyter" / "kernels" / "bare"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "bare", "language": "python"}))
    return "bare"


RUN_NOTEBOOK = textwrap.dedent(
    """
    import sys
    import nbformat
    from nbclient import NotebookClient

    path = sys.argv[1]
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import course_utils\\nprint('FROM', course_utils.__file__)"))
    NotebookClient(nb, timeout=300, kernel_name=sys.argv[2], resources={"metadata": {"path": "."}}).execute()
    nbformat.write(nb, path)
    """
)


def run_notebook(python: Path, name: str, tmp: Path, env: dict[str, str]) -> dict:
    """Copy the notebook into tmp/work, execute it there (cell errors fail), return the executed notebook."""
    work = tmp / "work"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / name, work / name)
    (work / "run_notebook.py").write_text(RUN_NOTEBOOK, encoding="utf-8")
    kernel = kernel_spec(tmp, python)
    done = subprocess.run(
        [python, "run_notebook.py", name, kernel], cwd=work, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((work / name).read_text(encoding="utf-8"))


def text_of(cell: dict) -> str:
    return "".join("".join(o.get("text", "")) for o in cell["outputs"] if o["output_type"] == "stream")


def test_the_wheel_holds_every_subpackage_and_the_package_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "course_utils").rglob("__init__.py")}
    assert {f"{p}/__init__.py" for p in packages} <= names
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "course_utils").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    shipped = {str(p.relative_to(ROOT)) for d in ("data", "models") for p in (ROOT / "course_utils" / d).iterdir()}
    assert shipped <= names, sorted(shipped - names)
    assert any(n.endswith(".dist-info/licenses/course_utils/data/LICENSE") for n in names)
    metadata = next(zipfile.ZipFile(wheel).read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    import course_utils

    assert f"Version: {course_utils.__version__}" in metadata
    assert "Requires-Dist: torch<2.15,>=2.13" in metadata


def test_the_installed_wheel_works_outside_the_repository(wheel, bare_python, tmp_path):
    target = tmp_path / "target"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    env = outside(tmp_path, {"PYTHONPATH": str(target)})
    check = textwrap.dedent(
        """
        import course_utils
        from course_utils.core.data import load_pairs, load_probes
        from course_utils.training.zoo import load_standard_model

        result = load_standard_model("learned", 1)
        print(course_utils.__file__, len(load_pairs()), len(load_probes()), type(result).__name__)
        """
    )
    done = subprocess.run([bare_python, "-c", check], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    where, pairs, probes, kind = done.stdout.split()
    assert Path(where).is_relative_to(target) and (pairs, probes, kind) == ("264", "9", "TrainResult")

    nb = run_notebook(bare_python, MODEL_NOTEBOOK, tmp_path, env)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code[0]["outputs"] == [], "the setup cell prints nothing when course_utils is importable"
    where = text_of(code[-1]).split("FROM ", 1)[1].strip()
    assert Path(where).is_relative_to(target), where
    assert not Path(where).is_relative_to(ROOT)


def test_the_setup_cell_installs_the_wheel_where_course_utils_is_missing(wheel, bare_python, tmp_path):
    env = outside(tmp_path, {})
    missing = subprocess.run([bare_python, "-c", "import course_utils"], cwd=tmp_path, env=env, capture_output=True)
    assert missing.returncode != 0, "the bare Python must not see course_utils before the setup cell runs"

    # with neither an address nor a wheel, the cell says how to install (one line) and installs nothing
    setup = json.loads((ROOT / "notebooks" / SHORT_NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    setup = "".join(next(c for c in setup if c["cell_type"] == "code")["source"])
    assert setup.startswith("# Colab or a bare Jupyter")
    plain = setup.replace("%pip", "raise SystemExit  # %pip")  # run as plain Python (no magics)
    said = subprocess.run([bare_python, "-c", plain], cwd=tmp_path, env=env, capture_output=True, text=True).stdout
    assert said.splitlines() == [
        "course_utils is missing: run `pip install -e .` in a clone of the course, then restart the kernel"
    ]

    # with COURSE_UTILS_WHEEL (the offline stand-in for the address), the cell installs the wheel and the notebook runs
    nb = run_notebook(bare_python, SHORT_NOTEBOOK, tmp_path, {**env, "COURSE_UTILS_WHEEL": str(wheel)})
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert "".join(code[0]["source"]) == setup and "course_utils is missing" not in text_of(code[0])
    where = Path(text_of(code[-1]).split("FROM ", 1)[1].strip())
    venv = bare_python.parent.parent
    assert where.is_relative_to(venv) and "site-packages" in where.parts, where  # installed by the cell, there
