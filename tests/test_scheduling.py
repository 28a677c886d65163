"""The order in which the pytest-xdist workers get the tests (tests/conftest.py: unit_of, unit_rank, longest_first).

A unit (what one worker runs in one go) is a file, or a notebook's nbval cells, except the cases of a SPREAD test,
each a unit of its own. Units go out longest first; a unit's tests keep their order (a notebook's cells must run in
order, in one kernel).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from conftest import SPREAD, longest_first, unit_of, unit_rank  # tests/ is on sys.path under pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class FakeItem:
    nodeid: str
    marks: set = field(default_factory=set)

    def get_closest_marker(self, name):
        return name if name in self.marks else None


RETRAIN = "tests/test_shipped_models.py::test_code_reproduces_shipped_model[learned-seed1]"
DRIVE = "tests/test_widget_choices.py::test_every_widget_choice_draws_or_gives_a_worded_message[08]"


def test_a_spread_case_is_its_own_unit_and_anything_else_goes_with_its_file():
    assert unit_of(RETRAIN) == RETRAIN
    assert unit_of(DRIVE) == DRIVE
    assert unit_of("tests/test_shipped_models.py::test_seeds_differ") == "tests/test_shipped_models.py"
    assert unit_of("notebooks/05_training_the_translator.ipynb::Cell 3") == "notebooks/05_training_the_translator.ipynb"
    assert unit_of("tests/test_data.py::TestPairs::test_count[3]") == "tests/test_data.py"


def test_each_spread_prefix_names_a_parametrized_test_that_exists():
    """A renamed test would silently leave SPREAD: each prefix must still name a parametrized test function."""
    for prefix in SPREAD:
        path, name = prefix.rstrip("[").split("::")
        source = (ROOT / path).read_text(encoding="utf-8")
        match = re.search(rf"@pytest\.mark\.parametrize\([^\n]*\n(?:@[^\n]*\n)*def {name}\(", source)
        assert match, f"{prefix}: no parametrized test {name} in {path}"


def test_longest_units_first_and_each_unit_in_its_own_order():
    items = [
        FakeItem("tests/test_data.py::test_a"),
        FakeItem("notebooks/01_x.ipynb::Cell 0"),
        FakeItem("tests/test_site.py::test_page[01]", {"browser"}),
        FakeItem("notebooks/01_x.ipynb::Cell 1"),
        FakeItem("tests/test_data.py::test_b"),
        FakeItem(RETRAIN, {"slow"}),
        FakeItem("tests/test_site.py::test_walk", {"browser"}),
        FakeItem("notebooks/01_x.ipynb::Cell 2"),
        FakeItem(DRIVE, {"slow"}),
    ]
    ordered = [i.nodeid for i in longest_first(items)]
    assert sorted(ordered) == sorted(i.nodeid for i in items), "nothing lost, nothing added"
    assert ordered == [
        "tests/test_site.py::test_page[01]",  # a file with a browser test: rank 3, two tests
        "tests/test_site.py::test_walk",
        DRIVE,  # a widget drive: rank 3, one test
        "notebooks/01_x.ipynb::Cell 0",  # a notebook: rank 2, its cells in order
        "notebooks/01_x.ipynb::Cell 1",
        "notebooks/01_x.ipynb::Cell 2",
        RETRAIN,  # a retrain: rank 1
        "tests/test_data.py::test_a",  # any other file: rank 0
        "tests/test_data.py::test_b",
    ]


def test_rank_follows_the_slow_and_browser_marks_of_a_units_tests():
    assert unit_rank("tests/test_wheel.py", [FakeItem("tests/test_wheel.py::test_a"), FakeItem("x", {"slow"})]) == 3
    assert unit_rank("tests/test_wheel.py", [FakeItem("tests/test_wheel.py::test_a")]) == 0
    assert unit_rank(RETRAIN, [FakeItem(RETRAIN, {"slow"})]) == SPREAD[RETRAIN.split("[")[0] + "["]
