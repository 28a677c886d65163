"""Attention from scratch vs PyTorch (parity), plus properties of the attention weights.

Masks in course_utils are bool with True = may attend (as torch.nn.functional.scaled_dot_product_attention);
torch.nn.MultiheadAttention uses the opposite convention, so its masks are the negation of ours.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_utils.core.attention import (
    HookPoint,
    MultiHeadAttention,
    masked_softmax,
    name_hooks,
    scaled_dot_product_attention,
)
from course_utils.core.model import add_norm, eval_mode
from course_utils.trace.tracing import record

SETTINGS = settings(max_examples=40, deadline=None)
DT = torch.float64  # parity in double precision: tight tolerances
TOL = dict(rtol=1e-10, atol=1e-12)


def randn(gen, *shape, requires_grad=False):
    return torch.randn(*shape, generator=gen, dtype=DT).requires_grad_(requires_grad)


def manual_attention(q, k, v, mask=None, divisor=None):
    """Reference written independently of course_utils: softmax over -inf-filled scores."""
    divisor = math.sqrt(q.shape[-1]) if divisor is None else divisor
    scores = q @ k.transpose(-2, -1) / divisor
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w


def for_torch(mask):
    """torch's F.sdpa wants a mask with at least 2 dims; ours also takes a 1-D (Tk,) one."""
    return mask if mask is None or mask.dim() >= 2 else mask[None, :]


def random_mask(gen, shape, p_allowed, at_least_one=True):
    """Random bool mask; with at_least_one, every row (last dim) has a True somewhere."""
    mask = torch.rand(shape, generator=gen) < p_allowed
    if at_least_one:
        idx = torch.randint(shape[-1], tuple(shape[:-1]) + (1,), generator=gen)
        mask = mask.scatter(-1, idx, True)
    return mask


@st.composite
def attention_case(draw):
    batch = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))  # () | (B,) | (B, H)
    tq, tk = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d, dv = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**31 - 1))
    # mask shapes that broadcast to (*batch, Tq, Tk)
    options = [(tq, tk), (1, tk), (tk,), batch + (tq, tk), batch + (1, tk)]
    if len(batch) == 2:
        options.append((batch[0], 1, tq, tk))  # one mask per batch item, shared over heads
    mask_shape = draw(st.sampled_from(options))
    p = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    return batch, tq, tk, d, dv, seed, mask_shape, p


# ---------------------------------------------------------------- parity: scaled dot-product attention


@SETTINGS
@given(attention_case(), st.booleans())
def test_sdpa_matches_torch_and_manual_softmax(case, use_mask):
    batch, tq, tk, d, dv, seed, mask_shape, p = case
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (randn(gen, *batch, t, n, requires_grad=True) for t, n in ((tq, d), (tk, d), (tk, dv)))
    mask = random_mask(gen, mask_shape, p) if use_mask else None

    out, w = scaled_dot_product_attention(q, k, v, mask)
    ref_out = F.scaled_dot_product_attention(q, k, v, attn_mask=for_torch(mask))
    man_out, man_w = manual_attention(q, k, v, mask)

    assert out.shape == (*batch, tq, dv) and w.shape == (*batch, tq, tk)
    torch.testing.assert_close(out, ref_out, **TOL)
    torch.testing.assert_close(out, man_out, **TOL)
    torch.testing.assert_close(w, man_w, **TOL)

    # gradients agree with torch's as well
    grad = randn(gen, *out.shape)
    ours = torch.autograd.grad(out, (q, k, v), grad)
    theirs = torch.autograd.grad(ref_out, (q, k, v), grad)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, **TOL)


@SETTINGS
@given(attention_case(), st.floats(0.5, 20.0))
def test_sdpa_scale_is_the_divisor(case, divisor):
    """`scale` divides the scores (default √d); torch's `scale` multiplies them."""
    batch, tq, tk, d, dv, seed, mask_shape, p = case
    gen = torch.Generator().manual_seed(seed)
    q, k, v = randn(gen, *batch, tq, d), randn(gen, *batch, tk, d), randn(gen, *batch, tk, dv)
    mask = random_mask(gen, mask_shape, p)
    out, w = scaled_dot_product_attention(q, k, v, mask, scale=divisor)
    torch.testing.assert_close(
        out, F.scaled_dot_product_attention(q, k, v, attn_mask=for_torch(mask), scale=1 / divisor), **TOL
    )
    torch.testing.assert_close(w, manual_attention(q, k, v, mask, divisor)[1], **TOL)


