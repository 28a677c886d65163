"""The course's heatmaps: one word-labelled heatmap, panels of them, and the attention heatmaps of a Trace.

    heatmap(M, rows, cols, title="...")          # 01, 03, 10: annotated, words on both axes
    show_heatmaps([A, B], rows, cols, titles)    # 01-03: panels side by side, one colour bar (like d2l's)
    plot_attention(trace, "cross", 1)            # 04, 05, 09, 10: one place and layer, one panel per head
    plot_model_view(trace)                       # 03, 05: every layer, place and head of one sentence

`heatmap` draws on a given `ax` or a new figure; every function returns the Figure and never calls plt.show(), so
a notebook cell ends with `plt.show()` and nbval sees no stray reprs, and a widget can wrap any of them. The
browser versions are `views.clientside.heatmap` and `views.clientside.attention`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from course_utils.core.places import PLACE_NAMES, PLACES, trace_key
from course_utils.views.style import as_numpy, describe


def _words(labels, at_most: int = 8) -> str:
    """Labels for alt text: "we, want, to" (the first `at_most`, then "and N more")."""
    labels = [str(w) for w in labels]
    more = f" and {len(labels) - at_most} more" if len(labels) > at_most else ""
    return ", ".join(labels[:at_most]) + more


def _describe_panel(ax, sentence: str) -> None:
    """Alt text for a panel drawn on `ax`: the figure's alt text is the sentences of all its panels, in order."""
    ax._course_alt_panel = sentence
    describe(ax.figure, " ".join(a._course_alt_panel for a in ax.figure.axes if getattr(a, "_course_alt_panel", "")))


def heatmap(
    matrix,
    row_labels,
    col_labels,
    *,
    ax=None,
    title: str | None = None,
    xlabel: str = "key",
    ylabel: str = "query",
    annot: bool = True,
    fmt: str = ".2f",
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    cbar: bool = True,
    cbar_label: str | None = None,
    grey_diagonal: bool = False,
    outline=(),
):
    """Annotated, word-labelled heatmap (the look of seaborn's heatmap, drawn with imshow: fast enough
    for widgets). matrix (rows, cols). grey_diagonal=True greys out the diagonal (a row paired with itself);
    outline=[(row, col), ...] draws a black box around those cells (both used in notebook 01).

    Used in notebooks 01 (More dimensions keep more topics apart), 03 §2, §5 and 10 §7.
    """
    m = as_numpy(matrix)
    if m.shape != (len(row_labels), len(col_labels)):
        raise ValueError(f"matrix {m.shape} does not fit {len(row_labels)} row and {len(col_labels)} column labels")
    if ax is None:
        _, ax = plt.subplots(figsize=(0.7 * len(col_labels) + 2.5, 0.5 * len(row_labels) + 1.8))
    im = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(col_labels)), labels=list(col_labels), rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(row_labels)), labels=list(row_labels))
    ax.tick_params(length=0)
    # white cell borders as two line collections (minor ticks would cost ~25 ms per panel in a widget)
    ax.hlines(np.arange(0.5, len(row_labels) - 1), -0.5, len(col_labels) - 0.5, color="white", linewidth=0.5)
    ax.vlines(np.arange(0.5, len(col_labels) - 1), -0.5, len(row_labels) - 0.5, color="white", linewidth=0.5)
    for side in ax.spines.values():
        side.set_visible(False)
    for i in range(min(m.shape)) if grey_diagonal else ():
        ax.add_patch(plt.Rectangle((i - 0.5, i - 0.5), 1, 1, facecolor="0.85", edgecolor="white", lw=0.5))
    for i, j in outline:
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="black", lw=2.5, zorder=4, clip_on=False))
    if annot:
        rgba = im.cmap(im.norm(m))
        light = (0.299 * rgba[..., 0] + 0.587 * rgba[..., 1] + 0.114 * rgba[..., 2]) > 0.5
        if grey_diagonal:
            np.fill_diagonal(light, True)  # dark numbers on the grey
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                ax.text(
                    j,
                    i,
                    format(m[i, j], fmt),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="black" if light[i, j] else "white",
                )
    if cbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.03, label=cbar_label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    scale = f"; colour: {cbar_label}" if cbar and cbar_label else ""
    _describe_panel(
        ax,
        f"Heatmap{f' {title!r}' if title else ''}: rows are {ylabel or 'the rows'} ({_words(row_labels)}), "
        f"columns are {xlabel or 'the columns'} ({_words(col_labels)}){scale}"
        + (", each cell labelled with its value" if annot else "")
        + _marks(row_labels, col_labels, grey_diagonal, outline)
        + ".",
    )
    return ax.figure


