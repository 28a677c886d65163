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


def conda_pins() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert env["channels"][0] == "conda-forge" and "defaults" not in env["channels"]
    pins = {}
    for dep in env["dependencies"]:
        assert isinstance(dep, str), "environment.yml must not have a pip: section (conda-forge only)"
        name, _, rest = dep.partition("=")
        if name in {"python", "pip"}:
            continue
        assert rest, f"environment.yml: {name} is not pinned"
        pins[CONDA_NAMES.get(name, name).lower()] = rest.split("=")[0]
    return pins


@pytest.mark.parametrize("requirements", ["requirements.txt", "requirements-dev.txt"])
def test_requirements_are_exact_pins_and_in_the_lock(requirements):
    req, lock = pip_pins(ROOT / requirements), pip_pins(ROOT / "requirements.lock")
    assert req, f"{requirements} pins nothing"
    for name, version in req.items():
        assert lock.get(name) == version, f"{name}: {requirements} {version} vs requirements.lock {lock.get(name)}"
    assert lock["torch"] == "2.13.0"


def test_environment_yml_matches_requirements():
    req, conda = pip_pins(ROOT / "requirements.txt"), conda_pins()
    assert conda == req, (
        f"drift: only in conda {set(conda.items()) - set(req.items())}, only in pip {set(req.items()) - set(conda.items())}"
    )


def test_conda_torch_is_the_cpu_build():
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s*-\s*pytorch=2\.13\.0=cpu_\*\s*$", text, re.M)
