"""Checkers for notebook 09 (heads and the "query" analogy)."""

from __future__ import annotations

import ast
import inspect
import math
import textwrap

import torch

from course_utils.core.data import encode_source, encode_target, pad_batch
from course_utils.core.places import PLACES, trace_key
from course_utils.core.precision import DTYPE
from course_utils.exercises import calls_course_helper, feedback, no_function, not_answered
from course_utils.measures.attention_stats import head_statistics
from course_utils.measures.interventions import accuracy
from course_utils.measures.weight_maps import ov_map
from course_utils.trace.interventions import ablate_head
from course_utils.trace.tracing import patch

# Exercise 1: a head detector, run over the corpus

DETECTED = {"encoder self": ("itself", "previous"), "decoder self": ("itself", "previous"), "cross": ("aligned",)}


def detector_variant(batch, place: str, layer: int, head: int, mistake: str | None = None) -> dict[str, float]:
    """The detector's scores of one head, right (mistake None) or with a typical mistake:
    "padding" (every row and key of the padded batch), "next" (off by one: the key after the query),
    "keys" (the aligned weight averaged over the aligned keys instead of summed), "bos" (decoder <bos> row kept).
    Used in notebook 09 (an exercise)."""
    w_all = batch.weights[trace_key(place, layer, "weights")][:, head].double()  # (B, Tq, Tk)
    sums: dict[str, list[torch.Tensor]] = {}
    for b in range(len(batch.pairs)):
        ns, nt = int(batch.src_len[b]), int(batch.tgt_len[b])
        if mistake == "padding":
            ns, nt = w_all.shape[2], w_all.shape[1]
        if place == "cross":
            made = [r for r in batch.out_roles[b][: int(batch.tgt_len[b])] if r != "end"]
            roles = batch.src_roles[b]
            w = w_all[b, : (nt if mistake == "padding" else len(made)), :ns]
            made = made + [None] * (w.shape[0] - len(made))
            cols = [[j for j, r in enumerate(roles) if r == m] for m in made]
            pick = [w[i, c].mean() if mistake == "keys" else w[i, c].sum() for i, c in enumerate(cols)]
            pick = [x for x, c in zip(pick, cols) if c or mistake == "padding"]  # padding: empty rows count as 0
            sums.setdefault("aligned", []).append(torch.stack(pick))
        else:
            n = ns if place == "encoder self" else nt
            w = w_all[b, :n, :n]
            q0 = 1 if place == "decoder self" and mistake != "bos" else 0
            sums.setdefault("itself", []).append(w.diagonal()[q0:])
            sums.setdefault("previous", []).append(w.diagonal(1 if mistake == "next" else -1))
    return {m: float(torch.cat(v).mean()) for m, v in sums.items()}


MISTAKES = {
    "padding": "padded positions counted: use only the real queries and keys of each pair "
    "(batch.src_len, batch.tgt_len), and for 'aligned' only the rows that produce a word (not <eos>).",
    "next": "'previous' is off by one: it reads the key AFTER the query (w[i, i + 1]); the previous key is "
    "w[i, i − 1], the diagonal below the main one.",
    "keys": "'aligned' is averaged over the aligned keys; a query's weight on its aligned word(s) is their SUM "
    "(want + to both count), then average that over the queries.",
    "bos": "decoder self-attention's <bos> row can only look at itself (weight 1): leave it out of 'itself'.",
}


OWN_VERSION = (
    "head_detector calls {names}, the course's own version: compute the masses from batch.weights yourself "
    "(itself_mass, previous_mass and aligned_mass_of are allowed)."
)
# the course's own versions of the detector: the table, its reference variant and the one-sentence measure
DETECTOR_HELPERS = ("head_statistics", "detector_variant", "aligned_mass", "role_attention", "role_tables")