def test_sdpa_broadcasts_kv_over_heads():
    """k/v with a size-1 head dim broadcast against q's heads, like any batch dim."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = randn(gen, 2, 3, 4, 5), randn(gen, 2, 1, 6, 5), randn(gen, 2, 1, 6, 7)
    out, w = scaled_dot_product_attention(q, k, v)
    ref_out, ref_w = manual_attention(q, k.expand(2, 3, 6, 5), v.expand(2, 3, 6, 7))
    torch.testing.assert_close(out, ref_out, **TOL)
    torch.testing.assert_close(w, ref_w, **TOL)


def test_sdpa_float32_matches_torch():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 2, 5, 8, generator=gen) for _ in range(3))
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- fully masked rows


def test_fully_masked_row_gives_zeros_and_finite_gradients():
    gen = torch.Generator().manual_seed(2)
    q, k, v = (
        randn(gen, 2, 4, 3, requires_grad=True),
        randn(gen, 2, 5, 3, requires_grad=True),
        randn(gen, 2, 5, 6, requires_grad=True),
    )
    mask = random_mask(gen, (2, 4, 5), 0.5)
    mask[0, 1] = False  # query 1 of item 0 may see nothing
    mask[1, 3] = False
    out, w = scaled_dot_product_attention(q, k, v, mask)

    assert not torch.isnan(out).any() and not torch.isnan(w).any()
    for b, i in ((0, 1), (1, 3)):
        assert torch.equal(w[b, i], torch.zeros(5, dtype=DT))
        assert torch.equal(out[b, i], torch.zeros(6, dtype=DT))
    # the other rows are untouched by the empty ones
    ok = mask.any(-1)
    man_out, man_w = manual_attention(q, k, v, mask)
    torch.testing.assert_close(out[ok], man_out[ok], **TOL)
    torch.testing.assert_close(w[ok], man_w[ok], **TOL)

    (out * randn(gen, *out.shape)).sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert torch.equal(q.grad[0, 1], torch.zeros(3, dtype=DT))  # the empty row's gradient is 0 too
    assert torch.equal(q.grad[1, 3], torch.zeros(3, dtype=DT))


def test_all_masked_gives_zeros_not_nan():
    scores = torch.randn(3, 4, requires_grad=True)
    w = masked_softmax(scores, torch.zeros(3, 4, dtype=torch.bool))
    assert torch.equal(w, torch.zeros(3, 4))
    w.sum().backward()
    assert torch.equal(scores.grad, torch.zeros(3, 4))


# ---------------------------------------------------------------- properties of the weights


@SETTINGS
@given(attention_case())
def test_weight_rows_sum_to_one_where_anything_is_allowed(case):
    batch, tq, tk, d, dv, seed, mask_shape, p = case
    gen = torch.Generator().manual_seed(seed)
    q, k, v = randn(gen, *batch, tq, d) * 3, randn(gen, *batch, tk, d) * 3, randn(gen, *batch, tk, dv)
    mask = random_mask(gen, mask_shape, p, at_least_one=False)  # may contain empty rows
    _, w = scaled_dot_product_attention(q, k, v, mask)
    full_mask = mask.expand(w.shape)
    sums = w.sum(-1)
    allowed_rows = full_mask.any(-1)
    torch.testing.assert_close(sums[allowed_rows], torch.ones_like(sums[allowed_rows]), rtol=0, atol=1e-12)
    assert torch.equal(sums[~allowed_rows], torch.zeros_like(sums[~allowed_rows]))
    assert (w[~full_mask] == 0).all()  # masked keys get exactly zero
    assert (w >= 0).all() and not torch.isnan(w).any()


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 8), st.integers(1, 8), st.integers(0, 2**31 - 1))
def test_causal_mask_gives_exactly_zero_weight_to_later_positions(b, t, d, seed):
    gen = torch.Generator().manual_seed(seed)
    x = randn(gen, b, 2, t, d) * 4
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    out, w = scaled_dot_product_attention(x, x, x, causal)
    assert torch.equal(w.triu(1), torch.zeros_like(w))
    torch.testing.assert_close(w.sum(-1), torch.ones(b, 2, t, dtype=DT), rtol=0, atol=1e-12)
    # position 0 can only see itself; the output at i does not depend on later positions
    assert torch.equal(w[..., 0, 0], torch.ones(b, 2, dtype=DT))
    if t > 1:
        y = x.clone()
        y[..., -1, :] += 10.0  # change the last position only
        out2, _ = scaled_dot_product_attention(y, y, y, causal)
        torch.testing.assert_close(out2[..., :-1, :], out[..., :-1, :], **TOL)


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**31 - 1), st.data())
def test_padding_keys_get_zero_weight_and_cannot_influence_the_output(b, tq, tk, seed, data):
    lengths = data.draw(st.lists(st.integers(1, tk), min_size=b, max_size=b))
    gen = torch.Generator().manual_seed(seed)
    q, k, v = randn(gen, b, tq, 4), randn(gen, b, tk, 4), randn(gen, b, tk, 3)
    keep = torch.arange(tk)[None, :] < torch.tensor(lengths)[:, None]  # (B, Tk): True = real key
    mask = keep[:, None, :]  # (B, 1, Tk): the same for every query
    out, w = scaled_dot_product_attention(q, k, v, mask)
    pad = ~keep[:, None, :].expand_as(w)
    assert (w[pad] == 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(b, tq, dtype=DT), rtol=0, atol=1e-12)
    # whatever sits in the padded positions of k and v, the output is the same
    k2, v2 = k.clone(), v.clone()
    k2[~keep] = randn(gen, int((~keep).sum()), 4) * 100
    v2[~keep] = randn(gen, int((~keep).sum()), 3) * 100
    out2, w2 = scaled_dot_product_attention(q, k2, v2, mask)
    torch.testing.assert_close(out2, out, **TOL)
    torch.testing.assert_close(w2, w, **TOL)


# ---------------------------------------------------------------- parity: multi-head attention


def torch_mha_like(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    """A torch.nn.MultiheadAttention carrying exactly `mha`'s weights."""
    ref = nn.MultiheadAttention(mha.d_model, mha.n_heads, batch_first=True).to(DT)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.w_q.weight, mha.w_k.weight, mha.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.w_q.bias, mha.w_k.bias, mha.w_v.bias]))
        ref.out_proj.weight.copy_(mha.w_o.weight)
        ref.out_proj.bias.copy_(mha.w_o.bias)
    return ref


