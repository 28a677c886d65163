"""Four schematic diagrams of the course model, drawn in code (matplotlib patches, deterministic PNGs).

    draw_attention_places()                              # 02: the three places attention happens
    draw_attention_path("eat", sentence, d_head=32)      # 03: one word's path x -> q, k, v -> output
    draw_multi_head(seq_len=5, d_model=64, n_heads=2)    # 04: split -> heads -> concat -> W^O, with shapes
    draw_layer("encoder") / draw_layer("decoder")        # 05: one layer: sublayers, residuals, LayerNorm

Each returns a pyplot Figure of a fixed size (9 inches wide at 100 dpi, the notebook's ~900 px), so a cell ends with
`plt.show()` like every plotting cell. The q/k/v boxes use `views.style.KIND_COLOURS`; the other colours are
Okabe-Ito. What is drawn follows `core.model` and `core.attention`: post-norm layers
(x = LayerNorm(x + dropout(sublayer(x)))), cross-attention with queries from the decoder and keys and values from
the encoder's output, W^Q, W^K, W^V, W^O each d_model -> d_model, heads of d_model // n_heads features.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from course_utils.core.attention import check_heads
from course_utils.core.errors import ConfigError
from course_utils.core.model import ModelConfig
from course_utils.core.places import PLACE_NAMES
from course_utils.views.style import KIND_COLOURS, describe, fixed_layout

DPI = 100
WIDTH = 9.0  # inches: 900 px, the notebook's display width, so 10 pt text shows at 10 pt
FONT = 10
GREY = "#E8E8E8"  # input vectors
LINEAR = "#FFFFFF"  # linear layers: white boxes with a dark edge
OPERATION = "#F0E442"  # softmax, sum, concatenation (Okabe-Ito yellow)
NORM = "#F7F1A8"  # LayerNorm (a light tint of the Okabe-Ito yellow of the other operations)
INK = "#222222"
# the three places: light tints of Okabe-Ito colours, so that no place is mistaken for a vector kind
PLACE_COLOURS = {"encoder self": "#B3DDF2", "decoder self": "#E8C3D9", "cross": "#F5D08A"}
LAYER_KINDS = ("encoder", "decoder")


def _canvas(height: float, title: str):
    """A figure WIDTH x height inches whose one axes uses inches as data units (0..WIDTH, 0..height - 0.5)."""
    fig = plt.figure(figsize=(WIDTH, height), dpi=DPI)
    top = (height - 0.5) / height
    ax = fig.add_axes((0, 0, 1, top))
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(0, height - 0.5)
    ax.axis("off")
    fig.suptitle(title, fontsize=12, y=1 - 0.12 / height, va="top")
    fixed_layout(fig)  # saved as it is: a fixed size in pixels
    return fig, ax


def _text_colour(face: str) -> str:
    r, g, b = (int(face[i : i + 2], 16) / 255 for i in (1, 3, 5))
    luminance = 0.2126 * r**2.2 + 0.7152 * g**2.2 + 0.0722 * b**2.2
    return "white" if luminance < 0.16 else "black"


def _box(ax, cx, cy, w, h, text, face=LINEAR, *, fontsize=FONT, lw=1.2, gid=None, edge=INK, z=2):
    """A rounded box centred on (cx, cy); returns its (left, bottom, right, top)."""
    patch = FancyBboxPatch(
        (cx - w / 2, cy - h / 2),
        w,
        h,
        boxstyle="round,pad=0,rounding_size=0.06",
        facecolor=face,
        edgecolor=edge,
        linewidth=lw,
        zorder=z,
        gid=gid,
    )
    ax.add_patch(patch)
    if text:
        ax.text(cx, cy, text, ha="center", va="center", fontsize=fontsize, color=_text_colour(face), zorder=z + 1)
    return cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2


def _frame(ax, left, bottom, right, top, label=None, *, fontsize=FONT - 0.5):
    """A light dashed frame (a group of boxes), its label above it."""
    ax.add_patch(
        FancyBboxPatch(
            (left, bottom),
            right - left,
            top - bottom,
            boxstyle="round,pad=0,rounding_size=0.08",
            facecolor="#F7F7F7",
            edgecolor="#888888",
            linewidth=1,
            linestyle=(0, (4, 2)),
            zorder=1,
        )
    )
    if label:
        ax.text((left + right) / 2, top + 0.05, label, ha="center", va="bottom", fontsize=fontsize, zorder=3)


def _arrow(
    ax,
    start,
    end,
    label=None,
    *,
    rad=0.0,
    label_at=0.5,
    offset=(0.0, 0.0),
    ha="center",
    fontsize=FONT - 1,
    corner=False,
):
    """An arrow from start to end (straight, bent by rad, or with one right-angle corner: across, then down/up)."""
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=12,
            linewidth=1.3,
            color=INK,
            shrinkA=0,
            shrinkB=0,
            connectionstyle="angle,angleA=0,angleB=90,rad=0" if corner else f"arc3,rad={rad}",
            zorder=4,
        )
    )
    if label:
        x = start[0] + (end[0] - start[0]) * label_at + offset[0]
        y = start[1] + (end[1] - start[1]) * label_at + offset[1]
        ax.text(x, y, label, ha=ha, va="center", fontsize=fontsize, zorder=5, color=INK)


def _line(ax, points):
    xs, ys = zip(*points)
    ax.plot(xs, ys, color=INK, linewidth=1.3, solid_capstyle="butt", zorder=4)


def _done(fig):
    return fig


# ---------------------------------------------------------------------------------------------------------------
def draw_attention_path(word: str = "eat", sentence=("we", "want", "to", "eat", "apple"), d_head: int = 32):
    """One word's path through one attention head: x -> W^Q, W^K, W^V -> q, k, v; q·k_j/√d_h for every word j;
    softmax over the keys (weights sum to 1); Σ_j weight_j · v_j -> the word's output.

    Used in notebook 03 §2.
    """
    sentence = tuple(sentence)
    if not sentence:
        raise ConfigError("sentence must hold at least one word")
    if len(sentence) > 8:
        raise ConfigError(f"at most 8 words fit the diagram; got {len(sentence)}")
    if word not in sentence:
        raise ConfigError(f"word {word!r} must be one of the sentence's words {list(sentence)}")
    if int(d_head) < 1:
        raise ConfigError(f"d_head must be a positive number of features; got {d_head}")
    n = len(sentence)
    step, bh, bw = 0.52, 0.38, 0.5
    rows_top = 0.95 + n * step  # y of the top of the first word's row
    height = rows_top + 1.75
    fig, ax = _canvas(height, f"One word's path through attention: '{word}' in '{' '.join(sentence)}'")
    ys = [rows_top - step / 2 - i * step for i in range(n)]
    cx = {"label": 0.55, "x": 1.3, "wk": 2.1, "k": 2.9, "s": 4.05, "soft": 5.25, "a": 6.25, "v": 7.15, "sum": 7.95}
    root = f"\\sqrt{{{int(d_head)}}}"

    # the query's path on top: x(word) -> W^Q -> q
    yq = rows_top + 0.75
    ax.text(cx["label"] + 0.3, yq, f"'{word}'", ha="right", va="center", fontsize=FONT, fontweight="bold")
    _box(ax, cx["x"], yq, bw + 0.1, bh, "$x$", GREY)
    _box(ax, cx["wk"], yq, 0.5, bh, "$W^Q$", LINEAR, gid="W^Q")
    _box(ax, cx["k"], yq, bw + 0.1, bh, "$q$", KIND_COLOURS["q"], gid="q")
    _arrow(ax, (cx["x"] + 0.3, yq), (cx["wk"] - 0.25, yq))
    _arrow(ax, (cx["wk"] + 0.25, yq), (cx["k"] - 0.3, yq))

    # every word of the sentence: x_j -> W^K -> k_j, and x_j -> W^V -> v_j (bottom route)
    bottom = ys[-1] - step / 2
    _frame(ax, cx["x"] - 0.36, bottom, cx["x"] + 0.36, rows_top, None)
    ax.text(cx["label"] + 0.3, rows_top + 0.05, "every word", ha="right", va="bottom", fontsize=FONT - 1)
    _box(ax, cx["wk"], (rows_top + bottom) / 2, 0.5, rows_top - bottom, "$W^K$", LINEAR, gid="W^K")
    _frame(ax, cx["s"] - 0.62, bottom, cx["s"] + 0.62, rows_top, None)
    ax.text(
        cx["s"] + 0.35, rows_top + 0.05, f"scores $q\\cdot k_j\\,/\\,{root}$", ha="right", va="bottom", fontsize=FONT
    )
    _box(
        ax,
        cx["soft"],
        (rows_top + bottom) / 2,
        0.95,
        rows_top - bottom,
        f"softmax\nover the\n{n} keys",
        OPERATION,
        gid="softmax",
    )
    _frame(ax, cx["v"] - 0.36, bottom, cx["v"] + 0.36, rows_top, None)
    ax.text(cx["a"] + 0.05, rows_top + 0.05, "weights (sum to 1)", ha="center", va="bottom", fontsize=FONT - 1)
    _box(ax, cx["sum"], (rows_top + bottom) / 2, 0.5, rows_top - bottom, "$\\Sigma_j$", OPERATION, gid="sum")
    for w, y in zip(sentence, ys):
        bold = "bold" if w == word else "normal"
        ax.text(cx["label"] + 0.3, y, w, ha="right", va="center", fontsize=FONT, fontweight=bold)
        _box(ax, cx["x"], y, bw, bh, "$x$", GREY)
        _arrow(ax, (cx["x"] + 0.25, y), (cx["wk"] - 0.25, y))
        _box(ax, cx["k"], y, bw, bh, "$k$", KIND_COLOURS["k"], gid="k")
        _arrow(ax, (cx["wk"] + 0.25, y), (cx["k"] - 0.25, y))
        _box(ax, cx["s"], y, 1.08, bh, f"$q\\cdot k/{root}$", "#FFFFFF")
        _arrow(ax, (cx["k"] + 0.25, y), (cx["s"] - 0.54, y))
        _arrow(ax, (cx["s"] + 0.54, y), (cx["soft"] - 0.475, y))
        _box(ax, cx["a"], y, 0.62, bh, "weight", "#FFFFFF", fontsize=FONT - 1)
        _arrow(ax, (cx["soft"] + 0.475, y), (cx["a"] - 0.31, y))
        _box(ax, cx["v"], y, bw, bh, "$v$", KIND_COLOURS["v"], gid="v")
        _arrow(ax, (cx["a"] + 0.31, y), (cx["v"] - 0.25, y), "×", offset=(0, 0.12), fontsize=FONT + 1)
        _arrow(ax, (cx["v"] + 0.25, y), (cx["sum"] - 0.25, y))
    # q enters every score
    _arrow(ax, (cx["k"] + 0.3, yq), (cx["s"] + 0.45, rows_top + 0.02), corner=True)
    ax.text(
        cx["s"] + 0.6,
        yq,
        f"query: {d_head} numbers,\ncompared with every key",
        ha="left",
        va="center",
        fontsize=FONT - 1,
    )
    # the values' route along the bottom
    yv = 0.45
    _box(ax, 4.05, yv, 3.1, 0.42, "$W^V$: every word's $x$ → its value $v$", LINEAR, gid="W^V")
    _line(ax, [(cx["x"], bottom), (cx["x"], yv), (4.05 - 1.55, yv)])
    _line(ax, [(4.05 + 1.55, yv), (cx["v"], yv)])
    _arrow(ax, (cx["v"], yv), (cx["v"], bottom))
    # the output
    yo = (rows_top + bottom) / 2
    _box(ax, 8.65, yo, 0.62, 0.62, "out", KIND_COLOURS["x1"], gid="output")
    ax.text(8.65, yo - 0.45, f"'{word}'", ha="center", va="top", fontsize=FONT - 1)
    _arrow(ax, (cx["sum"] + 0.25, yo), (8.65 - 0.31, yo))
    ax.text(
        WIDTH / 2,
        0.05,
        f"The same $W^Q$, $W^K$, $W^V$ for every word; $q$, $k$, $v$ have $d_h$ = {d_head} numbers, "
        f"so scores are divided by ${root}$.",
        ha="center",
        va="bottom",
        fontsize=FONT - 1,
    )
    describe(
        fig,
        f"Diagram of the path of '{word}' through one attention head in '{' '.join(sentence)}': its x becomes q "
        f"through W^Q, every word's x becomes k and v through W^K and W^V, the scores q·k/√{int(d_head)} go through "
        f"softmax to {n} weights that sum to 1, and the weighted sum of the v's is the output of '{word}'.",
    )
    return _done(fig)


# ---------------------------------------------------------------------------------------------------------------
def draw_attention_places():
    """The course's encoder-decoder: encoder self-attention in every encoder layer; masked decoder self-attention and
    cross-attention in every decoder layer; cross-attention's queries come from the decoder, its keys and values from
    the encoder's OUTPUT (its last layer), which enters the cross-attention of every decoder layer.

    Used in notebook 02 §4.
    """
    n_layers = ModelConfig().n_layers
    layer_h, gap = 2.3, 0.3
    height = 0.5 + 0.75 + n_layers * (layer_h + gap) + 1.05
    fig, ax = _canvas(height, "Where attention happens: the three places in the course's encoder–decoder")
    top = height - 0.5
    ex, dx, bus = 2.05, 6.55, 4.35  # encoder centre, decoder centre, the encoder output's line
    ew, dw = 3.1, 3.5
    y_in = top - 0.35
    _box(ax, ex, y_in, ew, 0.46, "English sentence → embedding + position", GREY, fontsize=FONT - 1)
    _box(ax, dx, y_in, dw, 0.46, "German so far (<bos> …) → embedding + position", GREY, fontsize=FONT - 1)
    prev_e, prev_d = y_in - 0.23, y_in - 0.23
    cross_ys = []
    for i in range(n_layers):
        t = y_in - 0.23 - gap - i * (layer_h + gap)
        b = t - layer_h
        _frame(ax, ex - ew / 2 - 0.1, b, ex + ew / 2 + 0.1, t)
        _frame(ax, dx - dw / 2 - 0.1, b, dx + dw / 2 + 0.1, t)
        ax.text(ex - ew / 2, t - 0.05, f"encoder layer {i}", ha="left", va="top", fontsize=FONT - 1, style="italic")
        ax.text(dx - dw / 2, t - 0.05, f"decoder layer {i}", ha="left", va="top", fontsize=FONT - 1, style="italic")
        ys = [t - 0.55, t - 1.27, t - 1.97]
        h = 0.44
        _box(ax, ex, ys[0], ew, h, PLACE_NAMES["encoder self"], PLACE_COLOURS["encoder self"], gid="encoder self")
        _box(ax, ex, ys[2], ew, h, "feed-forward", LINEAR)
        _arrow(ax, (ex, prev_e), (ex, ys[0] + h / 2))
        _arrow(ax, (ex, ys[0] - h / 2), (ex, ys[2] + h / 2))
        _box(
            ax,
            dx,
            ys[0],
            dw,
            h,
            PLACE_NAMES["decoder self"] + " (masked)",
            PLACE_COLOURS["decoder self"],
            gid="decoder self",
        )
        _box(
            ax,
            dx,
            ys[1],
            dw,
            h + 0.04,
            PLACE_NAMES["cross"] + ": Q from the decoder,\nK and V from the encoder output",
            PLACE_COLOURS["cross"],
            fontsize=FONT - 1,
            gid="cross",
        )
        _box(ax, dx, ys[2], dw, h, "feed-forward", LINEAR)
        _arrow(ax, (dx, prev_d), (dx, ys[0] + h / 2))
        _arrow(ax, (dx, ys[0] - h / 2), (dx, ys[1] + h / 2 + 0.02), "Q", offset=(0.15, 0))
        _arrow(ax, (dx, ys[1] - h / 2 - 0.02), (dx, ys[2] + h / 2))
        prev_e, prev_d = ys[2] - h / 2, ys[2] - h / 2
        cross_ys.append(ys[1])
    y_mem = prev_e - 0.55
    _box(
        ax,
        ex,
        y_mem,
        ew,
        0.5,
        "encoder output: one vector per English word\n(after the last encoder layer)",
        GREY,
        fontsize=FONT - 1,
        lw=2,
        gid="encoder output",
    )
    _arrow(ax, (ex, prev_e), (ex, y_mem + 0.25))
    _line(ax, [(ex + ew / 2, y_mem), (bus, y_mem), (bus, cross_ys[0])])
    for y in cross_ys:
        _arrow(ax, (bus, y), (dx - dw / 2, y), "K, V", offset=(0, 0.13))
    y_out = prev_d - 0.55
    _box(ax, dx, y_out, dw, 0.5, "linear → one score per German word", LINEAR, fontsize=FONT - 1)
    _arrow(ax, (dx, prev_d), (dx, y_out + 0.25))
    ax.text(
        WIDTH / 2,
        0.08,
        "Residual connections and LayerNorms are left out here: see notebook 05's one-layer diagram.",
        ha="center",
        va="bottom",
        fontsize=FONT - 1,
    )
    describe(
        fig,
        f"Diagram of the course's encoder-decoder, {n_layers} layers on each side: encoder self-attention in every "
        "encoder layer; masked decoder self-attention and cross-attention in every decoder layer, where "
        "cross-attention takes its queries from the decoder and its keys and values from the encoder output.",
    )
    return _done(fig)


# ---------------------------------------------------------------------------------------------------------------
def draw_multi_head(seq_len: int = 5, d_model: int = 64, n_heads: int = 2):
    """Multi-head attention with shapes: X (seq_len, d_model) -> W^Q, W^K, W^V -> split into n_heads heads of
    (seq_len, d_head) -> attention in each head -> concatenation (seq_len, d_model) -> W^O -> output.

    Used in notebook 04 §1.
    """
    seq_len, d_model, n_heads = int(seq_len), int(d_model), int(n_heads)
    if seq_len < 1 or d_model < 1 or n_heads < 1:
        raise ConfigError(f"seq_len, d_model and n_heads must be positive; got {seq_len}, {d_model}, {n_heads}")
    check_heads(d_model, n_heads)
    dh = d_model // n_heads
    full, head = f"({seq_len}, {d_model})", f"({seq_len}, {dh})"
    height = 7.0
    fig, ax = _canvas(
        height, f"Multi-head attention: {n_heads} head{'s' * (n_heads > 1)} of {dh} features, d_model = {d_model}"
    )
    top = height - 0.5
    y_x, y_w, y_qkv, y_split, y_head, y_cat, y_o = (
        top - 0.35,
        top - 1.2,
        top - 2.0,
        top - 2.85,
        top - 3.85,
        top - 4.9,
        top - 5.8,
    )
    _box(ax, 4.5, y_x, 3.6, 0.46, f"$X$: {seq_len} word vectors  {full}", GREY, gid="X")
    xs = (2.2, 4.5, 6.8)
    for x, kind, name in zip(xs, "qkv", "QKV"):
        _box(ax, x, y_w, 1.7, 0.46, f"$W^{name}$  ({d_model} → {d_model})", LINEAR, gid=f"W^{name}")
        _arrow(ax, (4.5 + (x - 4.5) * 0.35, y_x - 0.23), (x, y_w + 0.23))
        _box(ax, x, y_qkv, 1.7, 0.46, f"${name}$  {full}", KIND_COLOURS[kind], gid=kind)
        _arrow(ax, (x, y_w - 0.23), (x, y_qkv + 0.23))
        _arrow(ax, (x, y_qkv - 0.23), (x, y_split + 0.23))
    _box(
        ax,
        4.5,
        y_split,
        7.0,
        0.46,
        f"split the {d_model} features of $Q$, $K$, $V$ into {n_heads} heads of {dh}:  {full} → {n_heads} × {head}",
        OPERATION,
        fontsize=FONT - 1,
        gid="split",
    )
    shown = list(range(n_heads)) if n_heads <= 4 else [0, 1, None, n_heads - 1]
    slot = 8.4 / len(shown)
    centres = [0.3 + slot * (i + 0.5) for i in range(len(shown))]
    for c, h in zip(centres, shown):
        if h is None:
            ax.text(c, y_head, "…", ha="center", va="center", fontsize=FONT + 6)
            continue
        text = f"head {h}\n$Q_{{{h}}}, K_{{{h}}}, V_{{{h}}}$: {head} each\nsoftmax$(Q_{{{h}}} K_{{{h}}}^T/\\sqrt{{{dh}}})\\,V_{{{h}}}$"
        _box(ax, c, y_head, slot - 0.25, 0.95, text, "#FFFFFF", fontsize=FONT - 1, gid=f"head {h}")
        _arrow(ax, (c, y_split - 0.23), (c, y_head + 0.475), head, offset=(0.08, 0), ha="left")
        _arrow(ax, (c, y_head - 0.475), (c, y_cat + 0.23), head, offset=(0.08, 0), ha="left")
    _box(
        ax,
        4.5,
        y_cat,
        7.0,
        0.46,
        f"concatenate the {n_heads} heads:  {n_heads} × {head} → {full}",
        OPERATION,
        fontsize=FONT - 1,
        gid="concat",
    )
    _box(ax, 2.8, y_o, 1.9, 0.46, f"$W^O$  ({d_model} → {d_model})", LINEAR, gid="W^O")
    _box(ax, 6.5, y_o, 2.4, 0.46, f"output  {full}", KIND_COLOURS["out"], gid="output")
    _arrow(ax, (2.8, y_cat - 0.23), (2.8, y_o + 0.23), full, offset=(0.08, 0), ha="left")
    _arrow(ax, (2.8 + 0.95, y_o), (6.5 - 1.2, y_o), full, offset=(0, 0.15))
    ax.text(
        WIDTH / 2,
        0.08,
        f"Every head sees all {seq_len} words but only {dh} of the {d_model} features of $q$, $k$, $v$; "
        "$W^O$ mixes the heads.",
        ha="center",
        va="bottom",
        fontsize=FONT - 1,
    )
    describe(
        fig,
        f"Diagram of multi-head attention for {seq_len} words of {d_model} features: W^Q, W^K, W^V make Q, K, V of "
        f"shape {full}, split into {n_heads} head{'s' * (n_heads > 1)} of {head}, attention in each head, "
        f"concatenation back to {full}, then W^O gives the output {full}.",
    )
    return _done(fig)


# ---------------------------------------------------------------------------------------------------------------
def draw_layer(kind: str = "encoder"):
    """One layer of the course model, in the order `core.model.EncoderLayer` / `DecoderLayer` apply it (post-norm):
    for each sublayer, x = LayerNorm(x + dropout(sublayer(x))): the sublayer, dropout, the residual ⊕ (the skip
    arrow carries x around the sublayer), then LayerNorm. The decoder has two attentions before its feed-forward.

    Used in notebook 05 §2.
    """
    if kind not in LAYER_KINDS:
        raise ConfigError(f"kind must be one of {list(LAYER_KINDS)}; got {kind!r}")
    if kind == "encoder":
        subs = [(PLACE_NAMES["encoder self"] + "  (Q, K, V from x)", PLACE_COLOURS["encoder self"], "encoder self")]
    else:
        subs = [
            (PLACE_NAMES["decoder self"] + " (masked; Q, K, V from x)", PLACE_COLOURS["decoder self"], "decoder self"),
            (PLACE_NAMES["cross"] + "  (Q from x)", PLACE_COLOURS["cross"], "cross"),
        ]
    subs.append(("feed-forward: linear → ReLU → dropout → linear", LINEAR, "feed-forward"))
    block = 1.87  # branch point, sublayer, ⊕, LayerNorm
    height = 0.5 + 0.51 + block * len(subs) + 0.8
    cfg = ModelConfig()
    fig, ax = _canvas(
        height,
        f"One {kind} layer of the course model, post-norm (a LayerNorm after each sum):\n"
        "x = LayerNorm(x + dropout(sublayer(x)))",
    )
    top = height - 0.5
    cx, w, skip = 3.9, 4.6, 1.05  # main path, box width, x of the residual skip lines
    y = top - 0.3
    _box(ax, cx, y, 3.2, 0.42, f"x: one vector per word ({cfg.d_model} numbers)", GREY, fontsize=FONT - 1)
    prev = y - 0.21
    for text, face, gid in subs:
        y_branch = prev - 0.2
        y_sub, y_add, y_norm = y_branch - 0.45, y_branch - 1.05, y_branch - 1.5
        _box(ax, cx, y_sub, w, 0.44, text, face, fontsize=FONT - 1 if len(text) > 40 else FONT, gid=gid)
        _arrow(ax, (cx, prev), (cx, y_sub + 0.22))
        ax.add_patch(Circle((cx, y_add), 0.16, facecolor="white", edgecolor=INK, linewidth=1.3, zorder=3, gid="add"))
        ax.text(cx, y_add, "+", ha="center", va="center", fontsize=FONT + 3, zorder=4)
        _arrow(ax, (cx, y_sub - 0.22), (cx, y_add + 0.16), "dropout", offset=(0.1, 0), ha="left")
        # the residual: the block's input skips the sublayer and is added back
        ax.plot([cx], [y_branch], "o", color=INK, markersize=4, zorder=5)
        _line(ax, [(cx, y_branch), (skip, y_branch), (skip, y_add)])
        _arrow(ax, (skip, y_add), (cx - 0.16, y_add), "residual: block input", offset=(0, 0.12), label_at=0.45)
        _box(ax, cx, y_norm, 1.6, 0.34, "LayerNorm", NORM, gid="LayerNorm")
        _arrow(ax, (cx, y_add - 0.16), (cx, y_norm + 0.17))
        if gid == "cross":
            ex = cx + w / 2 + 1.3
            _box(
                ax,
                ex,
                y_sub,
                1.9,
                0.5,
                "encoder output\n(every English word)",
                GREY,
                fontsize=FONT - 1,
                lw=2,
                gid="encoder output",
            )
            _arrow(ax, (ex - 0.95, y_sub), (cx + w / 2, y_sub), "K, V", offset=(0, 0.13))
        prev = y_norm - 0.17
    y_out = prev - 0.4
    _box(
        ax,
        cx,
        y_out,
        3.2,
        0.42,
        f"layer output ({cfg.d_model} numbers per word)",
        KIND_COLOURS["layer_out"],
        fontsize=FONT - 1,
        gid="layer_out",
    )
    _arrow(ax, (cx, prev), (cx, y_out + 0.21))
    ax.text(
        cx + w / 2 + 0.25,
        top - 0.3,
        f"dropout p = {cfg.dropout:g} in the course model\n(an identity when p = 0)",
        ha="left",
        va="center",
        fontsize=FONT - 1,
    )
    order = (
        "encoder self-attention, then feed-forward"
        if kind == "encoder"
        else "masked decoder self-attention, cross-attention (keys and values from the encoder output), then "
        "feed-forward"
    )
    describe(
        fig,
        f"Diagram of one {kind} layer of the course model, top to bottom: {order}; each followed by dropout, "
        f"the residual addition of its input and a LayerNorm, ending in the layer output ({cfg.d_model} numbers "
        "per word).",
    )
    return _done(fig)
