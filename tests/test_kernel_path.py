"""The second kernel path is real: under `make test-portable` PyTorch runs its portable kernels.

`make test-portable` sets ATEN_CPU_CAPABILITY=default (and COURSE_KERNEL_PATH=default to say it did); if PyTorch
ignored the switch, that run would only repeat `make test` on the same kernels and prove nothing.
"""

import os

import pytest
import torch

pytestmark = pytest.mark.portable  # only meaningful on the second CPU kernel path (make test-portable)


def test_the_requested_kernel_path_is_the_one_running():
    wanted = os.environ.get("COURSE_KERNEL_PATH")
    if wanted is None:
        pytest.skip("not the portable run (make test-portable sets COURSE_KERNEL_PATH)")
    assert os.environ.get("ATEN_CPU_CAPABILITY") == wanted
    assert torch.backends.cpu.get_cpu_capability() == wanted.upper()
    assert torch.get_num_threads() == 1  # OMP_NUM_THREADS=1 (the session fixture keeps one thread too)
