"""The package's shape is its architecture: layers in folders, imports only downward, one copy of each idea.

    core      errors, precision, data, toys, attention, the vocabulary of places and kinds, model, pretrained
    inspect   recording (Trace), patching and the interventions that patch
    training  the training loop, model files, the standard model zoo
    measures  every distance and cosine, attention statistics, weight maps, probing, clustering, projection
    views     matplotlib figures, diagrams, client-side views, widgets (the only layer that draws)
    exercises one checker module per notebook

Each check reads the source with `ast` (nothing is imported), and each has a broken copy below that it rejects.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "course_utils"
LAYERS = ("core", "trace", "training", "measures", "views", "exercises")
PACKAGE_DATA = ("data", "models")  # folders of files the package ships (the corpus, the trained models), no code
DRAWING = ("matplotlib", "altair", "ipywidgets", "IPython")  # only views/ may import these


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def sources() -> dict[str, str]:
    return {module_name(p): p.read_text(encoding="utf-8") for p in sorted(PKG.rglob("*.py"))}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else None


def course_imports(source: str) -> list[tuple[str, list[str], int]]:
    """(module, imported names, line) of every `from course_utils... import ...` anywhere in the source."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            out.append(("relative", [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_utils"):
            out.append((node.module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.startswith("course_utils")]
    return out


def layering_problems(srcs: dict[str, str]) -> list[str]:
    problems = []
    for module, source in srcs.items():
        mine = layer_of(module)
        for target, _names, line in course_imports(source):
            if target == "relative":
                problems.append(f"{module}:{line} relative import")
                continue
            theirs = layer_of(target)
            if mine in LAYERS and theirs in LAYERS and LAYERS.index(theirs) > LAYERS.index(mine):
                problems.append(f"{module}:{line} imports upward from {target}")
    return problems


def cycles(srcs: dict[str, str]) -> list[list[str]]:
    graph = {m: {t for t, _, _ in course_imports(s) if t in srcs and t != m} for m, s in srcs.items()}
    found, state = [], {}

    def visit(m, stack):
        state[m] = "open"
        for t in sorted(graph[m]):
            if state.get(t) == "open":
                found.append(stack[stack.index(t) :] + [t])
            elif t not in state:
                visit(t, stack + [t])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    return found


def private_crossings(srcs: dict[str, str], extra: dict[str, str] | None = None) -> list[str]:
    """Private names (one leading underscore) imported from, or read off, another course_utils module."""
    problems = []
    for where, source in {**srcs, **(extra or {})}.items():
        tree = ast.parse(source)
        modules = set()
        for target, names, line in course_imports(source):
            problems += [
                f"{where}:{line} imports {target}.{n}" for n in names if n.startswith("_") and n != "__version__"
            ]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_utils"):
                modules |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Import):
                modules |= {a.asname or a.name for a in node.names if a.name.startswith("course_utils")}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                problems.append(f"{where}:{node.lineno} reads {node.value.id}.{node.attr}")
    return problems


