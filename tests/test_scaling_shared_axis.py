"""Notebook 03 §4 draws the scaled and the unscaled scores one after the other: with share_y_with, both
histograms get one count axis (tall enough for the taller one), so their spreads compare by eye."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from course_utils.views.scaling import plot_scaling


def test_share_y_with_gives_both_histograms_one_count_axis():
    shared = [plot_scaling(64, s, share_y_with=("√d", "1")).axes[1].get_ylim() for s in ("√d", "1")]
    own = [plot_scaling(64, s).axes[1].get_ylim() for s in ("√d", "1")]
    plt.close("all")
    assert shared[0] == shared[1]  # one axis
    assert own[0] != own[1]  # without it, each histogram scales its own axis
    assert shared[0][1] >= max(top for _, top in own) * 0.95  # and it fits the taller histogram
