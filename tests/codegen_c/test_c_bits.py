"""compile() against interpret(), bit for bit, as the C is normally built
(``-O3 -march=native``, where gcc and clang fuse ``a*b + c`` unless told
not to) under gcc and clang: no floating-point contraction, the rounding
of every f16 operation (also the addition of ``x += e``), f16 config
fields through ctypes.

The class test generates random expression mixes over every data type
(f16, f32, f64 and the narrow integers), stored with ``=`` and ``+=`` into
locations of every type, with many ``a*b + c`` shapes.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

import exo_hl
from exo_hl import config, f16, f32, i32, proc, seq
from exo_hl.frontend.decorators import parse_proc_source

from cg_helpers import c_compilers, supports_float16

N = 16
FLOATS = ["f16", "f32", "f64"]
INTS = ["i8", "ui8", "i16", "ui16", "i32"]
_NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
       "i8": np.int8, "ui8": np.uint8, "i16": np.int16, "ui16": np.uint16,
       "i32": np.int32}
LITERALS = ["0.1", "3", "-2.5", "1e-3", "7", "0.0", "-0.0"]


def _bits(a):
    """The bits of ``a``'s elements, every NaN one value (a NaN's sign and
    payload are unspecified: docs/semantics.md)."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return a.astype(np.int64)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]
    b = a.view(u).astype(np.uint64)
    return np.where(np.isnan(a), np.uint64(1), b)


def assert_bits_equal(got, want, msg=""):
    g, w = _bits(got), _bits(want)
    bad = np.nonzero(g != w)[0]
    assert not bad.size, (f"{bad.size} of {g.size} differ, first at "
                          f"{bad[0]}: C {got[bad[0]]!r}, interpret "
                          f"{want[bad[0]]!r} {msg}")


class _Mix:
    """A random procedure: ``o_k[i] (+)= e`` with ``e`` of one precision
    (a float type, or integers of any widths), often ``a*b + c``."""

    def __init__(self, seed, types):
        self.rng = random.Random(seed)
        self.types = types
        self.outs, self.lines = [], []

    def leaf(self, t):
        if self.rng.random() < 0.15:
            return self.rng.choice(LITERALS)
        idx = self.rng.choice(["i", f"{N - 1} - i", f"(i + 5) % {N}"])
        return f"a_{t}[{idx}]"

    def expr(self, kinds, depth):
        r = self.rng
        if depth == 0 or r.random() < 0.2:
            return self.leaf(r.choice(kinds))
        if r.random() < 0.4:        # the contraction shapes
            a, b, c = (self.expr(kinds, depth - 1) for _ in range(3))
            return r.choice([f"({a} * {b} + {c})", f"({c} + {a} * {b})",
                             f"({a} * {b} - {c})", f"({c} - {a} * {b})"])
        op = r.choice(["+", "-", "*", "/", "*"])
        return f"({self.expr(kinds, depth - 1)} {op} " \
               f"{self.expr(kinds, depth - 1)})"

    def source(self, n_stmts):
        r = self.rng
        for k in range(n_stmts):
            fl = [t for t in self.types if t in FLOATS]
            kinds = INTS if r.random() < 0.3 else [r.choice(fl)]
            # integers into floats (f16 first) are where C rounds late
            u = r.choice(fl[:1] + fl if kinds is INTS and r.random() < 0.5
                         else self.types)
            name = f"o{k}_{u}"
            self.outs.append((name, u))
            op = r.choice(["=", "+="])
            self.lines.append(f"        {name}[i] {op} "
                              f"{self.expr(kinds, r.randint(1, 3))}")
        args = [f"a_{t}: {t}[{N}]" for t in self.types]
        args += [f"{nm}: {t}[{N}]" for nm, t in self.outs]
        return "\n".join([f"def mix({', '.join(args)}):",
                          f"    for i in seq(0, {N}):"] + self.lines) + "\n"


def _inputs(t, nrng):
    if t in FLOATS:
        x = nrng.standard_normal(N) * nrng.choice([1, 3, 100], N)
        x = np.where(nrng.random(N) < 0.05, np.nan, x)
        if t == "f16":
            # small integers above 2048: f16 rounds them, float does not
            x = np.where(nrng.random(N) < 0.3, nrng.integers(2040, 2060, N), x)
        return x.astype(_NP[t])
    info = np.iinfo(_NP[t])
    lo, hi = max(info.min, -3000), min(info.max, 3000)
    return nrng.integers(lo, hi + 1, N).astype(_NP[t])


