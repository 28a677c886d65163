"""Our encoder and decoder layers equal PyTorch's own post-norm layers with the same weights.

torch.nn.TransformerEncoderLayer / TransformerDecoderLayer with norm_first=False (post-norm), ReLU,
batch_first=True and dropout 0 compute what course_utils.model.EncoderLayer / DecoderLayer compute:
outputs and every parameter's gradient agree, with padding and causal masks. (PyTorch's masks mean
True = blocked; ours mean True = may attend.)

Every gradient is compared through an explicit name map (PyTorch's parameter name -> our parameters, whose
gradients concatenated give PyTorch's: in_proj_weight / in_proj_bias stack W_Q, W_K and W_V); the map must cover
every parameter of both layers, each of ours exactly once. A broken map, or one wrong gradient, fails the check.
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


def _attention_names(theirs: str, ours: str) -> dict[str, tuple[str, ...]]:
    return {
        f"{theirs}.in_proj_weight": tuple(f"{ours}.w_{k}.weight" for k in "qkv"),
        f"{theirs}.in_proj_bias": tuple(f"{ours}.w_{k}.bias" for k in "qkv"),
        f"{theirs}.out_proj.weight": (f"{ours}.w_o.weight",),
        f"{theirs}.out_proj.bias": (f"{ours}.w_o.bias",),
    }


_COMMON_NAMES = {
    "linear1.weight": ("ff.0.weight",),
    "linear1.bias": ("ff.0.bias",),
    "linear2.weight": ("ff.3.weight",),
    "linear2.bias": ("ff.3.bias",),
    **{f"norm{i}.{p}": (f"norm{i}.{p}",) for i in (1, 2) for p in ("weight", "bias")},
}

# PyTorch's parameter name -> the names of ours whose gradients, concatenated along dim 0, give its gradient
ENCODER_NAMES = {**_attention_names("self_attn", "self_attn"), **_COMMON_NAMES}
DECODER_NAMES = {
    **_attention_names("self_attn", "self_attn"),
    **_attention_names("multihead_attn", "cross_attn"),
    **_COMMON_NAMES,
    "norm3.weight": ("norm3.weight",),
    "norm3.bias": ("norm3.bias",),
}


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


def test_the_loss_check_rejects_the_sum_of_squares():
    """The old loss, out.square().sum(), left every gradient before the last LayerNorm at ~1e-5: rejected."""
    torch.manual_seed(0)
    ours = EncoderLayer(CFG)
    src_ids, _, x, _ = _inputs(0)
    ours(x, Translator.source_mask(src_ids))[src_ids != 0].square().sum().backward()
    with pytest.raises(AssertionError, match="self_attn.w_q.weight"):
        assert_the_loss_reaches_every_parameter(ours)


def _inputs(seed: int):
    g = torch.Generator().manual_seed(seed)
    src_ids = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, 0, 0]])  # second sentence padded
    tgt_ids = torch.tensor([[1, 4, 5, 6, 7, 8], [1, 4, 5, 0, 0, 0]])
    x = torch.randn(2, 5, CFG.d_model, generator=g)
    y = torch.randn(2, 6, CFG.d_model, generator=g)
    return src_ids, tgt_ids, x, y


def _loss(out: torch.Tensor, seed: int) -> torch.Tensor:
    """A fixed random weighting of the outputs. (Not out.square().sum(): after the last LayerNorm every row has
    length about √d, so that loss is nearly constant and every gradient but the last norm's nearly 0, ~1e-5.)"""
    g = torch.Generator().manual_seed(1000 + seed)
    return (out * torch.randn(out.shape, generator=g)).sum()


def _grads(module) -> dict[str, torch.Tensor]:
    return {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}


def assert_every_gradient_equal(ours, theirs, names: dict[str, tuple[str, ...]]) -> None:
    """The map covers every parameter of both layers (each of ours once), and every gradient agrees through it."""
    ours_names, theirs_names = [n for n, _ in ours.named_parameters()], [n for n, _ in theirs.named_parameters()]
    mapped = [n for group in names.values() for n in group]
    assert sorted(names) == sorted(theirs_names), f"PyTorch parameters not mapped: {set(theirs_names) - set(names)}"
    assert sorted(mapped) == sorted(ours_names), f"our parameters not mapped once: {set(ours_names) ^ set(mapped)}"
    ga, gb = _grads(ours), _grads(theirs)
    assert set(ga) == set(ours_names) and set(gb) == set(theirs_names), "a parameter got no gradient"
    for theirs_name, group in names.items():
        torch.testing.assert_close(
            torch.cat([ga[n] for n in group]),
            gb[theirs_name],
            rtol=1e-4,
            atol=1e-5,
            msg=lambda m, group=group: f"{group}: {m}",
        )


def run_encoder_pair(seed: int, ours=None):
    """Our encoder layer and PyTorch's with copied weights, the same padded batch through both, and the same loss
    backpropagated; returns the two layers (gradients filled) after checking that their outputs agree."""
    torch.manual_seed(seed)
    ours, theirs = ours or EncoderLayer(CFG), _torch_layer("encoder")
    with torch.no_grad():
        _copy_attention(ours.self_attn, theirs.self_attn)
        _copy_common(ours, theirs)
    src_ids, _, x, _ = _inputs(seed)
    real = src_ids != 0
    ours.train(), theirs.train()  # dropout is 0; train mode keeps PyTorch off its inference fast path
    a = ours(x, Translator.source_mask(src_ids))
    b = theirs(x, src_key_padding_mask=~real)
    torch.testing.assert_close(a[real], b[real], rtol=1e-5, atol=1e-5)
    _loss(a[real], seed).backward()
    _loss(b[real], seed).backward()
    return ours, theirs


def run_decoder_pair(seed: int, ours=None):
    torch.manual_seed(seed)
    ours, theirs = ours or DecoderLayer(CFG), _torch_layer("decoder")
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
    _loss(a[tgt_real], seed).backward()
    _loss(b[tgt_real], seed).backward()
    return ours, theirs


def assert_the_loss_reaches_every_parameter(ours) -> None:
    """Every gradient is far from 0 (so that comparing it means something), except the key biases': a key bias
    adds the same q·b_k to every score of a query's row, which softmax ignores, so its gradient is 0 (~1e-16)."""
    for name, p in ours.named_parameters():
        if name.endswith("w_k.bias"):
            assert float(p.grad.abs().max()) < 1e-12, name
        else:
            assert float(p.grad.abs().max()) > 0.05, name


@pytest.mark.parametrize("seed", [0, 1])
def test_encoder_layer_equals_torch_transformer_encoder_layer(seed):
    ours, theirs = run_encoder_pair(seed)
    assert_every_gradient_equal(ours, theirs, ENCODER_NAMES)  # all 16 of ours, all 12 of PyTorch's
    assert_the_loss_reaches_every_parameter(ours)


@pytest.mark.parametrize("seed", [0, 1])
def test_decoder_layer_equals_torch_transformer_decoder_layer(seed):
    ours, theirs = run_decoder_pair(seed)
    assert_every_gradient_equal(ours, theirs, DECODER_NAMES)  # all 26 of ours, all 18 of PyTorch's
    assert_the_loss_reaches_every_parameter(ours)


def _without(names: dict, key: str) -> dict:
    return {k: v for k, v in names.items() if k != key}


BROKEN_MAPS = {
    "a PyTorch parameter left out": _without(ENCODER_NAMES, "norm2.bias"),
    "one of ours left out": {**ENCODER_NAMES, "self_attn.in_proj_bias": ("self_attn.w_q.bias", "self_attn.w_k.bias")},
    "W_Q and W_K swapped": {
        **ENCODER_NAMES,
        "self_attn.in_proj_weight": tuple(f"self_attn.w_{k}.weight" for k in "kqv"),
    },
    "two biases swapped": {**ENCODER_NAMES, "linear2.bias": ("norm2.bias",), "norm2.bias": ("ff.3.bias",)},
}


@pytest.mark.parametrize("broken", list(BROKEN_MAPS))
def test_a_broken_name_map_fails_the_gradient_check(broken):
    """Each broken map fails: the coverage checks catch the left-out names, the comparison the swapped ones."""
    ours, theirs = run_encoder_pair(0)
    with pytest.raises(AssertionError):
        assert_every_gradient_equal(ours, theirs, BROKEN_MAPS[broken])


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_one_wrong_gradient_anywhere_fails_the_gradient_check(kind):
    """A layer whose backward pass gets one parameter's gradient wrong (0.01 added to every entry by a hook; its
    forward pass is untouched) fails the check, for each of its parameters in turn: no gradient goes uncompared."""
    run, names, layer = {"encoder": (run_encoder_pair, ENCODER_NAMES, EncoderLayer)}.get(
        kind, (run_decoder_pair, DECODER_NAMES, DecoderLayer)
    )
    for name in [n for n, _ in layer(CFG).named_parameters()]:
        torch.manual_seed(0)
        ours = layer(CFG)
        ours.get_parameter(name).register_hook(lambda g: g + 0.01)
        with pytest.raises(AssertionError, match=name.replace(".", r"\.")):
            assert_every_gradient_equal(*run(0, ours), names)


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
