"""The course's one precision: float64, so that every printed digit is the same on every CPU.

Why: float32 training drifts between CPU kernel paths (AVX-512, AVX2, the portable "default" path, arm64):
after 30 epochs two machines disagree by ~0.02 in the weights, enough to move a printed digit. In float64 the
same 30 epochs agree to ~1e-11, far below every digit the notebooks print, so committed outputs are a
function of code and data only. (The "saturated" models, PyTorch's default init, train chaotically even in
float64; notebooks only read their shipped files: see tests/test_shipped_models.py.)

    DTYPE                  torch.float64, the dtype of every course model, trace and MiniLM run
    default_dtype(dtype)   a block in which new tensors and modules default to `dtype` (restored afterwards)
    course_precision()     a block in which new tensors and modules default to DTYPE (restored afterwards);
                           the library builds, trains and loads models inside it, so it does not depend on
                           the caller's default dtype
    below(value, bound)    a number that is zero in exact arithmetic, printed as a bound: "below 1e-9"
    max_difference(a, b)   the largest |a - b| over two tensors or two dicts of tensors (state dicts, traces)
    close_to_stored(a, b)  a result computed now against one stored from another machine (a shipped model,
                           a snapshot): equal within STORED_ATOL / STORED_RTOL, never bit for bit
    float32_draws()        a block in which PyTorch's float32 initial draws are finished in float64, the same
                           on every CPU (`core.model.build_model` initialises inside it)

Notebooks set `torch.set_default_dtype(torch.float64)` in their first cell, so that a learner's own tensors
meet the course model in the same dtype.
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager

import torch

DTYPE = torch.float64

# Kernel-path noise in float64, measured on the 12 non-saturated shipped models retrained on the AVX2 and the portable
# ("default") path: at most 2.1e-11 in any weight after 30 epochs (the saturated kind is chaotic: see
# tests/test_shipped_models.py). A stored result (a shipped model, a snapshot)
# is compared with this tolerance, which that noise clears by more than three orders of magnitude, while one
# more epoch, another seed or another learning rate moves the weights by 1e-3 to 1 (tests/test_shipped_models.py).
STORED_ATOL = 1e-8
STORED_RTOL = 1e-8


@contextmanager
def default_dtype(dtype: torch.dtype):
    """Inside the block, torch's default dtype is `dtype`; the previous default is restored after.
    Used by course_precision (every model of notebooks 02-10)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def course_precision():
    """Inside the block, torch's default dtype is DTYPE (float64); the previous default is restored after.
    Used by build_model, train, load_course_model and load_minilm (every model of notebooks 02-10)."""
    return default_dtype(DTYPE)


def below(value: float, bound: float = 1e-9) -> str:
    """'below 1e-9' for a value that is zero in exact arithmetic (its digits are rounding noise, which differs
    between CPUs). It doubles as the check: a value at or above the bound is not noise and fails.
    Used in notebook 07 (Three positional encodings); views and exercise checkers print noise with it too."""
    value = abs(float(value))
    if not value < bound:
        raise AssertionError(f"{value:.3g} is not below {_short(bound)}: not rounding noise, so print it as a number")
    return f"below {_short(bound)}"


def _short(x: float) -> str:
    """1e-09 -> '1e-9', 2.5e-07 -> '2.5e-7'."""
    return re.sub(r"e([+-])0*(\d)", lambda m: f"e{'-' if m[1] == '-' else ''}{m[2]}", f"{x:g}")