def check_head_detector(head_detector, batch) -> bool:
    """head_detector(batch, place, layer, head) -> {"itself": .., "previous": ..} (self-attention) or
    {"aligned": ..} (cross), each the mean over every real query of every pair, as attention_stats.head_statistics.
    Used in notebook 09 §2 (its exercise)."""
    if no_function(
        head_detector,
        "write head_detector, then re-run this cell.",
        f"head_detector must be a function (batch, place, layer, head) -> dict; got {type(head_detector).__name__}.",
    ):
        return False
    if calls_course_helper(head_detector, DETECTOR_HELPERS, OWN_VERSION):
        return False
    stats = head_statistics(batch)
    heads_ = [(p, layer, h) for p in PLACES for layer in range(batch.n_layers) for h in range(batch.n_heads)]
    try:
        got = {key: head_detector(batch, *key) for key in heads_}
    except NotImplementedError:
        return not_answered("write head_detector, then re-run this cell.")
    except Exception as exc:  # a learner's bug: say what happened, no traceback
        return feedback(False, "", f"head_detector raised {type(exc).__name__}: {_one_line(exc)}")
    if all(g is None for g in got.values()):
        return not_answered("write head_detector, then re-run this cell.")
    for key, g in got.items():
        want = DETECTED[key[0]]
        if not isinstance(g, dict) or set(g) != set(want):
            return feedback(False, "", f"for {key} return a dict with the keys {list(want)}; got {g!r:.80}.")
        try:
            [float(v) for v in g.values()]
        except (TypeError, ValueError):
            return feedback(False, "", f"for {key} each score must be one number (a float); got {g!r:.80}.")
    wrong = {
        key: [m for m in g if not math.isclose(float(g[m]), stats.loc[key, m], abs_tol=1e-6)] for key, g in got.items()
    }
    wrong = {k: v for k, v in wrong.items() if v}
    if not wrong:
        best = {
            m: max((k for k, g in got.items() if m in g), key=lambda k: got[k][m])
            for m in ("previous", "itself", "aligned")
        }
        return feedback(
            True,
            f"all {len(heads_)} heads match the course's measures (head_statistics). The strongest: "
            + "; ".join(f"{m} {got[k][m]:.2f} ({k[0]}, layer {k[1]}, head {k[2]})" for m, k in best.items())
            + ".",
            "",
        )
    key, measures = next(iter(wrong.items()))
    for mistake, hint in MISTAKES.items():
        v = detector_variant(batch, *key, mistake=mistake)
        if all(math.isclose(float(got[key][m]), v.get(m, math.nan), abs_tol=1e-6) for m in measures):
            return feedback(False, "", f"{key}: {hint}")
    return feedback(
        False,
        "",
        f"{len(wrong)} of {len(heads_)} heads differ from the course's measures, e.g. {key} {measures}: "
        f"{', '.join(f'{m} {float(got[key][m]):.3f}' for m in measures)}. Average over every real query of every pair.",
    )


# Exercise 2: what a head writes, W^V_h W^O_h


def _ov_variants(attn, head: int) -> dict[str, torch.Tensor]:
    dh = attn.d_head
    sl = slice(head * dh, (head + 1) * dh)
    wv, wo = attn.w_v.weight.detach(), attn.w_o.weight.detach()
    return {
        "rows": (
            wv[sl].T @ wo[sl],
            "W^O_h is head h's dh COLUMNS of w_o.weight (nn.Linear stores (out, in)), not its rows.",
        ),
        "transposed": (
            wo[:, sl] @ wv[sl],
            "that is the transpose: in the row convention a key vector y is written as y · W^V_h · W^O_h, "
            "so W^V_h (d_model, dh) comes first.",
        ),
        "all heads": (wv.T @ wo.T, "that is every head together (W^V W^O); take only head h's dh features."),
    }