def _marks(row_labels, col_labels, grey_diagonal: bool, outline) -> str:
    """Alt text for heatmap's grey_diagonal and outline (empty when neither is used)."""
    boxed = "; ".join(f"{row_labels[i]} with {col_labels[j]}" for i, j in outline)
    return ("; the diagonal greyed out" if grey_diagonal else "") + (f"; outlined: {boxed}" if boxed else "")


def show_heatmaps(
    matrices,
    row_labels,
    col_labels,
    titles,
    *,
    suptitle: str | None = None,
    xlabel: str = "key",
    ylabel: str = "query",
    ncols: int | None = None,
    cbar_label: str = "attention weight",
    **kwargs,
):
    """Several heatmaps side by side with shared labels (like d2l's show_heatmaps). matrices (n, rows, cols).
    One colour bar for all panels (one scale, 0..1 unless vmin/vmax say otherwise); panels stay the same size.

    Used in notebooks 01 (Six sentences as arrows), 02 §1, §2 and 03 §6, §7.
    """
    matrices = [as_numpy(m) for m in matrices]
    n = len(matrices)
    ncols = ncols or n
    nrows = -(-n // ncols)
    w, h = 0.6 * len(col_labels) + 2.2, 0.45 * len(row_labels) + 1.6
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols + 0.6, h * nrows), squeeze=False, layout="constrained")
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        heatmap(
            matrices[i],
            row_labels,
            col_labels,
            ax=ax,
            title=titles[i],
            xlabel=xlabel,
            ylabel=ylabel if i % ncols == 0 else "",
            **{"vmin": 0.0, "vmax": 1.0, **kwargs, "cbar": False},
        )
    if kwargs.get("cbar", True):  # one colour bar for the row, taking space from every panel alike: equal panels
        used = [ax for ax in axes.flat if ax.images]
        fig.colorbar(used[-1].images[0], ax=used, fraction=0.046 / len(used) ** 0.5, pad=0.02, label=cbar_label)
    if suptitle:
        fig.suptitle(suptitle)
    panels = f"{n} heatmaps side by side ({'; '.join(map(str, titles[:n]))})" if n > 1 else f"Heatmap {titles[0]!r}"
    describe(
        fig,
        (f"{suptitle}: " if suptitle else "")
        + f"{panels}: rows are {ylabel or 'the rows'} ({_words(row_labels)}), columns are {xlabel or 'the columns'} "
        f"({_words(col_labels)}); colour: {cbar_label}"
        + (", brighter = larger" if kwargs.get("cmap", "viridis") == "viridis" else "")
        + _marks(row_labels, col_labels, kwargs.get("grey_diagonal", False), kwargs.get("outline", ()))
        + ".",
    )
    return fig


def decoder_row_labels(tgt_tokens: list[str], produced: list[str]) -> list[str]:
    """Decoder query rows are the inputs <bos> w1..wn; the row at input i produces word i+1: 'wir → wollen'.

    Taught in notebook 05 §5 (Reading the decoder rows: a shift by one).
    """
    made = list(produced) + ["<eos>"]
    return [f"{t} → {made[i]}" for i, t in enumerate(tgt_tokens)]


