"""The course's one vocabulary: where attention happens, which vectors it makes, and the trace keys that name them.

    PLACES                                 ("encoder self", "decoder self", "cross"), in model order
    trace_key("encoder self", 0, "q")      "encoder.0.self.q": one recorded tensor
    place_prefix("cross", 1)               "decoder.1.cross"; place_of("decoder.1.cross.weights") -> "cross"
    PLACE_NAMES["cross"]                   "cross-attention": how prose, tables and figure titles name a place
    VECTOR_KINDS                           ("q", "k", "v", "x1", "out", "layer_out"): the vectors compared per place
    HEAD_KINDS                             ("q", "k", "v", "x1"): the kinds that exist once per head

Every module, notebook and test names places, kinds and keys with these (the three places are taught in notebook
02 §4 and 05 §5); their colours are `views.style.KIND_COLOURS`.
"""

from __future__ import annotations

KEY_KINDS = ("k", "v", "k_input", "v_input")  # rows labelled by key tokens

# ---- the course's one vocabulary for where attention happens (every module and notebook uses these) ----
PLACES = ("encoder self", "decoder self", "cross")  # the three places attention happens, in model order
PLACE_NAMES = {  # how prose, tables and figure titles name them
    "encoder self": "encoder self-attention",
    "decoder self": "decoder self-attention",
    "cross": "cross-attention",
}
_PLACE_PARTS = {"encoder self": ("encoder", "self"), "decoder self": ("decoder", "self"), "cross": ("decoder", "cross")}
# the vector kinds the course compares per place (their colours: views.style.KIND_COLOURS)
VECTOR_KINDS = ("q", "k", "v", "x1", "out", "layer_out")
HEAD_KINDS = VECTOR_KINDS[:4]  # q, k, v, x1: (H, T, dh), one per head; out and layer_out mix the heads (T, d_model)
WHOLE_LAYER_KINDS = VECTOR_KINDS[4:]  # out, layer_out: d_model numbers that mix the heads, no per-head version


def place_prefix(place: str, layer: int) -> str:
    """("cross", 1) -> "decoder.1.cross": the trace-key prefix of one place and layer.
    Used in notebook 02 §4 (what enters each place); trace_key builds on it."""
    if place not in _PLACE_PARTS:
        raise ValueError(f"place must be one of {list(PLACES)}; got {place!r}")
    side, kind = _PLACE_PARTS[place]
    return f"{side}.{int(layer)}.{kind}"


def trace_key(place: str, layer: int, kind: str) -> str:
    """("encoder self", 0, "q") -> "encoder.0.self.q"; kind "layer_out" -> the layer's output "encoder.0.layer_out".
    Used in notebooks 09 §2, §4 and 10 §3, §4."""
    prefix = place_prefix(place, layer)
    if kind == "layer_out":
        return prefix.rsplit(".", 1)[0] + ".layer_out"
    return f"{prefix}.{kind}"


def place_of(key: str) -> str:
    """ "decoder.1.cross.weights" -> "cross" (the inverse of place_prefix, for any trace key of a place).
    Taught in notebook 05 §5 (written out there); used by measures.projection.collect_vectors (notebook 06)."""
    side, _, kind = (key.split(".") + ["", ""])[:3]
    for place, parts in _PLACE_PARTS.items():
        if parts == (side, kind):
            return place
    raise ValueError(f"{key!r} is not a trace key of an attention place")


def layer_of(key: str) -> int:
    """ "decoder.1.cross.weights" -> 1: the layer a trace key (or prefix) belongs to.
    Used by measures.projection.collect_vectors and measures.clustering.context_distance_table (notebook 06 §1-§4)."""
    parts = key.split(".")
    if len(parts) < 2 or not parts[1].isdigit():
        raise ValueError(f"{key!r} is not the trace key of a layer (e.g. 'encoder.0.self.q')")
    return int(parts[1])


def head_index(head) -> int | None:
    """A head choice as widgets and callers give it: None or "all" -> None (all heads side by side); 0 / "0" -> 0.
    Used by views.clustering, measures.clustering and measures.probing (the head choices of notebooks 06-08)."""
    return None if head is None or head == "all" else int(head)