@st.composite
def mha_case(draw):
    d_model, n_heads = draw(st.sampled_from([(4, 1), (8, 2), (12, 3), (16, 4), (64, 2)]))
    return (
        d_model,
        n_heads,
        draw(st.integers(1, 3)),
        draw(st.integers(1, 6)),
        draw(st.integers(1, 6)),
        draw(st.integers(0, 2**31 - 1)),
    )


def build_pair(d_model, n_heads, seed):
    torch.manual_seed(seed)
    mha = MultiHeadAttention(d_model, n_heads).to(DT).eval()
    # non-zero biases, so that a bias mix-up would show
    with torch.no_grad():
        for lin in (mha.w_q, mha.w_k, mha.w_v, mha.w_o):
            lin.bias.normal_()
    return mha, torch_mha_like(mha).eval()


@SETTINGS
@given(mha_case())
def test_mha_matches_torch_without_mask(case):
    d_model, n_heads, b, tq, tk, seed = case
    mha, ref = build_pair(d_model, n_heads, seed)
    gen = torch.Generator().manual_seed(seed)
    query, key, value = (
        randn(gen, b, tq, d_model, requires_grad=True),
        randn(gen, b, tk, d_model),
        randn(gen, b, tk, d_model),
    )
    out, w = mha(query, key, value)
    ref_out, ref_w = ref(query, key, value, need_weights=True, average_attn_weights=False)
    assert out.shape == (b, tq, d_model) and w.shape == (b, n_heads, tq, tk)
    torch.testing.assert_close(out, ref_out, **TOL)
    torch.testing.assert_close(w, ref_w, **TOL)
    # gradients w.r.t. the input and the projection weights agree too
    g = randn(gen, b, tq, d_model)
    params = [mha.w_q.weight, mha.w_k.weight, mha.w_v.weight, mha.w_o.weight]
    ours = torch.autograd.grad(out, [query] + params, g)
    theirs = torch.autograd.grad(ref_out, [query, ref.in_proj_weight, ref.out_proj.weight], g)
    torch.testing.assert_close(ours[0], theirs[0], **TOL)
    torch.testing.assert_close(torch.cat(ours[1:4]), theirs[1], **TOL)
    torch.testing.assert_close(ours[4], theirs[2], **TOL)


