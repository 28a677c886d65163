"""Notebook 03's scale picture: softmax weights of random queries, and the histogram of their scaled scores.

    plot_scaling(64, "√d")    # d = 64, q·k divided by √d; "1" and "d" are the other divisors
    plot_scaling(64, "1", share_y_with=("√d", "1"))   # one count axis that fits both divisors' histograms

The numbers are `measures.attention_stats` (random_scores, stats_of_scores); the browser view of every d and
divisor, the notebook's scale slider, is `views.clientside.scaling.scaling_view`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from course_utils.measures.attention_stats import divisor_value, random_scores, stats_of_scores
from course_utils.views.style import describe, fixed_layout


def plot_scaling(
    d: int = 64, divide_by: str = "√d", n_rows: int = 5, n_keys: int = 8, share_y_with: tuple[str, ...] = ()
):
    """Left: softmax weights of a few random queries over 8 random keys; right: histogram of the scaled scores.

    Drawn with plain imshow (not seaborn) so that the scale slider re-renders quickly. `share_y_with`: divisors
    whose histograms (same d) must fit the same count axis, so that figures drawn one after the other compare.

    Used in notebook 03 §4.
    """
    divisor = divisor_value(d, divide_by)
    scores = random_scores(d, n_keys=n_keys) / divisor  # (2000, n_keys)
    weights = torch.softmax(scores, dim=-1)
    st = stats_of_scores(
        scores, d, divisor
    )  # = score_stats(d, divisor, n_keys=n_keys), without drawing the scores again
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1.3, 1]})
    w = weights[:n_rows].numpy()
    im = ax1.imshow(w, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            ax1.text(
                j,
                i,
                f"{w[i, j]:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="black" if w[i, j] > 0.6 else "white",
            )
    ax1.set_xticks(range(n_keys), [f"k{j}" for j in range(n_keys)])
    ax1.set_yticks(range(n_rows), [f"q{i}" for i in range(n_rows)])
    ax1.set_xlabel("key")
    ax1.set_ylabel("query")
    ax1.set_title(f"softmax(q·k / {divide_by}), d = {d}: mean max weight {st['mean_max_weight']:.2f}", fontsize=10)
    fig.colorbar(im, ax=ax1, fraction=0.05, label="attention weight")
    lim = 40.0  # one fixed range for every choice, so that the spread of the scores can be compared
    ax2.hist(
        scores.flatten().clamp(-lim, lim).numpy(), bins=80, range=(-lim, lim), color="tab:blue", histtype="stepfilled"
    )
    ax2.set_xlim(-lim, lim)
    if share_y_with:  # the tallest bin over these divisors' histograms, so every such figure has one count axis
        tallest = max(
            np.histogram(
                (random_scores(d, n_keys=n_keys) / divisor_value(d, s)).flatten().clamp(-lim, lim).numpy(),
                bins=80,
                range=(-lim, lim),
            )[0].max()
            for s in (*share_y_with, divide_by)
        )
        ax2.set_ylim(0, 1.05 * tallest)
    ax2.set_xlabel(f"score q·k / {divide_by}  (clipped to ±{lim:.0f})")
    ax2.set_ylabel("count (2000 queries × 8 keys)")
    ax2.set_title(
        f"std {st['score_std']:.2f}; mean entropy {st['mean_entropy']:.2f} of max {st['uniform_entropy']:.2f} nats",
        fontsize=10,
    )
    fixed_layout(fig, left=0.06, right=0.98, bottom=0.17, top=0.89, wspace=0.25)
    describe(
        fig,
        f"Two panels for d = {d}, scores q·k divided by {divide_by}: left, a heatmap of the softmax weights of "
        f"{n_rows} random queries (rows) over {n_keys} random keys (columns), mean max weight "
        f"{st['mean_max_weight']:.2f}; right, a histogram of the scaled scores (standard deviation "
        f"{st['score_std']:.2f}).",
    )
    return fig
