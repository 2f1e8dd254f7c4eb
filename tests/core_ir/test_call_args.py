"""interpret() and the compiled callable take the same arguments (docs/api.md §5).

Both check their arguments with ``core_ir.call_args``: every accepted form
runs in both with the same result, every rejected one fails in both with the
same exception type and message.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import f16, f32, f64, i8, i16, i32, proc, seq, size, ui16


@proc
def scale(n: size, a: f32, x: f32[n], k: i8, out: f32[n]):
    for i in seq(0, n):
        out[i] = a * x[i]
    t: i8
    t = k
    x8: i8[1]
    x8[0] = t


@proc
def accum(n: size, x: f32[n], s: f32):
    for i in seq(0, n):
        s += x[i]


@pytest.fixture(scope="module")
def compiled():
    return {"scale": scale.compile(), "accum": accum.compile()}


def _both(compiled, p, *args):
    """Run ``p`` through interpret() and compile(), each on its own copy of
    the written arguments (``out`` and ``s``, given as a zero-argument
    function that makes a fresh one); return (outcome, outcome) where an
    outcome is the arrays after the run or (exception type, message)."""
    outcomes = []
    for run in (p.interpret, compiled[p.name()]):
        vals = [a() if callable(a) else a for a in args]
        try:
            run(*vals)
        except (TypeError, ValueError) as e:
            outcomes.append((type(e), str(e)))
        else:
            outcomes.append([v for v in vals if isinstance(v, np.ndarray)])
    return outcomes


x4 = np.arange(4, dtype=np.float32)


def out4():
    return np.zeros(4, np.float32)


@pytest.mark.parametrize("a,k", [
    (2.5, 3),                               # Python float and int
    (np.float32(2.5), np.int8(3)),          # numpy scalars
    (np.float64(2.5), 3),                   # converted to the dtype
    (2, 3),                                 # an int for an f32 scalar
    (np.array(2.5, np.float32), np.array([3], np.int8)),  # 0-d / 1-element
])
def test_read_only_data_scalars_accept_numbers_in_both(compiled, a, k):
    got_i, got_c = _both(compiled, scale, 4, a, x4, k, out4)
    assert isinstance(got_i, list) and isinstance(got_c, list)
    want = np.float32(np.asarray(a).item()) * x4
    np.testing.assert_array_equal(got_i[-1], want)
    np.testing.assert_array_equal(got_c[-1], want)


@pytest.mark.parametrize("args,exc,text", [
    ((4.0, 2.5, x4, 3, out4), TypeError, "'n' (size) must be an int"),
    ((True, 2.5, x4, 3, out4), TypeError, "'n' (size) must be an int"),
    ((0, 2.5, x4, 3, out4), ValueError, "'n' (size) must be positive"),
    ((2**70, 2.5, x4, 3, out4), ValueError, "does not fit int_fast32_t"),
    ((2**31, 2.5, x4, 3, out4), ValueError, "control values are 32-bit"),
    ((4, "2.5", x4, 3, out4), TypeError, "'a' must be a number"),
    ((4, True, x4, 3, out4), TypeError, "'a' must be a number"),
    ((4, 2.5, x4, 3.5, out4), TypeError, "'k' must be an integer"),
    ((4, 2.5, x4, 300, out4), ValueError, "'k' = 300 does not fit int8"),
    ((4, np.zeros(2, np.float32), x4, 3, out4), ValueError,
     "'a' is a scalar"),
    ((4, np.zeros((), np.float64), x4, 3, out4), TypeError,
     "'a' (f32) must have dtype float32"),
    ((4, 2.5, x4.tolist(), 3, out4), TypeError,
     "'x' must be a numpy array of float32"),
    ((4, 2.5, x4[:3], 3, out4), ValueError, "'x' must have shape (4,)"),
    ((4, 2.5, np.arange(8, dtype=np.float32)[::2], 3, out4), ValueError,
     "C-contiguous"),
    ((4, 2.5, x4, 3), TypeError, "missing argument 'out'"),
    ((4, 2.5, x4, 3, out4, out4), TypeError, "takes 5 arguments, 6 given"),
    ((4, 2.5, x4, 3, x4), ValueError, "'x' and 'out' overlap"),
])
def test_rejections_are_identical(compiled, args, exc, text):
    got_i, got_c = _both(compiled, scale, *args)
    assert got_i == got_c
    assert got_i[0] is exc
    assert got_i[1].startswith("procedure 'scale': ")
    assert text in got_i[1]


def test_written_data_scalar_needs_an_array_in_both(compiled):
    x = np.arange(3, dtype=np.float32)
    got_i, got_c = _both(compiled, accum, 3, x, 1.0)
    assert got_i == got_c
    assert got_i[0] is TypeError
    assert "'s' must be a 0-d or 1-element numpy array" in got_i[1]
    got_i, got_c = _both(compiled, accum, 3, x,
                         lambda: np.ones(1, np.float32))
    assert got_i[-1] == got_c[-1] == np.float32(4.0)


def test_keyword_errors_are_identical(compiled):
    outs = []
    for run in (scale.interpret, compiled["scale"]):
        for kw in ({"a": 1.0, "x": x4, "k": 1, "out": out4(), "z": 1},
                   {"a": 1.0, "x": x4, "k": 1, "out": out4(), "n": 4}):
            with pytest.raises(TypeError) as e:
                run(4, **kw)
            outs.append(str(e.value))
    assert outs[0] == outs[2] and "unexpected argument 'z'" in outs[0]
    assert outs[1] == outs[3] and "argument 'n' given twice" in outs[1]


def test_read_only_written_array_rejected_in_both(compiled):
    out = out4()
    out.flags.writeable = False
    got_i, got_c = _both(compiled, scale, 4, 1.0, x4, 1, out)
    assert got_i == got_c
    assert got_i[0] is ValueError and "read-only" in got_i[1]


# -- alignment: a pointer argument starts at a multiple of its element size

def _at_offset(shape, dtype, off):
    """A C-contiguous array of ``shape`` whose data starts ``off`` bytes
    past a multiple of its element size (a view into a byte buffer, as
    ``np.frombuffer(buf, dtype, offset=off)`` gives)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.zeros(nbytes + 2 * dtype.itemsize, np.uint8)
    start = -raw.ctypes.data % dtype.itemsize + off
    v = raw[start:start + nbytes].view(dtype).reshape(shape)
    assert v.ctypes.data % dtype.itemsize == off % dtype.itemsize
    return v


