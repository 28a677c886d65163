"""Importing course_utils has no side effects: no thread, seed, RNG state or matplotlib setting changes."""

import pkgutil
import subprocess
import sys
from pathlib import Path

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
print(json.dumps([k for k in before if before[k] != after[k]]))
"""


def test_the_probe_sees_every_layer():
    assert {m.split(".")[0] for m in MODULES} >= {"core", "trace", "training", "measures", "views", "exercises"}
    assert len(MODULES) > 40


def test_importing_every_module_changes_no_global_state():
    code = f"MODULES = {MODULES!r}\n" + PROBE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"importing course_utils changed: {out}"
