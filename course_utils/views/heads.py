"""Notebooks 09 and 10's per-head figures: where each head looks by word role, what it prefers, where it looks.

    plot_roles(batch, "cross", 1)                               # 09 §2: one panel per head, by word role
    plot_vocab_scores_by_head(tables, ["head 0", "head 1"])     # 09 §3: which key word each query word prefers
    plot_head_grid(head_masses(cache, lengths, n_layers))       # 10 §5: layers x heads, one panel per measure

The numbers are `measures.attention_stats.role_attention`, `measures.weight_maps.vocab_scores` and
`measures.pretrained.head_masses`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd  # noqa: E402

from course_utils.core.places import PLACE_NAMES
from course_utils.measures.attention_stats import BatchTrace, role_attention
from course_utils.measures.pretrained import HEAD_MEASURES
from course_utils.views.heatmaps import heatmap, show_heatmaps
from course_utils.views.style import describe, fixed_layout


def plot_head_grid(table: pd.DataFrame, measures=HEAD_MEASURES, title: str = "", ncols: int | None = None):
    """One small layers × heads panel per measure of `head_masses`, one shared colour bar (0..1).

    ncols=None: all panels in one row, every other head labelled (the default). ncols=3: rows of three larger
    panels, every layer and head labelled, thin lines between the cells, so a head can be found without counting.

    Used in notebook 10 §5.
    """
    import matplotlib.pyplot as plt

    n_layers = table.index.get_level_values("layer").nunique()
    n_heads = table.index.get_level_values("head").nunique()
    if ncols is None:
        fig, axes = plt.subplots(1, len(measures), figsize=(3.1 * len(measures) + 1.2, 3.0), squeeze=False)
    else:
        nrows = -(-len(measures) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(3.9 * ncols + 1.2, 2.9 * nrows), squeeze=False)
        for ax in axes.flat[len(measures) :]:
            ax.set_visible(False)
    im = None
    for ax, m in zip(axes.flat, measures):
        grid = table[m].to_numpy().reshape(n_layers, n_heads)
        im = ax.imshow(grid, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
        ax.set_title(f"on {m}" if m != "itself" else "on itself", fontsize=10)
        first_column = ax in axes[:, 0]
        if ncols is None:
            heads = [str(h) if h % 2 == 0 else "" for h in range(n_heads)]
            first_column = ax is axes[0][0]
        else:
            heads = [str(h) for h in range(n_heads)]
            ax.set_xticks(np.arange(-0.5, n_heads), minor=True)
            ax.set_yticks(np.arange(-0.5, n_layers), minor=True)
            ax.grid(which="minor", color="white", linewidth=0.6)
            ax.tick_params(which="minor", length=0)
        ax.set_xticks(range(n_heads), labels=heads, fontsize=8)
        ax.set_yticks(range(n_layers), labels=[str(layer) for layer in range(n_layers)] if first_column else [])
        ax.set_xlabel("head")
        ax.tick_params(length=0)
        if first_column:
            ax.set_ylabel("layer")
    if ncols is None:
        fixed_layout(fig, left=0.05, right=0.9, bottom=0.17, top=0.8, wspace=0.08)
        cax = fig.add_axes((0.915, 0.17, 0.012, 0.63))
    else:
        fixed_layout(fig, left=0.05, right=0.9, bottom=0.1, top=0.86, wspace=0.08, hspace=0.55)
        cax = fig.add_axes((0.915, 0.1, 0.012, 0.76))
    fig.colorbar(im, cax=cax, label="mean attention weight")
    fig.suptitle(title or "Where each head looks, averaged over the sentences' real tokens")
    return describe(
        fig,
        f"{title or 'Where each head looks'}: one small heatmap per measure ({', '.join(measures)}), rows the layers "
        f"(0 to {n_layers - 1}), columns the heads (0 to {n_heads - 1}); colour: mean attention weight from 0 to 1, "
        "brighter = more.",
    )


def plot_roles(batch: BatchTrace, place: str, layer: int):
    """One panel per head: role_attention as a heatmap.

    Used in notebook 09 §2.
    """
    tables = [role_attention(batch, place, layer, h) for h in range(batch.n_heads)]
    ylabel = {
        "encoder self": "query: English word's role",
        "decoder self": "query: German input's role",
        "cross": "query: role of the German word it produces",
    }[place]
    xlabel = "key: German input's role" if place == "decoder self" else "key: English word's role"
    fig = show_heatmaps(
        [t.to_numpy() for t in tables],
        list(tables[0].index),
        list(tables[0].columns),
        [f"{PLACE_NAMES[place]}, layer {layer}, head {h}" for h in range(batch.n_heads)],
        suptitle=f"Where each {PLACE_NAMES[place]} head looks, by word role (mean over all {len(batch.pairs)} pairs)",
        xlabel=xlabel,
        ylabel=ylabel,
    )
    return describe(
        fig,
        f"Heatmaps of {PLACE_NAMES[place]} layer {layer}, one per head (0 to {batch.n_heads - 1}), side by side: mean "
        f"attention weight by word role over {len(batch.pairs)} sentence pairs, rows the query's role "
        f"({', '.join(tables[0].index)}), columns the key's role ({', '.join(tables[0].columns)}); brighter = more weight.",
    )


def plot_vocab_scores_by_head(tables: list[pd.DataFrame], titles: list[str], suptitle: str = ""):
    """One panel per head: the vocabulary's scores, each row minus its mean (what softmax sees), each panel on its
    own colour scale with its own colour bar, so that a head whose scores vary less is not washed out by the other
    one (the bars say how far each head's scale reaches).

    Used in notebook 09 §3.
    """
    import matplotlib.pyplot as plt

    centred = [t.to_numpy() - t.to_numpy().mean(1, keepdims=True) for t in tables]
    fig, axes = plt.subplots(1, len(tables), figsize=(6.8 * len(tables) + 0.4, 6.4), layout="constrained")
    axes = np.atleast_1d(axes)
    for i, (ax, c, t, title) in enumerate(zip(axes, centred, tables, titles)):
        v = float(np.abs(c).max())
        heatmap(
            c,
            list(t.index),
            list(t.columns),
            ax=ax,
            title=title,
            xlabel="key word",
            ylabel="query word" if i == 0 else "",
            annot=False,
            cmap="RdBu_r",
            vmin=-v,
            vmax=v,
            cbar=False,
        )
        ax.tick_params(labelsize=8)
        fig.colorbar(ax.images[0], ax=ax, fraction=0.05, pad=0.02, label="score − its row's mean")
    if suptitle:
        fig.suptitle(suptitle)
    return describe(
        fig,
        f"{suptitle + ': ' if suptitle else ''}{len(tables)} heatmaps side by side ({'; '.join(titles)}), each on its "
        "own red-blue scale: rows the query words, columns the key words, colour the score minus its row's mean "
        "(red = preferred, blue = avoided).",
    )