def _pairs(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or a.keys() != b.keys():
            raise AssertionError("the two results do not have the same keys")
        return [(torch.as_tensor(a[k]), torch.as_tensor(b[k])) for k in a]
    return [(torch.as_tensor(a), torch.as_tensor(b))]


def max_difference(a, b) -> float:
    """The largest |a - b| over two tensors, or over two dicts of tensors with the same keys (compared in float64).
    Used by tests/test_shipped_models.py (the shipped weights reproduced, as notebook 05 §3 states)."""
    pairs = _pairs(a, b)
    if any(x.shape != y.shape for x, y in pairs):
        raise AssertionError("the two results do not have the same shapes")
    return max((float((x.double() - y.double()).abs().max()) for x, y in pairs if x.numel()), default=0.0)


def close_to_stored(a, b) -> bool:
    """Is `a` (computed now) equal to `b` (stored, maybe on another CPU) within STORED_RTOL / STORED_ATOL?
    Tensors or dicts of tensors with the same keys and shapes; integer and bool tensors must be equal.
    Used in notebooks 06 §3 and 08 (The vectors we compare): a trace made now against a stored snapshot."""
    pairs = _pairs(a, b)
    return all(
        x.shape == y.shape and torch.allclose(x.double(), y.double(), rtol=STORED_RTOL, atol=STORED_ATOL)
        for x, y in pairs
    )


# ---- PyTorch's float32 initial draws, made the same on every CPU ----
#
# PyTorch's float32 init is not the same on every CPU: the random bits are, but the last step (scaling a
# uniform draw to (-a, a), Box-Muller for normal_) is vectorised differently per kernel path, so draws differ
# in their last bit (Xavier-uniform by up to 3e-8, normal_ by up to 2e-6), and training amplifies that.
# `float32_draws()` keeps PyTorch's float32 random stream (the same bits, in the same order, as a float32
# model's init reads) and does that last step in float64, where it is the same everywhere. A model built
# inside it starts within one float32 rounding of where PyTorch's own float32 init starts it.

_TORCH_UNIFORM = torch.Tensor.uniform_  # PyTorch's own, kept before float32_draws() replaces it


def _raw_uniform(n: int, generator) -> torch.Tensor:
    """n float32 draws from [0, 1) in float64, consuming the random stream exactly as float32 uniform_ does
    (x * (1 - 0) + 0 is exact, so no kernel path can round them differently)."""
    return _TORCH_UNIFORM(torch.empty(n, dtype=torch.float32), 0.0, 1.0, generator=generator).to(torch.float64)


def _uniform_(self: torch.Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> torch.Tensor:
    u = _raw_uniform(self.numel(), generator)
    with torch.no_grad():
        self.copy_((u * (b - a) + a).reshape(self.shape))
    return self


def _box_muller(u: torch.Tensor, mean: float, std: float) -> torch.Tensor:
    """PyTorch's normal_ on chunks of 16 uniforms (k, 16): u1 = 1 - u[:8], u2 = u[8:] -> 16 normals."""
    radius = torch.sqrt(-2.0 * torch.log(1.0 - u[:, :8]))  # 1 - u: [0, 1) -> (0, 1] for the log
    theta = 2.0 * math.pi * u[:, 8:]
    return torch.cat([radius * torch.cos(theta) * std + mean, radius * torch.sin(theta) * std + mean], dim=1)


def _normal_(self: torch.Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> torch.Tensor:
    n = self.numel()
    if n < 16:  # PyTorch draws small tensors one by one, with another transform: not used by the course
        raise NotImplementedError("float32_draws() reproduces normal_ for tensors of 16 or more elements")
    whole = n // 16 * 16
    out = torch.empty(n, dtype=torch.float64)
    out[:whole] = _box_muller(_raw_uniform(n, generator)[:whole].reshape(-1, 16), mean, std).reshape(-1)
    if n % 16:  # PyTorch then redraws the last 16 values (overlapping the last whole chunk)
        out[n - 16 :] = _box_muller(_raw_uniform(16, generator).reshape(1, 16), mean, std).reshape(-1)
    with torch.no_grad():
        self.copy_(out.reshape(self.shape))
    return self


@contextmanager
def float32_draws():
    """Inside the block, Tensor.uniform_ and Tensor.normal_ (what torch.nn.init and PyTorch's layers call)
    fill a tensor of any dtype with PyTorch's float32 draws, computed in float64 (see above).
    Used by core.model.build_model (every untrained model, e.g. notebooks 03 (Evidence part), 04 §5, 05 §2-§3)."""
    before = torch.Tensor.uniform_, torch.Tensor.normal_
    torch.Tensor.uniform_, torch.Tensor.normal_ = _uniform_, _normal_
    try:
        yield
    finally:
        torch.Tensor.uniform_, torch.Tensor.normal_ = before
