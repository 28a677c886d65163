"""Notebook 02's picture of one word's q, k and v, and notebook 04's singular values before and after training.

    plot_word_qkv(model, "we want to eat apple", "eat")   # 02: q, k, v of a word, a 3 x d_model heatmap
    plot_word_qkv_grid(model, [(s, "eat"), ("eat", "eat")], layers=(0, 1))   # 02: several such views, one scale
    plot_singular_values(spectra, band=band)              # 04 §5: trained / initial singular value per direction

The numbers of the first are `measures.qkv.word_qkv`, its browser view `views.clientside.word_qkv.word_qkv_view`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from course_utils.measures.qkv import word_qkv
from course_utils.views.style import KIND_COLOURS, describe, fixed_layout


def plot_word_qkv(model, sentence="we want to eat apple", word: str = "eat", layer: int = 0):
    """The widget view of notebook 02: the whole-layer q, k and v of one word (d_model numbers each) as a
    3 x d_model heatmap, one row each for q, k and v (encoder self-attention of `layer`), labelled with its length.

    Used in notebook 02 (Try it: q, k and v of a word).
    """
    M, note = word_qkv(model, sentence, word, layer)
    m = M.numpy()
    lim = float(np.abs(m).max())
    fig, ax = plt.subplots(figsize=(10, 2.3))
    im = _qkv_panel(ax, m, lim, f"encoder layer {layer}: q, k, v of {word.strip().lower()!r} {note}")
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.01, label="value")
    fixed_layout(fig, left=0.13, right=0.95, bottom=0.22, top=0.86)
    describe(
        fig,
        f"Heatmap of the q, k and v vectors (rows) of {word.strip().lower()!r} in '{sentence}', encoder layer "
        f"{layer}: columns are the {m.shape[1]} output features, red = positive, blue = negative.",
    )
    return fig


def _qkv_panel(ax, m, lim, title, xlabel=True):
    """One view of plot_word_qkv on `ax`: the 3 x d_model matrix m on the diverging scale -lim..lim."""
    im = ax.imshow(m, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")  # imshow, not seaborn: fast re-render
    ax.set_yticks(range(3), [f"{kind}  |{kind}|={np.linalg.norm(r):.1f}" for kind, r in zip("qkv", m)])
    ax.set_xticks(range(0, m.shape[1], 8))
    if xlabel:
        ax.set_xlabel(f"output feature of w_q, w_k, w_v (0..{m.shape[1] - 1})")
    ax.set_title(title, fontsize=10)
    return im


def plot_word_qkv_grid(model, choices, layers=(0, 1), title: str | None = None):
    """plot_word_qkv's view for every (sentence, word) of `choices` (one row each) and every encoder layer of
    `layers` (one column each), as small multiples of equal size on ONE colour scale (the largest |value| of all
    panels), so that panels can be compared by eye. Returns the figure.

    Used in notebook 02 (Try it: q, k and v of a word), as the static view of the comparison its widget offers.
    """
    choices, layers = [(str(s), str(w)) for s, w in choices], [int(layer) for layer in layers]
    views = {(c, layer): word_qkv(model, s, w, layer) for c, (s, w) in enumerate(choices) for layer in layers}
    lim = max(float(np.abs(M.numpy()).max()) for M, _ in views.values())
    fig, axes = plt.subplots(
        len(choices), len(layers), figsize=(6.2 * len(layers) + 1.6, 1.55 * len(choices) + 1.0), squeeze=False
    )
    for (c, layer), (M, note) in views.items():
        word = choices[c][1].strip().lower()
        ax = axes[c, layers.index(layer)]
        im = _qkv_panel(ax, M.numpy(), lim, f"layer {layer}: {word!r} {note}", xlabel=c == len(choices) - 1)
    fig.suptitle(title or "q, k and v of a word, in each sentence (rows) and encoder layer (columns)", fontsize=11)
    fixed_layout(fig, left=0.08, right=0.89, bottom=0.1, top=0.86, hspace=0.75, wspace=0.25)
    fig.colorbar(im, cax=fig.add_axes((0.91, 0.1, 0.012, 0.76)), label="value (one scale for all panels)")
    describe(
        fig,
        "Grid of q, k, v heatmaps, one row per word in its sentence ("
        + "; ".join(f"{w.strip().lower()!r} in '{s}'" for s, w in choices)
        + f") and one column per encoder layer ({', '.join(map(str, layers))}): in each, rows q, k, v, columns the "
        "output features, on one red (positive) to blue (negative) scale for all panels.",
    )
    return fig


def plot_singular_values(
    spectra: dict[str, np.ndarray], title: str = "Singular values", band=None, band_label: str = "range"
):
    """What training did to each direction of a matrix: trained / initial singular value, direction by direction.

    spectra: {"<name> trained": s, "<name> init": s0, ...} (singular values, largest first), e.g. "$W^Q$ trained";
    one panel per name (equal sizes, shared log y axis), a line at 1 (= unchanged), and the weak directions of the
    initial matrix (below 10 % of its largest singular value) shaded. band: optional {"<name>": (low, high)}
    per-direction ratios drawn as a light range behind the line (e.g. over seeds), labelled band_label.

    Used in notebook 04 §5.
    """
    import re

    names = [n[: -len(" trained")] for n in spectra if n.endswith(" trained")]
    fig, axes = plt.subplots(1, len(names), figsize=(3.4 * len(names), 3.4), sharey=True, squeeze=False)
    for i, (ax, name) in enumerate(zip(axes[0], names)):
        s, s0 = np.asarray(spectra[f"{name} trained"]), np.asarray(spectra[f"{name} init"])
        letter = re.search(r"W\^\{?([A-Za-z])", name)
        colour = KIND_COLOURS.get(letter.group(1).lower(), f"C{i}") if letter else f"C{i}"
        idx = np.arange(1, len(s) + 1)
        n_strong = int((s0 > 0.1 * s0[0]).sum())
        ax.axvspan(n_strong + 0.5, len(s) + 0.5, color="0.88", zorder=0, label="weak at init (< 10 % of the largest)")
        if band is not None and name in band:
            lo, hi = band[name]
            ax.fill_between(idx, lo, hi, color=colour, alpha=0.2, lw=0, label=band_label)
        ax.axhline(1.0, color="0.3", lw=0.8, ls="--")
        ax.plot(idx, s / s0, marker="o", ms=2.5, lw=1, color=colour, label=name)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(plt.LogLocator(base=2))  # ticks at ..., 0.25, 0.5, 1, 2, ...
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))  # 0.5, 1, 2 instead of 2^x
        ax.yaxis.set_minor_formatter(plt.NullFormatter())
        ax.set_xlim(0.5, len(s) + 0.5)
        ax.set_xlabel("direction (1 = strongest)")
        ax.set_title(name, fontsize=10)
        ax.legend(fontsize=7, loc="lower left")  # in every panel: a reader looks at one panel at a time
    axes[0, 0].set_ylabel("trained / initial singular value\n(log scale; 1 = unchanged)")
    fig.suptitle(title, fontsize=11)
    fig.set_layout_engine("tight")  # laid out when drawn: once per PNG in a widget
    plain = [n.replace("$", "").replace("{", "").replace("}", "") for n in names]
    describe(
        fig,
        f"{title}: line charts, one per matrix ({', '.join(plain)}), of the trained / initial singular value "
        f"(log scale; 1 = unchanged, a dashed line) for each direction, strongest first"
        + (f", with a shaded {band_label} behind the line" if band is not None else "")
        + "; the directions weak at initialisation are shaded grey.",
    )
    return fig
