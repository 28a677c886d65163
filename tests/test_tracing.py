"""record / patch / run_with_trace: tracing observes without changing anything, patches do what they say."""

from __future__ import annotations

import fnmatch

import pytest
import torch

from course_utils.core.data import BOS, encode_source, encode_target, load_pairs, pad_batch
from course_utils.core.model import build_model, translate
from course_utils.core.places import PLACES, trace_key
from course_utils.trace.interventions import (
    ablate_head,
    first_token_attention,
    last_token_attention,
    uniform_attention,
)
from course_utils.trace.tracing import Trace, hook_points, patch, record, run_with_trace


def n_hooks(model) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._backward_hooks) for m in model.modules())


@pytest.fixture(scope="module")
def batch(course):
    """Four training pairs of different lengths: (src (B, Ts), tgt_in (B, Tt)) with padding in both."""
    pairs = sorted(load_pairs("train"), key=lambda p: len(p.english.split()) + len(p.german.split()))
    chosen = [pairs[0], pairs[len(pairs) // 3], pairs[2 * len(pairs) // 3], pairs[-1]]
    m = course.model
    src = pad_batch([encode_source(m.src_vocab, p.english, m.cfg.max_len) for p in chosen])
    tgt = pad_batch([encode_target(m.tgt_vocab, p.german, m.cfg.max_len)[:-1] for p in chosen])
    assert (src == 0).any() and (tgt == 0).any()  # the batch really is padded
    return src, tgt


def allowed_masks(src, tgt):
    """Which keys each query may see, per place: (B, 1, Tq, Tk) bool, built from the ids alone."""
    Ts, Tt = src.shape[1], tgt.shape[1]
    src_keep, tgt_keep = (src != 0)[:, None, None, :], (tgt != 0)[:, None, None, :]
    causal = torch.ones(Tt, Tt, dtype=torch.bool).tril()
    return {
        "encoder": src_keep.expand(-1, 1, Ts, Ts),
        "self": causal & tgt_keep,
        "cross": src_keep.expand(-1, 1, Tt, Ts),
    }


def place_of(key):
    return "encoder" if key.startswith("encoder") else key.split(".")[2]


# ---------------------------------------------------------------- record


def test_record_changes_no_output(course_copy, batch):
    model = course_copy.eval()
    src, tgt = batch
    with torch.no_grad():
        plain = model(src, tgt)
        with record(model) as cache:
            traced = model(src, tgt)
        with record(model, "decoder.*.cross.*"):
            traced_some = model(src, tgt)
    assert cache  # something was recorded
    assert torch.equal(plain, traced) and torch.equal(plain, traced_some)


def test_record_changes_no_gradient(course_copy, batch):
    model = course_copy.train()
    src, tgt = batch

    def grads(trace):
        model.zero_grad()
        if trace:
            with record(model):
                logits = model(src, tgt)
        else:
            logits = model(src, tgt)
        logits.logsumexp(-1).sum().backward()
        return [p.grad.clone() for p in model.parameters()]

    for a, b in zip(grads(False), grads(True)):
        assert torch.equal(a, b)


def test_record_keys_and_shapes_keep_the_batch_dim(course, batch, trace_shapes):
    src, tgt = batch
    with torch.no_grad(), record(course.model) as cache:
        course.model(src, tgt)
    expected = trace_shapes(course.model.cfg, src.shape[1], tgt.shape[1])
    assert set(cache) == set(expected)
    for key, shape in expected.items():
        assert tuple(cache[key].shape) == (src.shape[0], *shape), key
    assert set(hook_points(course.model)) == set(expected)


def test_recorded_tensors_are_detached_cpu_copies(course_copy, batch):
    model = course_copy.train()
    src, tgt = batch
    live = {}
    point = hook_points(model)["decoder.1.cross.weights"]
    handle = point.register_forward_hook(lambda mod, inp, out: live.__setitem__("w", out))
    try:
        with record(model) as cache:
            model(src, tgt)  # with autograd on
    finally:
        handle.remove()
    for key, t in cache.items():
        assert t.device.type == "cpu" and not t.requires_grad and t.grad_fn is None, key
    rec, orig = cache["decoder.1.cross.weights"], live["w"]
    assert orig.requires_grad  # the live tensor is part of the graph ...
    assert torch.equal(rec, orig.detach())  # ... the record has its values ...
    assert rec.untyped_storage().data_ptr() != orig.untyped_storage().data_ptr()  # ... in its own memory
    rec.zero_()
    assert orig.abs().sum() > 0


def test_record_selects_by_glob_and_last_pass_wins(course, batch):
    src, tgt = batch
    with torch.no_grad(), record(course.model, ["decoder.*.cross.weights", "encoder.embed"]) as cache:
        course.model(src, tgt)
        first = cache["encoder.embed"].clone()
        course.model(src[:1], tgt[:1])
    assert set(cache) == {"decoder.0.cross.weights", "decoder.1.cross.weights", "encoder.embed"}
    assert cache["encoder.embed"].shape[0] == 1 and first.shape[0] == src.shape[0]


def test_record_unknown_name_raises_and_leaves_no_hooks(course_copy):
    with pytest.raises(KeyError, match="no hook point"):
        with record(course_copy, "decoder.*.crosss.weights"):
            pass
    assert n_hooks(course_copy) == 0


def test_hooks_removed_after_exit_and_after_exception(course_copy, batch):
    model = course_copy
    src, tgt = batch
    assert n_hooks(model) == 0
    with record(model):
        assert n_hooks(model) == len(hook_points(model))
    assert n_hooks(model) == 0
    with pytest.raises(RuntimeError, match="boom"):
        with record(model):
            raise RuntimeError("boom")
    assert n_hooks(model) == 0
    with pytest.raises(RuntimeError, match="boom"):
        with patch(model, {"*.weights": uniform_attention}):
            assert n_hooks(model) > 0
            raise RuntimeError("boom")
    assert n_hooks(model) == 0

    def broken(t, name):
        raise ValueError(f"patch failed at {name}")

    with pytest.raises(ValueError, match="patch failed at encoder.0.self.q"):
        with patch(model, {"encoder.0.self.q": broken}), torch.no_grad():
            model(src, tgt)
    assert n_hooks(model) == 0
    # a bad pattern after a good one: the good one's hooks are removed as well
    with pytest.raises(KeyError):
        with patch(model, {"encoder.*.weights": uniform_attention, "no.such.point": uniform_attention}):
            pass
    assert n_hooks(model) == 0


# ---------------------------------------------------------------- patch


def _run(model, src, tgt, patches=None):
    """Logits and a full record, with `patches` applied first (so the record shows patched tensors)."""
    with torch.no_grad(), patch(model, patches or {}), record(model) as cache:
        logits = model(src, tgt)
    return logits, cache


def test_identity_patch_changes_nothing(course_copy, batch):
    model = course_copy.eval()
    src, tgt = batch
    plain, _ = _run(model, src, tgt)
    same, _ = _run(model, src, tgt, {"*": lambda t, name: t})
    assert torch.equal(plain, same)


def _check_patched_weights(model, batch, pattern, fn, expected_fn):
    src, tgt = batch
    plain, _ = _run(model, src, tgt)
    logits, cache = _run(model, src, tgt, {pattern: fn})
    masks = allowed_masks(src, tgt)
    patched = [k for k in cache if k.endswith(".weights") and fnmatch.fnmatchcase(k, pattern)]
    assert patched
    for key in patched:
        w = cache[key]
        allowed = masks[place_of(key)].expand_as(w)
        exp = expected_fn(allowed).to(w.dtype)
        bad = (w != exp).any(-1)  # (B, H, Tq): query rows that differ
        assert not bad.any(), (
            f"{key}: {int(bad.sum())} of {bad.numel()} query rows differ from the documented pattern, e.g. "
            f"{w[bad][0].tolist()} instead of {exp[bad][0].tolist()} (allowed keys {allowed[bad][0].tolist()})"
        )
        # the patched weights are what the layer used downstream: x1 = weights · v
        p = key.rsplit(".", 1)[0]
        torch.testing.assert_close(cache[f"{p}.x1"], w @ cache[f"{p}.v"], rtol=1e-5, atol=1e-6)
    assert not torch.allclose(logits, plain)
    after, _ = _run(model, src, tgt)
    assert torch.equal(after, plain) and n_hooks(model) == 0  # removed afterwards


def test_patch_uniform_attention(course_copy, batch):
    def expected(allowed):
        a = allowed.to(torch.float64)
        return a / a.sum(-1, keepdim=True)

    _check_patched_weights(course_copy.eval(), batch, "*.weights", uniform_attention, expected)


def test_patch_first_token_attention(course_copy, batch):
    def expected(allowed):
        out = torch.zeros(allowed.shape)
        out[..., 0] = 1.0
        return out

    _check_patched_weights(course_copy.eval(), batch, "decoder.*.cross.weights", first_token_attention, expected)


@pytest.mark.parametrize("pattern", ["decoder.*.self.weights", "decoder.*.cross.weights", "encoder.*.weights"])
def test_patch_last_token_attention(course_copy, batch, pattern):
    def expected(allowed):
        idx = torch.arange(allowed.shape[-1])
        last = torch.where(allowed, idx, -1).amax(-1, keepdim=True)
        return torch.zeros(allowed.shape).scatter(-1, last, 1.0)

    _check_patched_weights(course_copy.eval(), batch, pattern, last_token_attention, expected)
    # "last word, or itself under a causal mask": on the decoder's own side, real tokens look at themselves
    if pattern == "decoder.*.self.weights":
        src, tgt = batch
        _, cache = _run(course_copy, src, tgt, {pattern: last_token_attention})
        w = cache["decoder.0.self.weights"]
        real = tgt != 0
        diag = w.diagonal(dim1=-2, dim2=-1)  # (B, H, Tt)
        assert (diag.permute(1, 0, 2)[:, real] == 1).all()


@pytest.mark.parametrize("head", [0, 1])
def test_patch_ablate_head(course_copy, batch, head):
    model = course_copy.eval()
    src, tgt = batch
    plain_logits, plain = _run(model, src, tgt)
    logits, cache = _run(model, src, tgt, {"decoder.0.cross.x1": ablate_head(head)})
    x1 = cache["decoder.0.cross.x1"]
    other = 1 - head
    assert torch.equal(x1[:, head], torch.zeros_like(x1[:, head]))
    assert torch.equal(x1[:, other], plain["decoder.0.cross.x1"][:, other])  # the other head is untouched
    dh = model.cfg.d_model // model.cfg.n_heads
    concat = cache["decoder.0.cross.concat"]
    assert torch.equal(concat[..., head * dh : (head + 1) * dh], torch.zeros_like(concat[..., :dh]))
    assert not torch.allclose(logits, plain_logits)
    assert torch.equal(_run(model, src, tgt)[0], plain_logits) and n_hooks(model) == 0


def test_ablate_head_out_of_range(course_copy, batch):
    src, tgt = batch
    with pytest.raises(IndexError, match="head 2 out of range"):
        with torch.no_grad(), patch(course_copy, {"decoder.0.cross.x1": ablate_head(2)}):
            course_copy(src, tgt)
    assert n_hooks(course_copy) == 0


def test_patch_changes_translation_and_is_undone(course_copy):
    model = course_copy
    sentences = [p.english for p in load_pairs("train")[::10]]
    plain = [translate(model, s) for s in sentences]
    with patch(model, {"decoder.*.cross.weights": first_token_attention}):
        patched = [translate(model, s) for s in sentences]
    assert patched != plain  # the decoder can no longer read the sentence: translations change
    assert [translate(model, s) for s in sentences] == plain


# ---------------------------------------------------------------- run_with_trace / Trace


def test_run_with_trace_own_translation(course, trace_shapes):
    model = course.model
    t = run_with_trace(model, "We want to eat bread")
    assert t.src_tokens == ["we", "want", "to", "eat", "bread"]
    assert t.translation == translate(model, "we want to eat bread")
    assert t.tgt_tokens == [BOS] + t.translation
    shapes = trace_shapes(model.cfg, len(t.src_tokens), len(t.tgt_tokens))
    assert set(t.keys()) == set(shapes)
    for key, shape in shapes.items():
        assert tuple(t[key].shape) == shape, key
        assert not t[key].requires_grad and t[key].device.type == "cpu"


def test_run_with_trace_equals_record_of_the_same_forward(course):
    model = course.model
    t = run_with_trace(model, "i can eat bread", target="ich kann brot essen")
    assert t.tgt_tokens == [BOS, "ich", "kann", "brot", "essen"]
    src = torch.tensor([model.src_vocab.encode(t.src_tokens)])
    tgt = torch.tensor([encode_target(model.tgt_vocab, "ich kann brot essen", model.cfg.max_len)[:-1]])
    with torch.no_grad(), record(model) as cache:
        model(src, tgt)
    assert set(cache) == set(t.keys())
    for key in cache:
        assert torch.equal(cache[key][0], t[key]), key


def test_trace_token_labels(course):
    t = run_with_trace(course.model, "we can eat apple", target="wir können einen apfel essen")
    src, tgt = t.src_tokens, t.tgt_tokens
    for layer in range(course.model.cfg.n_layers):
        e, s, c = f"encoder.{layer}.self", f"decoder.{layer}.self", f"decoder.{layer}.cross"
        for kind in ("q", "k", "v", "x1", "concat", "out", "scores", "weights"):
            assert t.tokens(f"{e}.{kind}") == src
        assert t.tokens(f"{c}.k") == t.tokens(f"{c}.v") == src  # keys/values of cross-attention: English
        assert t.tokens(f"{c}.q") == tgt and tgt[0] == BOS  # queries: German decoder tokens
        assert t.query_tokens(f"{c}.weights") == tgt and t.key_tokens(f"{c}.weights") == src
        assert t.tokens(f"{s}.k") == t.tokens(f"{s}.q") == tgt
        assert t.tokens(f"decoder.{layer}.layer_out") == tgt and t.tokens(f"encoder.{layer}.layer_out") == src
        # labels fit the tensors they label
        for key in (f"{c}.k", f"{c}.v", f"{c}.q", f"{s}.v", f"{e}.k"):
            assert t[key].shape[1] == len(t.tokens(key)), key
        w = t[f"{c}.weights"]
        assert w.shape[1:] == (len(t.query_tokens(f"{c}.weights")), len(t.key_tokens(f"{c}.weights")))
    assert t.tokens("encoder.embed") == src and t.tokens("decoder.embed") == tgt


def test_trace_weights_rows_sum_to_one_and_causal(course):
    t = run_with_trace(course.model, "we want to eat apple")
    for key in t.keys():
        if key.endswith(".weights"):
            torch.testing.assert_close(t[key].sum(-1), torch.ones(t[key].shape[:-1]), rtol=0, atol=1e-5)
            if ".self." in key and key.startswith("decoder"):
                assert torch.equal(t[key].triu(1), torch.zeros_like(t[key]))


def test_trace_vectors_and_errors(course):
    t = run_with_trace(course.model, "we eat bread")
    H, dh = course.model.cfg.n_heads, course.model.cfg.d_model // course.model.cfg.n_heads
    q = t["decoder.0.cross.q"]
    assert torch.equal(t.vectors("decoder.0.cross.q", head=1), q[1])
    both = t.vectors("decoder.0.cross.q")
    assert both.shape == (q.shape[1], H * dh)
    assert torch.equal(both[:, dh:], q[1]) and torch.equal(both[:, :dh], q[0])
    # all heads side by side = what W_O reads, for x1
    assert torch.equal(t.vectors("decoder.0.cross.x1"), t["decoder.0.cross.concat"])
    assert torch.equal(t.vectors("encoder.0.layer_out"), t["encoder.0.layer_out"])
    with pytest.raises(IndexError):
        t.vectors("decoder.0.cross.q", head=H)
    with pytest.raises(KeyError, match="decoder.0.cross.weights"):
        t["decoder.0.crosss.weights"]  # a typo: the error suggests real keys


def test_trace_dict_round_trip(course):
    t = run_with_trace(course.model, "we eat bread")
    back = Trace.from_dict(t.to_dict(), course.model.cfg.n_layers)
    assert (back.src_tokens, back.tgt_tokens, back.translation) == (t.src_tokens, t.tgt_tokens, t.translation)
    assert back.keys() == t.keys() and all(torch.equal(back[k], t[k]) for k in t.keys())
    assert back.n_layers == t.n_layers == course.model.cfg.n_layers == 2


def test_a_trace_is_looked_up_by_key_or_by_kind_layer_and_place(course):
    t = run_with_trace(course.model, "we eat bread")
    for place in PLACES:
        for layer in range(t.n_layers):
            for kind in ("q", "k", "v", "scores", "mask", "weights", "x1", "out", "layer_out"):
                assert t[kind, layer, place] is t[trace_key(place, layer, kind)]
    assert t["q", 1, "cross"] is t["decoder.1.cross.q"] and t["mask", 0, "decoder self"].dtype == torch.bool
    with pytest.raises(KeyError, match="kind, layer, place"):
        t["q", 0]
    with pytest.raises(KeyError, match="no trace key"):
        t["q", 2, "encoder self"]  # the model has layers 0 and 1


def test_the_recorded_mask_is_the_model_s_mask(course):
    """Decoder self-attention's recorded mask is causal; the encoder's and cross-attention's let every real word
    be seen (one sentence: no padding)."""
    t = run_with_trace(course.model, "we eat bread")
    n_src, n_tgt = len(t.src_tokens), len(t.tgt_tokens)
    assert torch.equal(t["mask", 0, "decoder self"], torch.ones(n_tgt, n_tgt, dtype=torch.bool).tril())
    assert t["mask", 1, "encoder self"].all() and t["mask", 0, "cross"].shape == (n_tgt, n_src)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_run_with_trace_restores_mode_and_leaves_no_hooks(course_copy, mode):
    model = course_copy.train(mode == "train")
    run_with_trace(model, "we eat bread")
    assert model.training == (mode == "train") and n_hooks(model) == 0


def test_run_with_trace_on_untrained_model_is_consistent():
    model = build_model(seed=2)
    t = run_with_trace(model, "i drink water")
    assert t.tgt_tokens == [BOS] + t.translation
    assert t["decoder.0.self.q"].shape[1] == len(t.tgt_tokens)


# ---------------------------------------------------------------- what enters attention, and the mask


def test_inputs_of_attention_are_hooked(course, batch):
    """q_input / k_input / v_input are what enters W^Q, W^K, W^V: the embedding for encoder layer 0, the
    previous layer's output for layer 1, the encoder's output for the keys and values of cross-attention."""
    src, tgt = batch
    with torch.no_grad(), record(course.model) as c:
        course.model(src, tgt)
    torch.testing.assert_close(c["encoder.0.self.q_input"], c["encoder.embed"], rtol=0, atol=0)
    torch.testing.assert_close(c["encoder.1.self.k_input"], c["encoder.0.layer_out"], rtol=0, atol=0)
    torch.testing.assert_close(c["decoder.1.self.v_input"], c["decoder.0.layer_out"], rtol=0, atol=0)
    for layer in (0, 1):
        torch.testing.assert_close(c[f"decoder.{layer}.cross.k_input"], c["encoder.1.layer_out"], rtol=0, atol=0)
    mha = course.model.decoder[0].cross_attn
    q = mha.split_heads(mha.w_q(c["decoder.0.cross.q_input"]))
    torch.testing.assert_close(q, c["decoder.0.cross.q"], rtol=1e-6, atol=1e-6)


def test_mask_is_recorded_per_place(course, batch):
    src, tgt = batch
    with torch.no_grad(), record(course.model, "*.mask") as c:
        course.model(src, tgt)
    src_real, tgt_real = src != 0, tgt != 0
    T = tgt.shape[1]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for layer in (0, 1):
        assert torch.equal(c[f"encoder.{layer}.self.mask"], src_real[:, None, :].expand(-1, src.shape[1], -1))
        assert torch.equal(c[f"decoder.{layer}.cross.mask"], src_real[:, None, :].expand(-1, T, -1))
        assert torch.equal(c[f"decoder.{layer}.self.mask"], causal[None] & tgt_real[:, None, :])


def test_weight_interventions_get_the_mask_not_the_weights_sign():
    """An allowed weight can underflow to exactly 0 (the saturated model's layer-0 weights, down to ~1e-50, do in
    float32): uniform attention must still spread over every allowed key, so it reads the recorded mask, not
    `weights > 0`."""
    from course_utils.training.zoo import load_standard_model

    model = load_standard_model("saturated").model
    seen = {}

    def spy(w, name, mask=None):
        seen[name] = (w.clone(), mask.clone())
        return uniform_attention(w, name, mask=mask)

    with patch(model, {"encoder.0.self.weights": spy}), torch.no_grad():
        translate(model, "we want to eat apple")
    w, mask = seen["encoder.0.self.weights"]
    assert mask.dtype == torch.bool and mask.all()  # one sentence, no padding: every key allowed
    assert (w > 0).all() and (w < 1e-40).any()  # float64: tiny, not zero ...
    w = w.float()  # ... in float32 they underflow
    assert (w == 0).any(), "expected an underflowed weight in the saturated model's layer 0"
    u = uniform_attention(w, mask=mask)
    torch.testing.assert_close(u, torch.full_like(w, 1 / w.shape[-1]))
    assert not torch.allclose(uniform_attention(w), u)  # reading `w > 0` instead would get it wrong


def test_query_inputs_equal_the_q_input_hook(course):
    from course_utils.measures.qkv import query_inputs

    tokens, X = query_inputs(course.model, "we eat bread", "encoder.0.self")
    trace = run_with_trace(course.model, "we eat bread", names=["encoder.embed"])
    assert tokens == ["we", "eat", "bread"]
    torch.testing.assert_close(X, trace["encoder.embed"], rtol=0, atol=0)


def test_projections_layer_input_is_the_q_input_hook(course):
    """layer_input (measures/qkv.py) reads the hook instead of re-running the encoder's loop by hand: layer 1's input is
    layer 0's output, as a hand-run of the first encoder layer gives it."""
    from course_utils.measures.qkv import layer_input

    m = course.model
    x1, words = layer_input(m, "we want to eat bread", layer=1)
    src = torch.tensor([encode_source(m.src_vocab, words, m.cfg.max_len)])
    by_hand = m.encoder[0](m.src_embed(src), m.source_mask(src))[0]
    torch.testing.assert_close(x1, by_hand, rtol=0, atol=1e-6)
    with pytest.raises(IndexError, match="out of range"):
        layer_input(m, "we eat bread", layer=2)


def test_one_vocabulary_of_places_and_trace_keys():
    from course_utils.core.places import PLACE_NAMES, PLACES, place_of, place_prefix, trace_key

    assert PLACES == ("encoder self", "decoder self", "cross") and set(PLACE_NAMES) == set(PLACES)
    assert trace_key("encoder self", 0, "q") == "encoder.0.self.q"
    assert trace_key("cross", 1, "weights") == "decoder.1.cross.weights"
    assert trace_key("decoder self", 1, "layer_out") == "decoder.1.layer_out"
    for place in PLACES:
        for layer in (0, 1):
            assert place_of(place_prefix(place, layer) + ".x1") == place
    with pytest.raises(ValueError, match="place must be one of"):
        place_prefix("decoder cross", 0)
