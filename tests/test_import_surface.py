"""A notebook's course_utils imports stay short: at most 12 lines (as ruff formats them) from at most 6 modules.

Every line of every `from course_utils... import ...` / `import course_utils...` statement in the code cells counts;
each layer's __init__ re-exports its public names so that a notebook can import a layer (`from course_utils import
measures, views`, then `measures.seed_verdict(...)`) instead of twenty modules.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
MAX_LINES, MAX_MODULES = 12, 6


def course_import_size(nb: dict) -> tuple[int, set[str]]:
    """(lines, modules) of the notebook's course_utils import statements, over all code cells."""
    lines, modules = 0, set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]).split("\n")
        source = "\n".join(  # a magic line (%matplotlib, !pip) becomes a statement of the same indent
            (line[: len(line) - len(line.lstrip())] + "pass") if line.lstrip().startswith(("%", "!")) else line
            for line in source
        )
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_utils"):
                lines += node.end_lineno - node.lineno + 1
                modules.add(node.module)
            elif isinstance(node, ast.Import) and any(a.name.startswith("course_utils") for a in node.names):
                lines += node.end_lineno - node.lineno + 1
                modules |= {a.name for a in node.names if a.name.startswith("course_utils")}
    return lines, modules


def too_many(nb: dict) -> list[str]:
    lines, modules = course_import_size(nb)
    out = []
    if lines > MAX_LINES:
        out.append(f"{lines} lines of course_utils imports (at most {MAX_LINES})")
    if len(modules) > MAX_MODULES:
        out.append(f"{len(modules)} course_utils modules imported (at most {MAX_MODULES}): {sorted(modules)}")
    return out


def code_cell(source: str) -> dict:
    return {"cell_type": "code", "source": source.splitlines(keepends=True)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_a_notebook_imports_course_utils_in_a_few_lines(path):
    assert too_many(json.loads(path.read_text(encoding="utf-8"))) == []


def test_the_check_flags_thirteen_lines_and_seven_modules():
    mods = ["core.data", "core.model", "trace.tracing", "training.zoo", "measures.verdicts", "views.heads"]
    good = "%matplotlib inline\n" + "".join(f"from course_utils.{m} import a{i}\n" for i, m in enumerate(mods))
    assert too_many({"cells": [code_cell(good)]}) == []
    seventh = "from course_utils.views.tables import (\n" + "".join(f"    t{i},\n" for i in range(5)) + ")\n"
    found = too_many({"cells": [code_cell(good), {"cell_type": "markdown", "source": ["x"]}, code_cell(seventh)]})
    assert found == [
        "13 lines of course_utils imports (at most 12)",
        "7 course_utils modules imported (at most 6): "
        + str(sorted(["course_utils." + m for m in mods] + ["course_utils.views.tables"])),
    ]
    layered = "from course_utils import measures, views\nimport course_utils.core as core\n"
    assert course_import_size({"cells": [code_cell(layered)]}) == (2, {"course_utils", "course_utils.core"})