#: the default build (where compilers fuse) and an ISO C one without
#: optimisation (where gcc keeps f16 sums in float: -fexcess-precision=standard)
FLAGS = [None, "-O0 -std=c11"]


def _mix_case(seed, cc, cflags):
    types = FLOATS + INTS
    if not supports_float16(cc):
        types = [t for t in types if t != "f16"]
    gen = _Mix(seed, types)
    src = gen.source(16)
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    p = parse_proc_source(src, scope)
    nrng = np.random.default_rng(seed)
    args = {f"a_{t}": _inputs(t, nrng) for t in types}
    for nm, t in gen.outs:
        args[nm] = _inputs(t, nrng)
    want = {k: v.copy() for k, v in args.items()}
    with np.errstate(all="ignore"):
        p.interpret(**want)
    got = {k: v.copy() for k, v in args.items()}
    p.compile(cc=cc, cflags=cflags)(**got)
    for nm, _ in gen.outs:
        assert_bits_equal(got[nm], want[nm], f"in {nm} ({cc} {cflags}, "
                          f"seed {seed}):"
                          f"\n{src}")


@pytest.mark.parametrize("cflags", FLAGS)
@pytest.mark.parametrize("cc", c_compilers(float16=False))
@pytest.mark.parametrize("seed", range(4))
def test_random_expression_mixes_compiled_equal_interpreted_bits(cc, seed,
                                                                 cflags):
    _mix_case(seed, cc, cflags)


# -- 5. contraction -----------------------------------------------------------

@proc
def muladd(n: exo_hl.size, a: f32[n], b: f32[n], c: f32[n], o: f32[n]):
    for i in seq(0, n):
        o[i] = a[i] * b[i] + c[i]


@pytest.mark.parametrize("cc", c_compilers(float16=False))
def test_a_times_b_plus_c_rounds_twice(cc):
    """gcc -O3 -march=native fused it (16 of 64 results differed in the
    last bit); clang fuses even under -std=c11."""
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(256).astype(np.float32) for _ in range(3))
    want, got = np.zeros(256, np.float32), np.zeros(256, np.float32)
    muladd.interpret(256, a, b, c, want)
    muladd.compile(cc=cc)(256, a, b, c, got)
    assert_bits_equal(got, want)


def test_every_source_file_turns_contraction_off():
    src = muladd.c_code_str()
    assert "#pragma STDC FP_CONTRACT OFF" in src
    assert '#pragma GCC optimize("fp-contract=off")' in src


# -- 6. f16 += integer --------------------------------------------------------

@proc
def f16_add_int(x: f16[1], a: i32[1]):
    x[0] += a[0]


def test_f16_plus_equals_int_rounds_the_int_to_f16_first():
    """f16(2049) is 2048, then 1 + 2048 rounds to 2048 (gcc computed 1 +
    2049 in float, 2050, at -O0 or with -std=c11)."""
    a = np.array([2049], np.int32)
    want = np.ones(1, np.float16)
    f16_add_int.interpret(want, a)
    assert want[0] == 2048
    for cflags in FLAGS:
        got = np.ones(1, np.float16)
        f16_add_int.compile(cc="gcc", cflags=cflags)(got, a)
        assert got[0] == 2048, cflags


# -- 8. f16 config fields -----------------------------------------------------

@config
class HalfCfg:
    h: f16
    s: f32


@proc
def half_cfg(x: f16[2]):
    HalfCfg.h = x[0]
    x[1] = HalfCfg.h


def test_f16_config_fields_read_and_write_as_numbers():
    """ctypes held the bits: get_config gave 15872 for 1.5, set_config of
    0.5 raised TypeError."""
    f = half_cfg.compile(cc="gcc")
    x = np.array([1.5, 0], np.float16)
    f(x)
    assert f.get_config(HalfCfg, "h") == 1.5 and x[1] == 1.5
    f.set_config(HalfCfg, "h", 0.5)
    assert f.get_config(HalfCfg, "h") == 0.5
    f.set_config(HalfCfg, "h", 0.1)     # rounded to f16, as C would
    assert f.get_config(HalfCfg, "h") == float(np.float16(0.1))
