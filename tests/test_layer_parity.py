"""Our encoder and decoder layers equal PyTorch's own post-norm layers with the same weights.

torch.nn.TransformerEncoderLayer / TransformerDecoderLayer with norm_first=False (post-norm), ReLU,
batch_first=True and dropout 0 compute what course_utils.model.EncoderLayer / DecoderLayer compute:
outputs and every parameter's gradient agree, with padding and causal masks. (PyTorch's masks mean
True = blocked; ours mean True = may attend.)
"""

import pytest
import torch
from torch import nn

from course_utils.core.model import DecoderLayer, EncoderLayer, ModelConfig, Translator

CFG = ModelConfig()  # d_model 64, 2 heads, d_ff 128, dropout 0


def _copy_attention(ours, theirs: nn.MultiheadAttention) -> None:
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    theirs.out_proj.weight.copy_(ours.w_o.weight)
    theirs.out_proj.bias.copy_(ours.w_o.bias)


def _copy_common(ours, theirs) -> None:
    theirs.linear1.load_state_dict(ours.ff[0].state_dict())
    theirs.linear2.load_state_dict(ours.ff[3].state_dict())
    theirs.norm1.load_state_dict(ours.norm1.state_dict())
    theirs.norm2.load_state_dict(ours.norm2.state_dict())


def _torch_layer(kind):
    args = dict(
        d_model=CFG.d_model,
        nhead=CFG.n_heads,
        dim_feedforward=CFG.d_ff,
        dropout=0.0,
        batch_first=True,
        norm_first=False,
    )
    return nn.TransformerEncoderLayer(**args) if kind == "encoder" else nn.TransformerDecoderLayer(**args)


def _inputs(seed: int):
    g = torch.Generator().manual_seed(seed)
    src_ids = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, 0, 0]])  # second sentence padded
    tgt_ids = torch.tensor([[1, 4, 5, 6, 7, 8], [1, 4, 5, 0, 0, 0]])
    x = torch.randn(2, 5, CFG.d_model, generator=g)
    y = torch.randn(2, 6, CFG.d_model, generator=g)
    return src_ids, tgt_ids, x, y


def _grads(module) -> dict[str, torch.Tensor]:
    return {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}


def _assert_attention_grads_equal(ga, gb, ours: str, theirs: str) -> None:
    """Our W_Q, W_K, W_V gradients stacked equal PyTorch's in_proj gradient; W_O's equals out_proj's."""
    torch.testing.assert_close(
        torch.cat([ga[f"{ours}.w_q.weight"], ga[f"{ours}.w_k.weight"], ga[f"{ours}.w_v.weight"]]),
        gb[f"{theirs}.in_proj_weight"],
        rtol=1e-4,
        atol=1e-5,
    )
    torch.testing.assert_close(ga[f"{ours}.w_o.weight"], gb[f"{theirs}.out_proj.weight"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_encoder_layer_equals_torch_transformer_encoder_layer(seed):
    torch.manual_seed(seed)
    ours, theirs = EncoderLayer(CFG), _torch_layer("encoder")
    with torch.no_grad():
        _copy_attention(ours.self_attn, theirs.self_attn)
        _copy_common(ours, theirs)
    src_ids, _, x, _ = _inputs(seed)
    real = src_ids != 0
    ours.train(), theirs.train()  # dropout is 0; train mode keeps PyTorch off its inference fast path
    a = ours(x, Translator.source_mask(src_ids))
    b = theirs(x, src_key_padding_mask=~real)
    torch.testing.assert_close(a[real], b[real], rtol=1e-5, atol=1e-5)
    a[real].square().sum().backward()
    b[real].square().sum().backward()
    ga, gb = _grads(ours), _grads(theirs)
    _assert_attention_grads_equal(ga, gb, "self_attn", "self_attn")
    torch.testing.assert_close(ga["ff.0.weight"], gb["linear1.weight"], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(ga["ff.3.weight"], gb["linear2.weight"], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(ga["norm2.weight"], gb["norm2.weight"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_decoder_layer_equals_torch_transformer_decoder_layer(seed):
    torch.manual_seed(seed)
    ours, theirs = DecoderLayer(CFG), _torch_layer("decoder")
    with torch.no_grad():
        _copy_attention(ours.self_attn, theirs.self_attn)
        _copy_attention(ours.cross_attn, theirs.multihead_attn)
        _copy_common(ours, theirs)
        theirs.norm3.load_state_dict(ours.norm3.state_dict())
    src_ids, tgt_ids, x, y = _inputs(seed)
    src_real, tgt_real = src_ids != 0, tgt_ids != 0
    T = tgt_ids.shape[1]
    ours.train(), theirs.train()
    a = ours(y, x, Translator.target_mask(tgt_ids), Translator.source_mask(src_ids))
    causal_blocked = torch.ones(T, T, dtype=torch.bool).triu(1)
    b = theirs(y, x, tgt_mask=causal_blocked, tgt_key_padding_mask=~tgt_real, memory_key_padding_mask=~src_real)
    torch.testing.assert_close(a[tgt_real], b[tgt_real], rtol=1e-5, atol=1e-5)
    a[tgt_real].square().sum().backward()
    b[tgt_real].square().sum().backward()
    ga, gb = _grads(ours), _grads(theirs)
    for o, t in (("self_attn", "self_attn"), ("cross_attn", "multihead_attn")):
        _assert_attention_grads_equal(ga, gb, o, t)
    torch.testing.assert_close(ga["ff.0.weight"], gb["linear1.weight"], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(ga["norm3.bias"], gb["norm3.bias"], rtol=1e-4, atol=1e-5)


def test_parity_check_notices_a_changed_weight():
    """The comparison can fail: a layer whose W_V differs from PyTorch's copy gives different outputs."""
    torch.manual_seed(0)
    ours, theirs = EncoderLayer(CFG), _torch_layer("encoder")
    with torch.no_grad():
        _copy_attention(ours.self_attn, theirs.self_attn)
        _copy_common(ours, theirs)
        ours.self_attn.w_v.weight.mul_(1.01)
    src_ids, _, x, _ = _inputs(0)
    real = src_ids != 0
    ours.train(), theirs.train()
    a, b = ours(x, Translator.source_mask(src_ids)), theirs(x, src_key_padding_mask=~real)
    assert not torch.allclose(a[real], b[real], atol=1e-5)