def plot_model_view(trace, title: str = "", *, top_values: bool = False):
    """Every layer (rows) x place and head (columns) of one Trace in one figure, like BertViz's model view:
    the attention weights of the whole model for one sentence at a glance (one colour scale, 0..1).
    Decoder rows are labelled "input → word it produces". `top_values`: write each row's largest weight in its cell.

    Used in notebooks 03 (Evidence part) and 05 §5.
    """
    n_layers = trace.n_layers
    n_heads = trace["encoder.0.self.weights"].shape[0]
    ncols = len(PLACES) * n_heads
    fig, axes = plt.subplots(n_layers, ncols, figsize=(1.75 * ncols + 1.6, 2.05 * n_layers + 1.1), squeeze=False)
    im = None
    for layer in range(n_layers):
        for p, name in enumerate(PLACES):
            key = trace_key(name, layer, "weights")
            rows = trace.query_tokens(key)
            if name != "encoder self":
                rows = decoder_row_labels(rows, trace.tgt_tokens[1:])
            cols = trace.key_tokens(key)
            for h in range(n_heads):
                ax = axes[layer, p * n_heads + h]
                im = ax.imshow(as_numpy(trace[key][h]), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
                for r, row in enumerate(as_numpy(trace[key][h]) if top_values else []):  # each row's largest weight
                    c, v = int(row.argmax()), float(row.max())
                    ax.text(
                        c, r, f"{v:.2f}", ha="center", va="center", fontsize=5.5, color="black" if v > 0.5 else "white"
                    )
                ax.set_xticks(range(len(cols)), labels=cols, rotation=90, fontsize=7)
                ax.set_yticks(range(len(rows)), labels=rows if h == 0 else [], fontsize=7)
                ax.tick_params(length=0)
                if layer == 0:
                    ax.set_title(f"{name}\nhead {h}", fontsize=9)
                if p == 0 and h == 0:
                    ax.set_ylabel(f"layer {layer}\nquery", fontsize=9)
                if layer == n_layers - 1:
                    ax.set_xlabel("key (German input)" if name == "decoder self" else "key (English)", fontsize=8)
    fig.colorbar(im, ax=axes, fraction=0.02, pad=0.01, label="attention weight")
    fig.suptitle(title or f"Model view: every layer, place and head for {' '.join(trace.src_tokens)!r}")
    fig.set_layout_engine("constrained")
    tgt = f", German {' '.join(trace.tgt_tokens)!r}" if trace.tgt_tokens else ""
    describe(
        fig,
        f"Grid of attention heatmaps for English {' '.join(trace.src_tokens)!r}{tgt}: one row per layer "
        f"(0 to {n_layers - 1}), one column per place and head ({', '.join(PLACE_NAMES[p] for p in PLACES)}; "
        f"heads 0 to {n_heads - 1}); in each, rows are the query words, columns the key words, brighter = more weight"
        + ("; each row's largest weight is written in its cell." if top_values else "."),
    )
    return fig


def plot_attention(trace, place: str = "encoder self", layer: int = 0, heads="all", *, title=None, panel_titles=None):
    """The course's attention heatmap: the weights of one place and layer of a Trace, one panel per head
    (heads "all", an int or a list), labelled with the right tokens; decoder rows say which word they produce
    ("input → output": the row of decoder input i is the query that produces word i+1). `title`: a suptitle;
    `panel_titles`: one title per head instead of "cross-attention, layer 1, head 0".

    Used in notebooks 04 §2, 05 §5, 09 §1, §5 and 10 §4.
    """
    key = trace_key(place, layer, "weights")
    side = key.split(".")[0]
    if key not in trace.keys():
        raise IndexError(f"layer {layer} out of range: the {side} has layers 0..{trace.n_layers - 1}")
    w = trace[key]  # (H, Tq, Tk)
    heads = range(w.shape[0]) if heads in (None, "all") else [int(heads)] if isinstance(heads, (int, str)) else heads
    for h in heads:
        if not 0 <= h < w.shape[0]:
            raise IndexError(f"head {h} out of range: {key} has heads 0..{w.shape[0] - 1}")
    rows = trace.query_tokens(key)
    if side == "decoder":
        rows = decoder_row_labels(rows, trace.tgt_tokens[1:])
    fig = show_heatmaps(
        [w[h] for h in heads],
        rows,
        trace.key_tokens(key),
        panel_titles or [f"{PLACE_NAMES[place]}, layer {layer}, head {h}" for h in heads],
        suptitle=title or None,
        xlabel="key (" + ("German input" if place == "decoder self" else "English") + ")",
        ylabel="query (" + ("English" if side == "encoder" else "German input → word it produces") + ")",
    )
    heads = list(heads)
    named = [f"head {h}" for h in heads]
    which = named[0] if len(named) == 1 else ", ".join(named[:-1]) + f" and {named[-1]} side by side"
    query = "the English words" if side == "encoder" else "the German input words → the word each produces"
    keys = "the German input words" if place == "decoder self" else "the English words"
    describe(
        fig,
        f"Heatmap of {side} layer {layer} {PLACE_NAMES[place]} weights, {which}: rows are {query} "
        f"({_words(rows)}), columns {keys} ({_words(trace.key_tokens(key))}); brighter = more weight.",
    )
    return fig
