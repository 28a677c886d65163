"""Importing course_utils has no side effects: no thread, seed, RNG state or matplotlib setting changes."""

import subprocess
import sys

MODULES = [
    "attention",
    "data",
    "model",
    "tracing",
    "training",
    "analysis",
    "plotting",
    "widgets",
    "clientside",
    "vectors",
    "projections",
    "stepwise",
    "clustering",
    "probing",
    "heads",
    "roles",
    "interventions",
    "diagrams",
    "pretrained",  # sets the Hugging Face offline switches in os.environ (deliberate), nothing this probe sees
    "errors",
]

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


def test_importing_every_module_changes_no_global_state():
    code = f"MODULES = {MODULES!r}\n" + PROBE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"importing course_utils changed: {out}"