def drawing_outside_views(srcs: dict[str, str]) -> list[str]:
    problems = []
    for module, source in srcs.items():
        if layer_of(module) == "views":
            continue
        for node in ast.walk(ast.parse(source)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            problems += [f"{module}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in DRAWING]
    return problems


KINDS_LITERAL = re.compile(r"""\(\s*["']q["'],\s*["']k["'],\s*["']v["'],\s*["']x1["']""")
VOCABULARY = {"PLACES": "course_utils.core.places", "PLACE_NAMES": "course_utils.core.places",
              "VECTOR_KINDS": "course_utils.core.places", "HEAD_KINDS": "course_utils.core.places",
              "KIND_COLOURS": "course_utils.views.style"}  # fmt: skip


def vocabulary_copies(srcs: dict[str, str]) -> list[str]:
    """The literal ("q", "k", "v", "x1", ...) outside core.places, and any module other than the vocabulary's own
    assigning one of its names."""
    problems = []
    for module, source in srcs.items():
        if module != "course_utils.core.places" and KINDS_LITERAL.search(source):
            problems.append(f"{module}: spells out the vector kinds")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id in VOCABULARY and VOCABULARY[t.id] != module:
                        problems.append(f"{module}:{node.lineno} defines {t.id}")
    return problems


# ---------------------------------------------------------------- the checks


def test_the_package_is_folders_of_layers():
    flat = sorted(p.name for p in PKG.glob("*.py"))
    assert flat == ["__init__.py"], f"modules outside the layer folders: {flat}"
    assert sorted(p.name for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(
        LAYERS + PACKAGE_DATA
    )
    assert not [p for d in PACKAGE_DATA for p in (PKG / d).rglob("*.py")], "package data folders hold no code"
    doc = ast.get_docstring(ast.parse((PKG / "__init__.py").read_text(encoding="utf-8")))
    assert all(f"{layer}/" in doc for layer in LAYERS), "the package docstring draws the tree"


def test_imports_point_only_downward():
    assert layering_problems(sources()) == []


def test_no_import_cycle():
    assert cycles(sources()) == []


def test_no_private_name_is_used_outside_its_module():
    outside = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for folder in ("tests", "tools", "benchmarks")
        for p in sorted((ROOT / folder).glob("*.py"))
    }
    outside.update(notebook_code())
    assert private_crossings(sources(), outside) == []


def test_only_views_draw():
    assert drawing_outside_views(sources()) == []


def test_the_vocabulary_is_defined_once():
    assert vocabulary_copies(sources()) == []


# ---------------------------------------------------------------- each check rejects a broken copy


def test_the_checks_reject_broken_copies():
    up = {"course_utils.core.model": "from course_utils.views.style import KIND_COLOURS\n"}
    assert layering_problems(up) == ["course_utils.core.model:1 imports upward from course_utils.views.style"]
    assert layering_problems({"course_utils.core.model": "from .data import Vocab\n"})
    loop = {"course_utils.measures.a": "from course_utils.measures.b import x\n",
            "course_utils.measures.b": "from course_utils.measures.a import y\n"}  # fmt: skip
    assert cycles(loop)
    assert private_crossings({"course_utils.views.x": "from course_utils.measures.y import _helper\n"})
    assert private_crossings({"t": "import course_utils.measures.y as y\ny._helper()\n"})
    assert drawing_outside_views({"course_utils.measures.x": "import matplotlib.pyplot as plt\n"})
    assert not drawing_outside_views({"course_utils.views.x": "import matplotlib.pyplot as plt\n"})
    assert vocabulary_copies({"course_utils.measures.x": 'for kind in ("q", "k", "v", "x1"):\n    pass\n'})
    assert vocabulary_copies({"course_utils.measures.x": 'PLACES = ("encoder self",)\n'})


# ---------------------------------------------------------------- every public name is used somewhere


def notebook_code() -> dict[str, str]:
    """Code cells and worked solutions (fenced python in markdown) of every notebook."""
    out = {}
    for p in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        blocks = []
        for c in nb["cells"]:
            text = "".join(c["source"])
            if c["cell_type"] == "code":
                blocks.append("\n".join(_no_magic(line) for line in text.splitlines()))
            else:
                blocks += re.findall(r"```python\n(.*?)```", text, re.S)
        out[p.name] = "\n\n".join(blocks)
    return out


def public_definitions(srcs: dict[str, str]) -> dict[str, tuple[str, int]]:
    """Top-level public functions and classes of course_utils: name -> (module, line)."""
    out = {}
    for module, source in srcs.items():
        for node in ast.parse(source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                out[node.name] = (module, node.lineno)
    return out


def unused(srcs: dict[str, str], users: dict[str, str]) -> list[str]:
    """Public definitions whose name no user text (notebooks, tests, tools) and no other course_utils code reads.
    A name read only inside its own definition does not count."""
    words = {}
    for text in users.values():
        for w in re.findall(r"[A-Za-z_]\w*", text):
            words[w] = words.get(w, 0) + 1
    for source in srcs.values():
        tree = ast.parse(source)
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) or (
                isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
            ):
                continue  # a layer's re-export (`from .x import a` + `__all__`) is not a use
            own = getattr(node, "name", None)
            segment = ast.get_source_segment(source, node) or ""
            for w in set(re.findall(r"[A-Za-z_]\w*", segment)) - {own}:
                words[w] = words.get(w, 0) + segment.count(w)
    return sorted(
        f"{m}.{name} (line {line})" for name, (m, line) in public_definitions(srcs).items() if not words.get(name)
    )


def test_every_public_function_is_used():
    users = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for folder in ("tests", "tools", "benchmarks")
        for p in sorted((ROOT / folder).glob("*.py"))
        if p.name != "test_architecture.py"
    }
    users.update(notebook_code())
    assert unused(sources(), users) == []


def test_the_unused_check_finds_a_dead_function():
    srcs = {"course_utils.measures.x": "def used():\n    return 1\n\n\ndef dead():\n    return dead\n"}
    assert unused(srcs, {"nb": "used()"}) == ["course_utils.measures.x.dead (line 5)"]
    reexported = {
        **srcs,
        "course_utils.measures": 'from course_utils.measures.x import dead, used\n__all__ = ["dead"]\n',
    }
    assert unused(reexported, {"nb": "used()"}) == ["course_utils.measures.x.dead (line 5)"]


@pytest.mark.parametrize("layer", LAYERS)
def test_every_layer_has_a_docstring_naming_its_modules(layer):
    init = PKG / layer / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    modules = sorted(p.stem for p in (PKG / layer).glob("*.py") if p.stem != "__init__")
    modules += sorted(p.name for p in (PKG / layer).iterdir() if p.is_dir() and p.name != "__pycache__")
    missing = [m for m in modules if m not in doc]
    assert not missing, f"{layer}/__init__.py does not name {missing}"


# ---------------------------------------------------------------- every library function says where it is taught

TAUGHT = re.compile(r"(Taught|Used) (in|by) .*notebooks? .*\b(0[1-9]|10)\b")


def where_taught_missing(srcs: dict[str, str]) -> list[str]:
    """Public top-level functions and classes whose docstring has no "Taught in notebook NN" / "Used in ..." line
    (d2l's "Defined in" lines)."""
    missing = []
    for module, source in srcs.items():
        for node in ast.parse(source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                doc = ast.get_docstring(node) or ""
                if not any(TAUGHT.search(line) for line in doc.splitlines()):
                    missing.append(f"{module}.{node.name}")
    return missing


def test_every_library_function_says_where_it_is_taught():
    assert where_taught_missing(sources()) == []


def test_the_taught_check_rejects_a_function_without_its_line():
    srcs = {"m": 'def a():\n    """Does a.\n    Taught in notebook 03 §2."""\n\n\ndef b():\n    """Does b."""\n'}
    assert where_taught_missing(srcs) == ["m.b"]


def _no_magic(line: str) -> str:
    """A `%magic` or `!shell` line of a notebook cell as `pass` at its indentation, so the cell still parses."""
    stripped = line.lstrip()
    return line[: len(line) - len(stripped)] + "pass" if stripped.startswith(("%", "!")) else line