def _calls_library_ov_map(fn) -> bool:
    """True when fn calls the course's copy, `weight_maps.ov_map`, under any name: a call `<module>.ov_map(...)`,
    or a call of a name that fn's globals bind to the library function (the learner's own function is also
    named ov_map, so the plain name alone does not count)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    names = getattr(fn, "__globals__", {})
    return any(
        isinstance(n, ast.Call)
        and (
            (isinstance(n.func, ast.Attribute) and n.func.attr == "ov_map")
            or (isinstance(n.func, ast.Name) and names.get(n.func.id) is ov_map)
        )
        for n in ast.walk(tree)
    )


OV_HELPERS = ("head_banks", "query_bank", "written_vectors", "qk_map")  # the course's slicing and its products


def _one_line(exc: Exception) -> str:
    """An exception's message on one line (a learner's error may span several)."""
    return " ".join(str(exc).split())[:200]


def check_ov_map(ov_map_fn, model, prefix: str = "encoder.0.self") -> bool:
    """ov_map_fn(attn, head) -> W^V_h W^O_h (d_model, d_model), attn a MultiHeadAttention (e.g. model.encoder[0].self_attn);
    compared with weight_maps.ov_map for every head of `prefix`.
    Used in notebook 09 §3 (its exercise)."""
    from course_utils.measures.weight_maps import attention_module as _mha

    if no_function(
        ov_map_fn,
        "write ov_map, then re-run this cell.",
        f"ov_map must be a function (attn, head) -> a (d_model, d_model) tensor; got {type(ov_map_fn).__name__}.",
    ):
        return False
    if calls_course_helper(
        ov_map_fn,
        OV_HELPERS,
        "ov_map calls {names}, the course's own slicing: take head h's part of attn.w_v and attn.w_o yourself.",
    ):
        return False
    if _calls_library_ov_map(ov_map_fn):
        return feedback(
            False,
            "",
            "ov_map calls the course's copy (weight_maps.ov_map): build W^V_h W^O_h yourself from attn.w_v and attn.w_o.",
        )
    attn = _mha(model, prefix)
    try:
        got = [ov_map_fn(attn, h) for h in range(attn.n_heads)]
    except NotImplementedError:
        return not_answered("write ov_map, then re-run this cell.")
    except Exception as exc:  # a learner's bug: say what happened, no traceback
        return feedback(False, "", f"ov_map raised {type(exc).__name__}: {_one_line(exc)}")
    if any(g is None for g in got):
        return not_answered("write ov_map, then re-run this cell.")
    try:
        got = [torch.as_tensor(g).detach().to(DTYPE) for g in got]
    except (TypeError, ValueError, RuntimeError):
        return feedback(False, "", f"ov_map must return a tensor (d_model, d_model); got {type(got[0]).__name__}.")
    d = attn.d_model
    if any(g.shape != (d, d) for g in got):
        return feedback(
            False,
            "",
            f"W^V_h W^O_h maps a d_model vector to a d_model vector: shape ({d}, {d}); got {tuple(got[0].shape)}.",
        )
    want = [ov_map(model, prefix, h) for h in range(attn.n_heads)]
    if all(torch.allclose(g, w, atol=1e-5) for g, w in zip(got, want)):
        ranks = [int(torch.linalg.matrix_rank(w)) for w in want]
        return feedback(
            True,
            f"W^V_h W^O_h of every head of {prefix} ({d} × {d}, rank {ranks[0]} = dh: the head writes into a "
            f"{ranks[0]}-dimensional part of the {d} features).",
            "",
        )
    if all(torch.allclose(g, want[1 - h], atol=1e-5) for h, g in enumerate(got)) and attn.n_heads == 2:
        return feedback(False, "", "the heads are swapped: head h uses features h·dh to (h + 1)·dh.")
    for h, g in enumerate(got):
        for candidate, hint in _ov_variants(attn, h).values():
            if torch.allclose(g, candidate, atol=1e-5):
                return feedback(False, "", f"head {h}: {hint}")
    return feedback(
        False,
        "",
        "the result differs from W^V_h W^O_h: take head h's columns of W^V = w_v.weight.T and head h's rows of "
        "W^O = w_o.weight.T, and multiply them in that order.",
    )


# A prediction before the interventions table: cross-attention forced uniform (no earlier notebook prints it)

PREDICTED_ROW = "uniform: cross"  # the row of the interventions table (score_interventions) the prediction is about


def check_cross_uniform_prediction(my_prediction, table) -> bool:
    """my_prediction: the share (0..1, or a percentage) of training pairs still translated exactly with every
    cross-attention row forced uniform (both decoder layers); `table` is the interventions table (score_interventions).
    Used in notebook 09 §4 (its prediction)."""
    if my_prediction is None:
        return not_answered(
            "write your guess into my_prediction (a share from 0 to 1) "
            "before you look at the table, then re-run both cells."
        )
    if isinstance(my_prediction, bool):
        return feedback(False, "", f"my_prediction must be a number from 0 to 1, not {my_prediction!r}.")
    try:
        guess = float(my_prediction)
    except (TypeError, ValueError):
        return feedback(False, "", f"my_prediction must be a number from 0 to 1; got {type(my_prediction).__name__}.")
    if 1 < guess <= 100:
        guess /= 100  # a percentage
    if not 0 <= guess <= 1:
        return feedback(
            False, "", f"my_prediction must be a share from 0 to 1 (or a percentage); got {my_prediction!r}."
        )
    try:
        truth = float(table.loc[PREDICTED_ROW, "train"])
    except (AttributeError, KeyError, TypeError):
        return feedback(False, "", "pass the interventions table of the cell above as the second argument.")
    close = abs(guess - truth) <= 0.15
    return feedback(
        close,
        f"you guessed {guess:.2f}; the model keeps {truth:.3f} of the training pairs: about half the translations "
        "survive without any learned cross-attention pattern, half need it.",
        f"you guessed {guess:.2f}; the model keeps {truth:.3f} of the training pairs. "
        + (
            "More than most expect: every German word still reads the average of the English sentence, and the "
            "decoder's own words do the rest for many pairs."
            if guess < truth
            else "Fewer than you thought: without its pattern, cross-attention loses about half the translations."
        ),
    )


# Exercise 3: remove a whole cross-attention layer


def _logits(model, pairs, patches):
    src = pad_batch([encode_source(model.src_vocab, p.english, model.cfg.max_len) for p in pairs])
    tgt = pad_batch([encode_target(model.tgt_vocab, p.german, model.cfg.max_len)[:-1] for p in pairs])
    with torch.no_grad(), patch(model, patches):
        return model(src, tgt)


def reference_patches(layer: int = 0) -> dict:
    """Both heads of decoder layer `layer` cross-attention removed (their x1 set to 0).
    Used in notebook 09 (an exercise)."""
    return {f"decoder.{layer}.cross.x1": lambda x1, name="": torch.zeros_like(x1)}


def check_remove_cross_layer(patches, model, pairs) -> bool:
    """patches: a patch() dict that removes BOTH heads of decoder layer 0 cross-attention.
    Used in notebook 09 §4 (its exercise)."""
    if patches is None or (isinstance(patches, dict) and not patches):
        return not_answered("write the patches dict, then re-run this cell.")
    if not isinstance(patches, dict):
        return feedback(
            False, "", f"patches must be a dict {{trace key or pattern: function}}; got {type(patches).__name__}."
        )
    if not all(isinstance(k, str) and callable(f) for k, f in patches.items()):
        return feedback(False, "", "each entry of patches maps a trace key (a str) to a function(tensor, name).")
    if any(getattr(f, "__qualname__", "").startswith("reference_patches.") for f in patches.values()):
        return feedback(False, "", "that is the course's own answer (reference_patches): write the patch yourself.")
    sample = pairs[::11]
    try:
        got = _logits(model, sample, patches)
    except Exception as exc:
        return feedback(False, "", f"running with your patches raised {type(exc).__name__}: {_one_line(exc)}")
    want, plain = _logits(model, sample, reference_patches(0)), _logits(model, sample, {})
    if torch.allclose(got, want, atol=1e-5):
        acc = accuracy(model, pairs, patches)
        return feedback(
            True,
            f"without cross-attention layer 0 the model translates {acc['train']:.1%} of the training "
            f"and {acc['heldout']:.1%} of the held-out pairs exactly.",
            "",
        )
    if torch.allclose(got, plain, atol=1e-5):
        return feedback(
            False,
            "",
            "with these patches the model's output is unchanged: does the key name the x1 of decoder layer 0 "
            "cross-attention (trace_key builds keys), and does the function return the changed tensor?",
        )
    one = [_logits(model, sample, {"decoder.0.cross.x1": ablate_head(h)}) for h in range(2)]
    if any(torch.allclose(got, o, atol=1e-5) for o in one):
        return feedback(False, "", "that removes only one head; remove both heads of decoder layer 0 cross-attention.")
    return feedback(
        False,
        "",
        "the output differs from removing both heads of decoder layer 0 cross-attention "
        "(zero its x1, the heads' outputs before W^O).",
    )
