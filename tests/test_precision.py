"""course_utils/core/precision.py: the one dtype, noise printed as a bound, stored results compared with a
tolerance, and PyTorch's float32 initial draws made the same on every CPU."""

from __future__ import annotations

import pytest
import torch

from course_utils.core.model import ModelConfig, build_model
from course_utils.core.precision import (
    DTYPE,
    STORED_ATOL,
    below,
    close_to_stored,
    course_precision,
    default_dtype,
    float32_draws,
    max_difference,
)


def test_course_precision_sets_float64_and_restores_the_default():
    with default_dtype(torch.float32):
        with course_precision():
            assert torch.get_default_dtype() == DTYPE == torch.float64
            assert torch.zeros(1).dtype == torch.float64
        assert torch.get_default_dtype() == torch.float32
    with pytest.raises(RuntimeError), course_precision():
        raise RuntimeError("restored even when the block fails")
    assert torch.get_default_dtype() == torch.float64  # the session's default (conftest), restored


@pytest.mark.parametrize("caller_default", [torch.float32, torch.float64])
@pytest.mark.parametrize("init", ["xavier", "torch_default"])
def test_build_model_is_float64_and_the_same_whatever_the_callers_default(caller_default, init):
    reference = build_model(ModelConfig(init=init), seed=3).state_dict()
    with default_dtype(caller_default):
        model = build_model(ModelConfig(init=init), seed=3)
    assert {p.dtype for p in model.parameters()} == {torch.float64}
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), reference.values()))  # one process


@pytest.mark.parametrize("n", [16, 64, 29 * 64, 50, 1000])
def test_float32_draws_read_pytorchs_float32_stream(n):
    """Within float32_draws a float64 tensor gets PyTorch's float32 draws (the same random stream, consumed the same
    way), with the last step in float64: within one float32 rounding of PyTorch's own float32 values."""
    before = torch.Tensor.uniform_, torch.Tensor.normal_
    for method, args, tol in (("uniform_", (-0.37, 0.37), 4e-8), ("normal_", (0.5, 2.0), 4e-6)):
        g_torch, g_ours = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
        theirs = getattr(torch.empty(n, dtype=torch.float32), method)(*args, generator=g_torch)
        with float32_draws():
            ours = getattr(torch.empty(n, dtype=torch.float64), method)(*args, generator=g_ours)
        assert ours.dtype == torch.float64
        assert float((ours - theirs.double()).abs().max()) < tol, method
        assert torch.equal(g_torch.get_state(), g_ours.get_state()), f"{method}: the stream was consumed differently"
        other = getattr(torch.empty(n, dtype=torch.float32), method)(*args, generator=torch.Generator().manual_seed(8))
        assert float((ours - other.double()).abs().max()) > 1e-2  # another seed: other draws (the check can fail)
    assert (torch.Tensor.uniform_, torch.Tensor.normal_) == before  # PyTorch's own, restored after the block
    with pytest.raises(NotImplementedError), float32_draws():
        torch.empty(7, dtype=torch.float64).normal_()


def test_the_normal_tail_is_redrawn_as_pytorch_does():
    """A size that is not a multiple of 16: PyTorch redraws the last 16 values; without that the tail would differ."""
    g_torch, g_ours = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    theirs = torch.empty(40, dtype=torch.float32).normal_(generator=g_torch)
    with float32_draws():
        ours = torch.empty(40, dtype=torch.float64).normal_(generator=g_ours)
    assert float((ours - theirs.double()).abs().max()) < 4e-6


def test_below_prints_a_bound_and_refuses_a_finding():
    assert below(7.2e-16) == "below 1e-9"
    assert below(-3e-13, 1e-12) == "below 1e-12"
    assert below(0.0, 2.5e-5) == "below 2.5e-5"
    with pytest.raises(AssertionError, match="not below 1e-9"):
        below(7.2e-07)


def test_close_to_stored_allows_kernel_noise_and_refuses_a_real_difference():
    a = {"w": torch.linspace(-1, 1, 50, dtype=torch.float64), "mask": torch.ones(3, dtype=torch.bool)}
    noisy = {"w": a["w"] + 1e-11, "mask": a["mask"].clone()}
    assert close_to_stored(a, noisy) and max_difference(a, noisy) == pytest.approx(1e-11, rel=1e-3)
    moved = {"w": a["w"] + 10 * STORED_ATOL, "mask": a["mask"].clone()}
    assert not close_to_stored(a, moved)
    assert not close_to_stored(a, {"w": a["w"], "mask": torch.tensor([True, False, True])})
    with pytest.raises(AssertionError, match="same keys"):
        close_to_stored(a, {"w": a["w"]})
    with pytest.raises(AssertionError, match="same shapes"):
        max_difference(a["w"], a["w"][:10])
