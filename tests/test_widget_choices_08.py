"""Notebook 08's widgets driven over every choice (the drive: tests/widget_choices.py)."""

from widget_choices import check_widget_choices  # tests/ is on sys.path under pytest


def test_every_widget_choice_of_08_draws_or_gives_a_worded_message():
    check_widget_choices("08")
