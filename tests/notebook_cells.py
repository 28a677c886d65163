"""Read code out of the committed notebooks, for tests that compare a notebook's visible definition with the
library's one copy (the d2l "#@save" idea, checked the other way round)."""

from __future__ import annotations

import ast
import json
import math
import re
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


def solution_blocks(notebook: str | Path, containing: str | None = None) -> list[str]:
    """The python code of every worked solution in the notebook: each fenced python block inside a markdown cell's
    <details> block (the solutions a learner can reveal), in order; only those containing `containing` if given."""
    path = Path(notebook)
    nb = json.loads((path if path.is_absolute() else NOTEBOOKS / path).read_text(encoding="utf-8"))
    blocks = [
        block
        for c in nb["cells"]
        if c["cell_type"] == "markdown"
        for details in re.findall(r"<details>(.*?)</details>", "".join(c["source"]), re.S)
        for block in re.findall(r"```python\n(.*?)```", details, re.S)
    ]
    return [b for b in blocks if containing is None or containing in b]


def solution_code(notebook: str | Path, marker: str) -> str:
    """The code of the one worked solution of the notebook that contains `marker`."""
    blocks = solution_blocks(notebook, marker)
    assert len(blocks) == 1, f"{Path(notebook).name}: {len(blocks)} worked solutions contain {marker!r}"
    return blocks[0]


def course_imports(notebook: str | Path) -> dict:
    """The names the notebook imports from course_utils (every `from course_utils... import ...` of its code
    cells), as a namespace: what a worked solution in the notebook may use without importing it."""
    path = Path(notebook)
    nb = json.loads((path if path.is_absolute() else NOTEBOOKS / path).read_text(encoding="utf-8"))
    namespace: dict = {}
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        source = "\n".join(_no_magic(line) for line in "".join(c["source"]).splitlines())
        for node in ast.parse(source).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_utils"):
                exec(compile(ast.Module([node], []), f"{path.name} [imports]", "exec"), namespace)
    namespace.pop("__builtins__", None)
    return namespace


def _no_magic(line: str) -> str:
    """A `%magic` or `!shell` line of a notebook cell as `pass` at its indentation, so the cell still parses."""
    stripped = line.lstrip()
    return line[: len(line) - len(stripped)] + "pass" if stripped.startswith(("%", "!")) else line
