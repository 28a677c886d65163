"""Checkers for notebook 09 (what a head compares, and what it writes)."""

from __future__ import annotations

from course_utils.exercises.framework import Exercise, Mistake, check_choice
from course_utils.measures.weight_maps import attention_module, ov_map

# Exercise 1: turn every query and every key by the same rotation R: do the scores change?

WHY_SAME = "each score becomes q·R·(k·R)ᵀ = q·R·Rᵀ·kᵀ = q·kᵀ, because R·Rᵀ = I for a rotation"


def check_rotation_guess(my_rotation_guess) -> bool:
    """Exercise 1: a prediction, "all change", "some change" or "none change" (right). Used in notebook 09."""
    return check_choice(
        my_rotation_guess,
        "none change",
        {
            "all change": f"every query and key gets new numbers, yet {WHY_SAME}: no score changes.",
            "some change": f"the rotation turns every query and every key alike, and {WHY_SAME}: no score changes.",
            "none change": "",
        },
        todo='write "all change", "some change" or "none change" into my_rotation_guess, then re-run this cell.',
        success=f"none change: {WHY_SAME}. The head compares through W^Q (W^K)ᵀ, not through W^Q alone.",
    )


# Exercise 2: one head's W^Q_h and W^K_h against one d × d score matrix, counted on the course model


def check_count_guess(my_count_guess, cfg) -> bool:
    """Exercise 2: a prediction, "two matrices", "one table" or "equal", for the sizes in cfg. Used in notebook 09."""
    d, d_head = cfg.d_model, cfg.d_model // cfg.n_heads
    pair, table = 2 * d * d_head, d * d
    right = "equal" if pair == table else "two matrices" if pair > table else "one table"
    counts = f"W^Q_h and W^K_h hold 2·{d}·{d_head} = {pair} numbers, one {d} × {d} table {table}"
    hint = f"{counts}. Count again: each of the two matrices is d × d_head."
    return check_choice(
        my_count_guess,
        right,
        {"two matrices": hint, "one table": hint, "equal": hint},
        todo='write "two matrices", "one table" or "equal" into my_count_guess, then re-run this cell.',
        success=f"{counts}. With two heads of d/2 the pair costs as much as the table; with more, smaller heads, less.",
    )


# Exercise 3: what a head writes, W^V_h W^O_h


def _ov(attn, h: int, w_o_rows: bool = False):
    part = slice(h * attn.d_head, (h + 1) * attn.d_head)
    w_o = attn.w_o.weight[part] if w_o_rows else attn.w_o.weight[:, part].T
    return (attn.w_v.weight[part].T @ w_o).detach()


OV_MISTAKES = (
    Mistake("W^O_h is head h's COLUMNS of w_o.weight, not its rows.", gives=lambda attn, h: _ov(attn, h, True)),
    Mistake("transposed: a key vector y is written as y · W^V_h · W^O_h.", gives=lambda attn, h: _ov(attn, h).T),
    Mistake("that is every head together (W^V W^O); take head h's.", gives=lambda attn, h: _ov(attn, 0) + _ov(attn, 1)),
    Mistake("the heads are swapped: head h uses features h·dh to (h + 1)·dh.", gives=lambda attn, h: _ov(attn, 1 - h)),
)


def check_ov_map(ov_map_fn, model, prefix: str = "encoder.0.self") -> bool:
    """Exercise 3: ov_map_fn(attn, head) = W^V_h W^O_h, as weight_maps.ov_map, for every head. Used in notebook 09."""
    attn = attention_module(model, prefix)
    return Exercise(
        name="ov_map",
        success=f"W^V_h W^O_h of every head of {prefix}: {attn.d_model} × {attn.d_model}, rank dh = {attn.d_head}.",
        reference=lambda attn, h: ov_map(model, prefix, h),
        cases=[(f"head {h}", (attn, h)) for h in range(attn.n_heads)],
        mistakes=OV_MISTAKES,
        otherwise="not W^V_h W^O_h: head h's columns of W^V = w_v.weight.T times its rows of W^O = w_o.weight.T.",
        returns=f"a ({attn.d_model}, {attn.d_model}) tensor",
        forbid=("course_utils",),
        forbid_hint="the course's code; build W^V_h W^O_h yourself from attn.w_v and attn.w_o.",
        atol=1e-5,
    ).check(ov_map_fn)