def test_misaligned_arrays_rejected_identically_in_both(compiled):
    """A float array whose data is 1-3 bytes past a multiple of 4 was
    passed to the C as a ``float *`` (undefined behaviour): read, written
    or a data scalar, it is refused, by interpret() and the compiled
    callable alike; the same layout at an aligned address runs."""
    for off in (1, 2, 3):
        for args, name in (
                ((4, 1.0, _at_offset(4, np.float32, off), 1, out4), "x"),
                ((4, 1.0, x4, 1, lambda: _at_offset(4, np.float32, off)),
                 "out"),
                ((4, _at_offset((), np.float32, off), x4, 1, out4), "a")):
            got_i, got_c = _both(compiled, scale, *args)
            assert got_i[0] is ValueError, (name, off, got_i)
            assert got_i == got_c
            assert f"argument '{name}' (float32) is misaligned" in \
                got_i[1] and f"starts {off} byte" in got_i[1]
            assert "np.require(x, requirements='CA')" in got_i[1]
    x = _at_offset(4, np.float32, 0)
    x[...] = x4
    got_i, got_c = _both(compiled, scale, 4, 2.0, x, 1, out4)
    assert np.array_equal(got_i[-1], 2 * x4)
    assert np.array_equal(got_c[-1], 2 * x4)
    # the remedy the message names gives an aligned array
    fixed = np.require(_at_offset(4, np.float32, 1), requirements="CA")
    got_i, got_c = _both(compiled, scale, 4, 2.0, fixed, 1, out4)
    assert isinstance(got_c, list)


@proc
def _wide(n: size, a: f64[n], b: i32[n], c: i16[n], d: f16[n], e: ui16[n],
          w: [f32][n], s: f64):
    for i in seq(0, n):
        a[i] = s


def test_every_element_type_and_layout_needs_its_alignment():
    """The class: every data type wider than a byte, dense tensors,
    windows (strides already whole elements) and data scalars, at every
    offset that is not a multiple of the element size, is refused (the
    shared check); at offset 0 (and for 1-byte types, any offset) the
    call is accepted."""
    from exo_hl.codegen_c.analysis import as_ir
    from exo_hl.core_ir.call_args import check_call_args
    ir = as_ir(_wide)
    kinds = {"a": np.float64, "b": np.int32, "c": np.int16, "d": np.float16,
             "e": np.uint16, "w": np.float32, "s": np.float64}

    def args(bad=None, off=0):
        vals = {}
        for k, dt in kinds.items():
            shape = () if k == "s" else (3,) if k != "w" else (6,)
            v = _at_offset(shape, dt, off if k == bad else 0)
            vals[k] = v[::2] if k == "w" else v      # a strided window
        return vals

    check_call_args(ir, (3, ), args())
    refused = 0
    for k, dt in kinds.items():
        size = np.dtype(dt).itemsize
        for off in range(1, size):
            with pytest.raises(ValueError, match=f"argument '{k}' .*past a "
                               f"multiple of {size} bytes"):
                check_call_args(ir, (3, ), args(k, off))
            refused += 1
    assert refused == 7 + 3 + 1 + 1 + 1 + 3 + 7
    # a byte type has no alignment to miss
    from exo_hl.core_ir.call_args import misalignment
    assert misalignment(_at_offset(5, np.int8, 1)) is None
    assert "4 bytes past a multiple of 8" in \
        misalignment(_at_offset(2, np.float64, 4))
