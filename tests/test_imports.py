"""Importing course_utils has no side effects: no thread, seed, RNG state or matplotlib setting changes. And it
loads none of the modules known to take seconds to import for nothing a notebook uses (SLOW_IMPORTS)."""

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

# every module of the package, found by walking it (a new module is probed without being listed here)
MODULES = sorted(
    m.name.removeprefix("course_utils.")
    for m in pkgutil.walk_packages([str(Path(__file__).resolve().parents[1] / "course_utils")], "course_utils.")
)

PROBE = r"""
import matplotlib, numpy as np, torch, importlib, json
def state():
    return {"threads": torch.get_num_threads(), "torch_rng": torch.get_rng_state().sum().item(),
            "np_rng": int(np.random.get_state()[1].sum()), "rc": sorted((k, repr(v)) for k, v in matplotlib.rcParams.items()),
            "backend": matplotlib.get_backend()}
before = state()
for name in MODULES:
    importlib.import_module("course_utils." + name)
after = state()
import sys
print(json.dumps({"changed": [k for k in before if before[k] != after[k]], "loaded": sorted(sys.modules)}))
"""

# Modules that cost seconds on import for nothing the course uses: jsonschema 4.25+ (altair imports it) would load
# rfc3987_syntax, which builds a Lark parser; requirements.lock says why jsonschema stays at 4.24.1.
SLOW_IMPORTS = {"rfc3987_syntax", "lark"}


def test_the_probe_sees_every_layer():
    assert {m.split(".")[0] for m in MODULES} >= {"core", "trace", "training", "measures", "views", "exercises"}
    assert len(MODULES) > 40


@pytest.fixture(scope="module")
def probe() -> dict:
    """What importing every module of course_utils in a fresh interpreter changed, and which modules it loaded."""
    code = f"MODULES = {MODULES!r}\n" + PROBE
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def test_importing_every_module_changes_no_global_state(probe):
    assert probe["changed"] == [], f"importing course_utils changed: {probe['changed']}"


def test_importing_course_utils_loads_no_slow_module(probe):
    loaded = {name.split(".")[0] for name in probe["loaded"]}
    assert "altair" in loaded and "jsonschema" in loaded  # the chain that used to load them is still there
    assert not loaded & SLOW_IMPORTS, (
        f"importing course_utils loaded {sorted(loaded & SLOW_IMPORTS)} (see SLOW_IMPORTS)"
    )
