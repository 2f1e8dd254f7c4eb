"""The apps' direct ctypes calls (apps/common/raw_call.py) keep the C
function's allocation status: a kernel whose heap buffer cannot be
allocated raises as the compiled callable does, instead of returning with
its output silently unchanged (the SGEMM and conv RawKernels dropped it)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common.raw_call import raw_function  # noqa: E402
from exo_hl import DRAM, f32, proc, seq, size  # noqa: E402


@proc
def with_heap(n: size, x: f32[n]):
    t: f32[n, n, n] @ DRAM
    for i in seq(0, n):
        t[i, 0, 0] = x[i]
        x[i] = t[i, 0, 0] + 1.0


@proc
def no_heap(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] + 1.0


def test_a_failed_allocation_raises_through_the_raw_call():
    c = with_heap.compile()
    assert c.returns_status
    _, fn, check = raw_function(c, 1, 1)
    x = np.zeros(4, np.float32)
    check(fn(None, 4, x.ctypes.data))           # allocates: runs
    assert list(x) == [1.0] * 4
    # n^3 floats overflow size_t: the kernel returns before any access
    with pytest.raises(ValueError, match="overflows"):
        check(fn(None, 2**22, x.ctypes.data))
    assert list(x) == [1.0] * 4
    # the compiled callable's own answer is the same
    with pytest.raises(ValueError, match="overflows"):
        c.check_status(1)


def test_a_kernel_without_heap_buffers_returns_nothing():
    c = no_heap.compile()
    assert not c.returns_status
    _, fn, check = raw_function(c, 1, 1)
    x = np.zeros(3, np.float32)
    assert check(fn(None, 3, x.ctypes.data)) is None
    assert list(x) == [1.0] * 3


def test_the_apps_raw_kernels_use_it():
    import inspect
    from apps.conv import api as conv_api
    from apps.sgemm import api as sgemm_api
    for mod in (conv_api, sgemm_api):
        src = inspect.getsource(mod.RawKernel)
        assert "raw_function(" in src and "restype" not in src
