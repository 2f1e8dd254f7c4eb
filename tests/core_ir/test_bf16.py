"""The bf16 storage type (docs/semantics.md "bf16"): printed and parsed
back, its f32 -> bf16 rounding against an independent model (nearest of
the two neighbours by exact distance, ties to even, denormals too; NaN
quieted), and interpret() against compiled C bit for bit on the
edges: NaN, +-inf, denormals, -0.0, ties to even and odd, the rounding up
to infinity."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from exo_hl import ExoTypeError, bf16, f32, f64, i32, proc, seq, size
from exo_hl.core_ir import datasem as D
from exo_hl.core_ir.nodes import IR
from exo_hl.frontend.decorators import parse_proc_source

#: f32 bit patterns at the edges of the rounding
EDGE_BITS = np.array([
    0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA01234, 0xFF812345,  # NaNs
    0x7F800000, 0xFF800000, 0x00000000, 0x80000000,               # inf, 0
    0x00000001, 0x807FFFFF, 0x00400000, 0x00008000,               # denormals
    0x00800000, 0x80800000, 0x00808000, 0x00818000,               # smallest
    0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF,               # ties
    0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0xFF7F8000,               # to inf
    0x3F800000, 0xBF800000, 0x40490FDB,
], np.uint32)


def _model(bits: int) -> int:
    """f32 -> bf16 bits, independently of the bias trick: the nearest of
    the two bf16 neighbours by exact distance, ties to the even one."""
    sign, mag = bits & 0x80000000, bits & 0x7FFFFFFF
    if mag > 0x7F800000:
        return ((bits >> 16) | 0x40) & 0xFFFF
    if mag == 0x7F800000:
        return bits >> 16

    def val(m):  # the value of a magnitude's bits (finite)
        f = np.array([m], np.uint32).view(np.float32)[0]
        return Fraction(float(f))
    x = val(mag)
    lo = mag >> 16
    hi = lo + 1
    vlo = val(lo << 16)
    vhi = Fraction(2) ** 128 if (hi << 16) >= 0x7F800000 else val(hi << 16)
    if x - vlo < vhi - x or (x - vlo == vhi - x and lo % 2 == 0):
        r = lo
    else:
        r = hi
    return (sign >> 16) | r


def _all_bits():
    rng = np.random.default_rng(1)
    rand = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    ties = (rand & 0xFFFF0000) | 0x8000
    return np.concatenate([EDGE_BITS, rand, ties])


def test_rounding_matches_an_independent_model():
    bits = _all_bits()
    got = D.f32_to_bf16_bits(bits.view(np.float32))
    want = np.array([_model(int(b)) for b in bits], np.uint16)
    bad = np.nonzero(got != want)[0]
    assert not len(bad), [(hex(bits[i]), hex(got[i]), hex(want[i]))
                          for i in bad[:5]]
    # reading back is exact: bf16 -> f32 -> bf16 is the identity
    h = np.arange(0, 2**16, dtype=np.uint32).astype(np.uint16)
    back = D.f32_to_bf16_bits(D.bf16_bits_to_f32(h))
    signalling = ((h & 0x7FFF) > 0x7F80) & ((h & 0x40) == 0)   # quieted
    assert np.array_equal(back[~signalling], h[~signalling])


@proc
def convert_all(n: size, x: f32[n], d: f64[n], k: i32[n], y: bf16[n],
                z: bf16[n], w: bf16[n], out: f32[n]):
    for i in seq(0, n):
        y[i] = x[i]
        z[i] = d[i]
        w[i] = k[i]
        w[i] += y[i]
        out[i] = y[i] * z[i] + x[i]


def test_prints_and_parses_back():
    text = str(convert_all)
    assert "y: bf16[n]" in text
    again = parse_proc_source(text.replace("def convert_all",
                                           "def convert_alk"),
                              {"bf16": bf16, "f32": f32, "f64": f64,
                               "i32": i32, "size": size, "seq": seq})
    assert str(again).replace("convert_alk", "convert_all") == text


def test_bf16_arithmetic_is_typed_f32():
    body = convert_all.ir().body[0].body
    assert body[0].type is IR.BF16                  # the store into y
    assert body[4].rhs.lhs.type is IR.F32           # y[i] * z[i]
    assert D.domain(IR.BF16) is IR.F32


def test_interpret_equals_compiled_on_edges():
    bits = _all_bits()
    n = len(bits)
    x = bits.view(np.float32)
    rng = np.random.default_rng(2)
    with np.errstate(all="ignore"):
        d = np.where(rng.random(n) < 0.5, x.astype(np.float64),
                     rng.standard_normal(n) * 1e30)
    d[:5] = [1 + 2.0**-8, 1 + 2.0**-8 + 2.0**-20, 3.4e38 * 1.01, -1e-300,
            1 + 2.0**-8 + 2.0**-40]
    k = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    f = convert_all.compile()
    outs = []
    for run in (convert_all.interpret, f):
        a = dict(n=n, x=x.copy(), d=d.copy(), k=k.copy(),
                 y=np.zeros(n, np.uint16), z=np.zeros(n, np.uint16),
                 w=np.zeros(n, np.uint16), out=np.zeros(n, np.float32))
        run(**a)
        outs.append(a)
    for name in ("y", "z", "w"):     # conversions: NaN bits too
        assert np.array_equal(outs[0][name], outs[1][name]), name
    # arithmetic: bit for bit, a NaN's payload unspecified (semantics.md)
    a, b = outs[0]["out"], outs[1]["out"]
    assert np.array_equal(np.where(np.isnan(a), -1, a.view(np.uint32)),
                          np.where(np.isnan(b), -1, b.view(np.uint32)))
    # y is the conversion itself; f64 goes through f32
    assert np.array_equal(outs[0]["y"], D.f32_to_bf16_bits(x))
    with np.errstate(all="ignore"):
        assert np.array_equal(outs[0]["z"],
                              D.f32_to_bf16_bits(d.astype(np.float32)))
    assert outs[0]["z"][0] == 0x3F80 and outs[0]["z"][1] == 0x3F81
    assert outs[0]["z"][2] == 0x7F80 and outs[0]["z"][3] == 0x8000
    assert outs[0]["z"][4] == 0x3F80   # two roundings: f64 -> f32 -> bf16


@proc
def dot_bf16(n: size, a: bf16[n], b: bf16[n], c: f32[1], s: bf16):
    for i in seq(0, n):
        c[0] += a[i] * b[i] + s


def test_arguments_are_uint16_bits():
    a = D.f32_to_bf16_bits(np.array([1.5, -2.0], np.float32))
    c = np.zeros(1, np.float32)
    for run in (dot_bf16.interpret, dot_bf16.compile()):
        c[0] = 0
        run(n=2, a=a, b=a, c=c, s=0.25)  # a number: rounded to bf16
        assert c[0] == np.float32(1.5 * 1.5 + 4 + 0.5)
        with pytest.raises(TypeError, match="bf16.*uint16"):
            run(n=2, a=a.view(np.int16), b=a, c=c, s=0.25)
        with pytest.raises(TypeError, match="uint16"):
            run(n=2, a=np.array([1.5, -2], np.float32), b=a, c=c, s=0.25)


def test_bf16_and_f32_mix_in_one_expression_but_not_f64():
    ok = parse_proc_source(
        "def mix(a: bf16[4], b: f32[4]):\n"
        "    for i in seq(0, 4):\n"
        "        b[i] = a[i] * b[i]\n",
        {"bf16": bf16, "f32": f32, "seq": seq})
    a = D.f32_to_bf16_bits(np.array([1, 2, 3, 0.5], np.float32))
    b = np.array([2, 2, 2, 2], np.float32)
    ok.compile()(a=a, b=b)
    assert list(b) == [2, 4, 6, 1]
    bad = parse_proc_source(
        "def mix64(a: bf16[4], b: f64[4]):\n"
        "    for i in seq(0, 4):\n"
        "        b[i] = a[i] * b[i]\n",
        {"bf16": bf16, "f64": f64, "seq": seq})
    with pytest.raises(ExoTypeError, match="mixed precisions"):
        bad.compile()


def test_bind_expr_keeps_a_bf16_product_in_f32():
    p = dot_bf16.bind_expr(dot_bf16.find("a[_] * b[_]"), "t")
    assert "t: f32" in str(p)
    q = dot_bf16.bind_expr(dot_bf16.find("a[_]"), "u")
    assert "u: bf16" in str(q)
    a = D.f32_to_bf16_bits(np.array([1.5, 3.0, -7.0], np.float32))
    for r in (p, q):
        c1, c2 = np.zeros(1, np.float32), np.zeros(1, np.float32)
        dot_bf16.interpret(n=3, a=a, b=a, c=c1, s=0.0)
        r.compile()(n=3, a=a, b=a, c=c2, s=0.0)
        assert c1[0] == c2[0] == np.float32(2.25 + 9 + 49)


@proc
def copy_bf16(n: size, x: bf16[n], y: bf16[n]):
    for i in seq(0, n):
        y[i] = x[i]


def test_bf16_copy_keeps_bits_but_quiets_nan_in_c_as_interpreted():
    """A bf16 stored into a bf16 is the f32 round trip (semantics.md: same
    bits, a signaling NaN quieted); the C does it on the 16 bits
    (exo_bf16_copy, no f32 conversion) and agrees with interpret() on
    every one of the 65536 patterns."""
    c = copy_bf16.c_code_str()
    body = c[c.rindex("void copy_bf16("):]
    assert "exo_bf16_copy(x[" in body and "exo_f32_to_bf16" not in body
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    outs = []
    for run in (copy_bf16.interpret, copy_bf16.compile()):
        y = np.zeros_like(x)
        run(len(x), x, y)
        outs.append(y)
    assert np.array_equal(outs[0], outs[1])
    nan = (x & 0x7FFF) > 0x7F80
    assert np.array_equal(outs[0][~nan], x[~nan])
    assert np.array_equal(outs[0][nan], x[nan] | 0x40)
    assert np.array_equal(outs[0], D.f32_to_bf16_bits(
        D.bf16_bits_to_f32(x)))
