"""Notebook 05's training curve.

    plot_loss(course.history)    # loss per epoch (log scale) and token accuracy on a second axis

A history is what `training.train.train` records: one dict per epoch with "epoch", "loss" and "token_acc".
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from course_utils.views.style import describe


def plot_loss(history, ax=None, title: str = "Training loss per epoch"):
    """Loss (and token accuracy on a second axis) from a training history.

    Used in notebook 05 §3.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.5))
    epochs = [h["epoch"] for h in history]
    ax.plot(epochs, [h["loss"] for h in history], marker="o", ms=3, label="loss")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy loss (log scale)")
    ax.set_title(title)
    ax2 = ax.twinx()
    ax2.plot(epochs, [h["token_acc"] for h in history], color="tab:orange", marker=".", label="token accuracy")
    ax2.set_ylabel("token accuracy (teacher forcing)")
    ax2.set_ylim(0, 1.02)
    ax.figure.legend(loc="center right", bbox_to_anchor=(0.85, 0.5), fontsize=8)
    ax.figure.set_layout_engine("tight")
    loss, acc = [h["loss"] for h in history], [h["token_acc"] for h in history]
    describe(
        ax.figure,
        f"Line chart {title!r}: cross-entropy loss (log scale, left axis) and token accuracy (right axis) over "
        f"epochs {epochs[0]} to {epochs[-1]}; the loss goes from {loss[0]:.3g} to {loss[-1]:.3g}, the token accuracy "
        f"from {acc[0]:.2f} to {acc[-1]:.2f}.",
    )
    return ax.figure