def padded_pair(case, data, tk: int):
    """The layer pair of `case`, its generator, and a drawn key-padding mask keep (B, Tk), True = real key."""
    d_model, n_heads, b, _, _, seed = case
    lengths = data.draw(st.lists(st.integers(1, tk), min_size=b, max_size=b))
    keep = torch.arange(tk)[None, :] < torch.tensor(lengths)[:, None]
    return *build_pair(d_model, n_heads, seed), torch.Generator().manual_seed(seed), keep


@SETTINGS
@given(mha_case(), st.data())
def test_mha_matches_torch_with_key_padding_mask(case, data):
    d_model, _, b, tq, tk, _ = case
    mha, ref, gen, keep = padded_pair(case, data, tk)
    query, memory = randn(gen, b, tq, d_model), randn(gen, b, tk, d_model)
    out, w = mha(query, memory, memory, keep[:, None, None, :])
    ref_out, ref_w = ref(query, memory, memory, key_padding_mask=~keep, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, **TOL)
    torch.testing.assert_close(w, ref_w, **TOL)
    assert (w.masked_select(~keep[:, None, None, :]) == 0).all()


@SETTINGS
@given(mha_case(), st.data())
def test_mha_matches_torch_with_causal_and_padding_mask(case, data):
    d_model, _, b, t, _, _ = case
    mha, ref, gen, keep = padded_pair(case, data, t)
    x = randn(gen, b, t, d_model)
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    out, w = mha(x, x, x, causal & keep[:, None, None, :])  # as Translator.target_mask builds it
    ref_out, ref_w = ref(
        x, x, x, key_padding_mask=~keep, attn_mask=~causal, need_weights=True, average_attn_weights=False
    )
    torch.testing.assert_close(out, ref_out, **TOL)
    torch.testing.assert_close(w, ref_w, **TOL)
    assert torch.equal(w.triu(1), torch.zeros_like(w))


