"""How long each notebook takes, how long `make test` takes, and how fast each widget re-renders.

    .venv/bin/python benchmarks/bench_notebooks.py [--no-suite] [--rounds 3] [notebooks...]

For every notebook (default: all, in order): it is executed in memory the way `make execute` does
(nbclient, fresh kernel, in order; the file is not written) and the wall time of its cells incl. kernel start is printed. Then, in
the same kernel, every `course_utils.views.widgets.interactive_plot` the notebook created is driven the way a
learner drives it: each control is set, one after the other, to each of its other values (dropdown
options; a slider's min, middle and max) and back, `--rounds` times. One timing is one `control.value = v`,
which runs the widget's whole re-render synchronously in the kernel: the plotting function plus the PNG the
inline backend renders for the Output widget (the browser's share, a few ms of transfer and paint, is not
included; the JupyterLab browser test prints that end to end). Text boxes (a sentence) are not driven.
Per widget: median and p95 of the changes that show a combination of choices for the first time (the
plotting function runs: this is the figure judged against the goal), the slowest change, and the p95 of
revisits (the widget shows its kept view; see course_utils/views/widgets.py).

Last (unless --no-suite), the wall time of the whole `make test`.
Goals on 2 cores: each notebook <= 20 s, whole suite <= 120 s, widget p95 <= 150 ms.
This script prints figures; it is not a test and always exits 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]

# Runs inside the notebook's kernel after its last cell; prints one JSON line.
PROBE = r"""
import json as _json, time as _time, ipywidgets as _W
def _values(ctl):
    if isinstance(ctl, _W.Text):
        return []
    if isinstance(ctl, _W.SelectMultiple):
        return [(o[1] if isinstance(o, tuple) else o,) for o in ctl.options]
    if hasattr(ctl, "options"):
        return [o[1] if isinstance(o, tuple) else o for o in ctl.options]
    if isinstance(ctl, (_W.IntSlider, _W.FloatSlider)):
        return [ctl.min, (ctl.min + ctl.max) / 2 if isinstance(ctl, _W.FloatSlider) else (ctl.min + ctl.max) // 2, ctl.max]
    return []
_report = []
for _ui in [w for w in list(_W.Widget.widgets.values()) if hasattr(w, "controls") and hasattr(w, "output")]:
    _times, _labels, _cold = [], [], []
    _state = lambda: tuple(c.value for c in _ui.controls.values())
    _seen = {_state()}
    for _round in range(__ROUNDS__):
        for _name, _ctl in _ui.controls.items():
            _start_value = _ctl.value
            for _v in _values(_ctl) + [_start_value]:
                if _v == _ctl.value:
                    continue
                _t = _time.perf_counter(); _ctl.value = _v; _times.append(_time.perf_counter() - _t)
                _labels.append(f"{_name}={_v!r}")
                _cold.append(_state() not in _seen)
                _seen.add(_state())
    _report.append({"controls": list(_ui.controls), "times": _times, "labels": _labels, "cold": _cold})
print(_json.dumps(_report))
"""


def run_notebook(path: Path, rounds: int) -> tuple[float, list[dict]]:
    nb = nbformat.read(path, as_version=4)
    n_cells = len(nb.cells)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE.replace("__ROUNDS__", str(rounds))))
    client = NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells[:n_cells]):
            client.execute_cell(cell, i)
        seconds = time.perf_counter() - start
        client.execute_cell(nb.cells[-1], n_cells)
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    return seconds, json.loads(text.strip().splitlines()[-1])


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-suite", action="store_true", help="skip timing the whole `make test`")
    args = ap.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    worst_nb, worst_p95 = 0.0, 0.0
    print(f"{'notebook':42s} {'run s':>6s}   widget (controls): re-render times")
    for path in paths:
        seconds, widgets = run_notebook(path, args.rounds)
        worst_nb = max(worst_nb, seconds)
        print(f"{path.name:42s} {seconds:6.1f}")
        for w in widgets:
            if not w["times"]:
                print(f"{'':51s}{'/'.join(w['controls'])}: only text input, not driven")
                continue
            ms = [t * 1000 for t in w["times"]]
            cold = [m for m, c in zip(ms, w["cold"]) if c]
            warm = [m for m, c in zip(ms, w["cold"]) if not c]
            slow = w["labels"][max(range(len(ms)), key=ms.__getitem__)]
            worst_p95 = max(worst_p95, p95(cold))
            print(
                f"{'':51s}{'/'.join(w['controls'])}: {len(cold)} new views, median {statistics.median(cold):.0f} ms, "
                f"p95 {p95(cold):.0f} ms, max {max(ms):.0f} ms ({slow}); {len(warm)} revisits, "
                + (f"p95 {p95(warm):.0f} ms" if warm else "none")
            )
    print(
        f"\nslowest notebook {worst_nb:.1f} s (goal <= 20 s: {'met' if worst_nb <= 20 else 'NOT met'}); "
        f"worst widget p95 (new views) {worst_p95:.0f} ms (goal <= 150 ms: {'met' if worst_p95 <= 150 else 'NOT met'})"
    )
    if not args.no_suite:
        start = time.perf_counter()
        rc = subprocess.run(["make", "test"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        seconds = time.perf_counter() - start
        print(f"make test: {seconds:.0f} s, exit code {rc} (goal <= 120 s: {'met' if seconds <= 120 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
