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
from exo_hl import DRAM, f32, proc, seq, size, stride  # noqa: E402,F401


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


def _entry_points():
    """(name, call(inputs..., out), make inputs and a zeroed out) for each
    app entry point that calls a kernel raw."""
    from apps.conv.api import conv
    from apps.sgemm.api import sgemm

    def conv_args():
        return ([np.ones((1, 4, 4, 2), np.float32),
                 np.ones((3, 3, 2, 16), np.float32),
                 np.ones(16, np.float32)], np.zeros((1, 2, 2, 16), np.float32))

    def sgemm_args():
        return ([np.ones((3, 5), np.float32), np.ones((5, 4), np.float32)],
                np.zeros((3, 4), np.float32))
    return [("conv", lambda ins, out: conv(*ins, out), conv_args),
            ("sgemm", lambda ins, out: sgemm(*ins, out), sgemm_args)]


@pytest.mark.parametrize("app", ["conv", "sgemm"])
def test_the_apps_refuse_what_the_compiled_callable_refuses(app):
    """Every app entry point with a raw call refuses, before any kernel is
    built, each argument the compiled callable refuses: conv wrote into a
    read-only ``out`` (here one over an immutable ``bytes``, which it
    changed) and passed a size past 32 bits to its kernel."""
    name, call, make = dict((n, (n, c, m)) for n, c, m in
                            _entry_points())[app]
    ins, out = make()
    frozen = bytes(out.nbytes)
    ro = np.frombuffer(frozen, np.float32).reshape(out.shape)
    with pytest.raises(ValueError, match=f"{app}: .* is read-only"):
        call(ins, ro)
    assert not any(frozen)
    # data 1-3 bytes past a multiple of 4 (np.frombuffer(..., offset=1)):
    # refused for an input and for the output, by the callable's rule
    for off in (1, 2, 3):
        for i in range(len(ins) + 1):
            raw = np.zeros((out if i == len(ins) else ins[i]).nbytes + 8,
                           np.uint8)
            start = -raw.ctypes.data % 4 + off
            src = out if i == len(ins) else ins[i]
            bad = raw[start:start + src.nbytes].view(np.float32).reshape(
                src.shape)
            bad[...] = src
            args = [bad if j == i else a for j, a in enumerate(ins)]
            with pytest.raises(ValueError, match=f"{app}: .* is misaligned"
                               f": its data starts {off} byte"):
                call(args, bad if i == len(ins) else out)
    with pytest.raises(TypeError, match="C-contiguous"):
        call(ins, np.zeros(out.shape[::-1], np.float32).T)
    with pytest.raises(TypeError, match="float32"):
        call([ins[0].astype(">f4")] + ins[1:], out)
    buf = np.zeros(out.size + ins[1].size, np.float32)   # one shared
    shared = buf[out.size - 1:out.size - 1 + ins[1].size]
    with pytest.raises(ValueError, match="overlap"):
        call([ins[0], shared.reshape(ins[1].shape)] + ins[2:],
             buf[:out.size].reshape(out.shape))
    # a size past 32 bits (a view: no memory is read before the check)
    big = ins[0].shape[:-1] + (2**31,)
    tall = np.lib.stride_tricks.as_strided(
        np.zeros(1, np.float32), shape=big,
        strides=tuple(4 * int(np.prod(big[d + 1:])) for d in range(len(big))))
    assert tall.flags.c_contiguous
    with pytest.raises(ValueError, match="sizes above 2147483647"):
        call([tall] + ins[1:], out)
    assert not out.any()


@proc
def scaled_copy(a: f32, x: f32[1]):
    x[0] = a


def test_scalars_are_refused_as_the_compiled_callable_refuses():
    """A raw call's f32 scalar (sgemm's alpha and beta) is converted by the
    callable's rule: a finite number past float32's range is refused (it
    became an infinity, so ``alpha=1e39`` made ``0 * alpha`` NaN: C = NaN
    where A @ B is zero); NaN, infinities and rounding are kept. Same
    verdict and value as ``interpret()`` on every value tried."""
    from apps.common.raw_call import float32_scalar
    values = [0.0, -0.0, 1.5, 1e-50, 3.4028235e38, -3.4028235e38,
              3.4028236e38, 1e39, -1e39, 10**400, -(10**400), 2**127,
              np.float64(1e300), np.int64(2**62), np.inf, -np.inf, np.nan,
              np.float16(3.0)]
    for v in values:
        x = np.zeros(1, np.float32)
        try:
            scaled_copy.interpret(v, x)
            want = None
        except ValueError as e:
            want = e
        if want is not None:
            with pytest.raises(ValueError, match="out of the range"):
                float32_scalar("app", v, "alpha")
            continue
        got = float32_scalar("app", v, "alpha")
        assert got.dtype == np.float32 and got.shape == (1,)
        assert np.array_equal(got, x, equal_nan=True), v
        assert np.signbit(got[0]) == np.signbit(x[0]), v
    # (a 0-d array of any real dtype is a number here, as sgemm documents)
    assert float32_scalar("app", np.array(2.5), "alpha")[0] == 2.5
    with pytest.raises(ValueError, match="out of the range"):
        float32_scalar("app", np.array(1e39), "alpha")
    for bad in (True, "2", 1j, np.array([1.0, 2.0]), None):
        with pytest.raises(TypeError, match="alpha must be a real number"):
            float32_scalar("app", bad, "alpha")


def test_sgemm_refuses_an_alpha_or_beta_past_float32():
    from apps.sgemm.api import sgemm
    A, B = np.zeros((2, 3), np.float32), np.ones((3, 2), np.float32)
    C = np.ones((2, 2), np.float32)
    for kw in ({"alpha": 1e39}, {"beta": -1e39}, {"alpha": 10**400}):
        with pytest.raises(ValueError, match="out of the range of float32"):
            sgemm(A, B, C, **kw)
    assert (C == 1.0).all()


@proc
def sizes_swapped(W: size, H: size, x: f32[H, W]):
    for i in seq(0, H):
        for j in seq(0, W):
            x[i, j] = 1.0


@proc
def with_window(n: size, x: [f32][n]):
    for i in seq(0, n):
        x[i] = 1.0


def test_a_raw_call_refuses_a_signature_it_would_misread():
    """The raw call passes values by position, each buffer as one
    pointer: a kernel whose sizes come in another order, or with a window
    argument (a struct of pointer and strides in C), is refused when the
    call is made, not run on the wrong values."""
    c = sizes_swapped.compile()
    raw_function(c, 2, 1)                       # no names asked: accepted
    with pytest.raises(ValueError, match="named H, W, x"):
        raw_function(c, 2, 1, ("H", "W", "x"))
    with pytest.raises(ValueError, match="dense buffers"):
        raw_function(with_window.compile(), 1, 1)
    with pytest.raises(ValueError, match="1 sizes then 2"):
        raw_function(c, 1, 2)


@proc
def needs_even(n: size, x: f32[n]):
    assert n % 2 == 0
    for i in seq(0, n):
        x[i] = 1.0


@proc
def unit_rows(n: size, x: f32[n, 4]):
    assert stride(x, 1) == 1
    for i in seq(0, n):
        x[i, 0] = 1.0


def test_a_raw_call_refuses_preconditions_it_skips():
    """The C assumes a procedure's preconditions (EXO_ASSUME) and the raw
    call does not check them: a kernel with one a dense buffer does not
    meet by itself is refused; ``stride(x, last) == 1`` is allowed."""
    with pytest.raises(ValueError, match="n % 2 == 0"):
        raw_function(needs_even.compile(), 1, 1)
    raw_function(unit_rows.compile(), 1, 1)
