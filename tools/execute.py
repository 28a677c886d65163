"""Execute notebooks in place the way they are committed: fresh kernel, in order, widget state saved.

python tools/execute.py notebooks/01_*.ipynb      (what `make execute` runs)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute(path: Path, timeout: int = 300) -> float:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # drop volatile metadata from earlier runs
        cell.get("metadata", {}).pop("execution", None)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
        record_timing=False,
    ).execute()
    seconds = time.perf_counter() - start
    if not _has_widgets(nb):
        nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return seconds


def _has_widgets(nb) -> bool:
    return any(
        "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )


def main(paths: list[str]) -> int:
    for p in paths:
        seconds = execute(Path(p))
        size = Path(p).stat().st_size / 1e6
        print(f"{p}: executed in {seconds:.1f} s, {size:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
