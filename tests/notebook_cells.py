"""Read code out of the committed notebooks, for tests that compare a notebook's visible definition with the
library's one copy (the d2l "#@save" idea, checked the other way round)."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import torch

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def definitions(notebook: str, marker: str, **names) -> dict:
    """Exec the function definitions of the one code cell whose first three lines carry `# measure: <marker>`;
    returns the namespace (np, torch, math and `names` are available to them)."""
    nb = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))
    cells = [
        "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "code" and f"# measure: {marker}" in "".join(c["source"]).splitlines()[:3]
    ]
    assert len(cells) == 1, f"{notebook}: {len(cells)} cells marked '# measure: {marker}'"
    tree = ast.parse(cells[0])
    tree.body = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    namespace = {"np": np, "torch": torch, "math": math, **names}
    exec(compile(tree, f"{notebook} [{marker}]", "exec"), namespace)
    return namespace