def test_mha_weights_are_per_head_and_heads_are_independent():
    """Head h's weights depend only on head h's slice of W_Q and W_K."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).to(DT)
    x = torch.randn(1, 5, 8, dtype=DT)
    _, w = mha(x, x, x)
    with torch.no_grad():
        mha.w_q.weight[4:] += 1.0  # rows 4..7 = head 1's query features
    _, w2 = mha(x, x, x)
    torch.testing.assert_close(w2[:, 0], w[:, 0], **TOL)
    assert not torch.allclose(w2[:, 1], w[:, 1])


def test_mha_hooks_are_named_and_identity():
    mha = MultiHeadAttention(8, 2)
    names = sorted(m.name for m in mha.modules() if isinstance(m, HookPoint))
    assert names == sorted(MultiHeadAttention.KINDS)  # a module names its own hooks after its attributes


def test_hook_names_come_from_the_module_tree(course):
    """Every hook point's name is its path in named_modules() with "hook_" dropped and the attention modules
    named by their place: renaming a module renames its trace keys, and no name is written by hand."""
    model = course.model
    for path, hook in model.named_modules():
        if isinstance(hook, HookPoint):
            want = (
                path.replace("src_embed.", "encoder.")
                .replace("tgt_embed.", "decoder.")
                .replace("self_attn.", "self.")
                .replace("cross_attn.", "cross.")
                .replace("hook_", "")
            )
            assert hook.name == want, path
    assert model.encoder[1].self_attn.hook_q.name == "encoder.1.self.q"
    assert model.decoder[0].cross_attn.hook_weights.name == "decoder.0.cross.weights"
    tree = nn.Module()
    tree.block = nn.Module()
    tree.block.self_attn = MultiHeadAttention(8, 2)
    name_hooks(tree, {"block": "encoder.7"})
    assert tree.block.self_attn.hook_x1.name == "encoder.7.self.x1"
    x = torch.randn(3, 4)
    assert HookPoint("x")(x) is x


@pytest.mark.parametrize("d_model, n_heads", [(8, 1), (8, 2), (8, 8), (64, 2)])
def test_mha_head_split_and_merge_are_inverse(d_model, n_heads):
    mha = MultiHeadAttention(d_model, n_heads)
    x = torch.randn(2, 5, d_model)
    heads = mha.split_heads(x)
    assert heads.shape == (2, n_heads, 5, d_model // n_heads)
    h, dh = n_heads - 1, mha.d_head  # the last head holds the last dh features
    assert torch.equal(heads[:, h], x[..., h * dh : (h + 1) * dh])
    assert torch.equal(mha.merge_heads(heads), x)


# ---------------------------------------------------------------- W_QK and W_OV, read off the module


def _bias_free_mha(seed: int = 0, d_model: int = 8, n_heads: int = 2) -> MultiHeadAttention:
    torch.manual_seed(seed)
    mha = MultiHeadAttention(d_model, n_heads).double()
    for lin in (mha.w_q, mha.w_k, mha.w_v, mha.w_o):
        torch.nn.init.normal_(lin.weight)
        torch.nn.init.zeros_(lin.bias)
    return mha


def test_w_qk_gives_the_scores_the_module_computes():
    """x · W_QK[h] · yᵀ / √dh is the score head h gives key y for query x (biases zero), for every head."""
    mha = _bias_free_mha()
    x, y = torch.randn(1, 1, 8, dtype=torch.float64), torch.randn(1, 3, 8, dtype=torch.float64)
    with record(mha, ["scores"]) as cache:
        mha(x, y, y)
    want = torch.einsum("d,hde,te->ht", x[0, 0], mha.W_QK, y[0]) / math.sqrt(mha.d_head)  # (H, Tk)
    assert mha.W_QK.shape == (2, 8, 8)
    assert torch.allclose(cache["scores"][0, :, 0], want, atol=1e-12)
    assert all(torch.linalg.matrix_rank(mha.W_QK[h]) == mha.d_head for h in range(2))  # rank dh, not d_model
    # a wrong map (W^Q W^K of the whole layer, not per head) gives other scores
    whole = mha.w_q.weight.T @ mha.w_k.weight
    assert not torch.allclose(cache["scores"][0, 0, 0], x[0, 0] @ whole @ y[0].T / math.sqrt(mha.d_head))


def test_w_ov_gives_what_a_single_key_writes():
    """With one key, every head gives it weight 1, so the output is y · Σ_h W_OV[h] (biases zero)."""
    mha = _bias_free_mha(1)
    x, y = torch.randn(1, 2, 8, dtype=torch.float64), torch.randn(1, 1, 8, dtype=torch.float64)
    out, _ = mha(x, y, y)
    assert torch.allclose(out[0], (y[0] @ mha.W_OV.sum(0)).expand(2, 8), atol=1e-12)
    wrong = mha.w_v.weight.T @ mha.w_o.weight  # the layer's W^V W^O with W^O's rows and columns swapped
    assert not torch.allclose(out[0, 0], y[0, 0] @ wrong, atol=1e-6)


def test_model_helpers_eval_mode_and_add_norm():
    layer = torch.nn.Sequential(torch.nn.Dropout(0.5))
    layer.train()
    with pytest.raises(RuntimeError), eval_mode(layer):
        assert not layer.training
        raise RuntimeError("inside")
    assert layer.training  # restored after an error
    norm, x, y = (
        torch.nn.LayerNorm(4).double(),
        torch.randn(3, 4, dtype=torch.float64),
        torch.randn(3, 4, dtype=torch.float64),
    )
    assert torch.equal(add_norm(norm, x, y), norm(x + y))
    assert not torch.allclose(add_norm(norm, x, y), norm(x) + y)  # pre-norm is another block
