"""Every instruction of the shipped vector libraries (AVX2, AVX-512)
against its body, on edge values: NaN, +-0, +-inf, denormals, the largest
floats, cancelling sums (1e8, 1, -1e8), integer limits (0, 1, 32767,
32768, 65535), masks of 1, all but one and all lanes (a mask count is a
``size``, at least 1: a mask of 0 lanes cannot be asked for; one past all
is tried and refused), shifts by 1, 15 and 16.

Each instruction gets a wrapper generated from its signature: register
arguments are loaded from DRAM with the library's own load and stored back
after the call; DRAM arguments are windows of the wrapper's arguments; size
arguments are literals (each value the instruction's preconditions admit
among the ones tried). The wrapper runs through interpret() (the bodies)
and compile() (the intrinsics) on the same inputs, and every output must be
equal bit for bit; a NaN's sign and payload are unspecified
(docs/semantics.md), so NaNs compare equal to each other. The
multiply-adds are the documented exception (they round once, their bodies
twice): they get inputs whose products are exact, where both agree.

The BF16 and VNNI dot products get bf16 edges (NaN, +-inf, +-0, +-1,
+-2, 3, 0.5 and, in registers that are not multiplied, denormals and the
largest values), bytes at 0, 1, 127, 128, 255 (unsigned) and -128, -1, 0,
1, 127 (signed), and i32 accumulators at their limits (wrap-around and
saturation). ``vdpbf16ps`` fuses its steps and reads/makes denormals as
zero, its body does neither (hw_libs/avx512/lowp.py): its factors are the
exact ones above and its accumulators avoid denormals, where both agree;
``vcvtne2ps2bf16`` reads a denormal f32 as zero, the store in its body
rounds it: it gets no f32 denormal but 1e-45 (rounded to zero by both).
They also run through the emulation layer (a host without BF16/VNNI is
pretended) and, where the CPU has them, natively: both against the body.

Gemmini's instructions (the last tests) are called the way
tests/hw_libs/test_gemmini.py calls them, each load and store after the
config write it needs, through three wrappers that together call every one
of them; its configuration model is being reworked separately, and these
tests do not depend on how config state is kept.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import exo_hl
from exo_hl import SchedulingError, ExoTypeError
from exo_hl.errors import BoundsError
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.types import basetype, shape as type_shape
from exo_hl.frontend.decorators import parse_proc_source
from exo_hl.core_ir import datasem as D
from exo_hl.hw_libs import avx2, avx512

from .emulation_tools import compile_emulated

F32_EDGES = np.array([
    np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38,
    3.4028235e38, -3.4028235e38, 1e8, -1e8, 1.0, -1.0, 0.5, 3.0, 2.0 ** -126,
    16777217.0, 0.1], np.float32)
#: the factors of a multiply-add: products of two of these are exact (no
#: rounding, no overflow, no underflow; 1e8 * 1e8 is the one inexact
#: product, avoided below), so the fused multiply-add rounds like its body
#: whatever the addend (which gets every edge value, denormals included)
F32_EXACT = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0,
                      -2.0, 3.0, 0.5, 1e8], np.float32)
U16_EDGES = np.array([0, 1, 2, 3, 32767, 32768, 65534, 65535, 21845, 43690,
                      255, 256], np.uint16)
#: bf16 values (as f32) and the exact factors of a bf16 dot product
BF16_EDGES = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40,
                       -1e-39, 3.3895314e38, -3.3895314e38, 1.0, -1.0, 0.5,
                       3.0, 2.0 ** -126, 1e8], np.float32)
BF16_EXACT = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0,
                       -2.0, 3.0, 0.5], np.float32)
U8_EDGES = np.array([0, 1, 2, 127, 128, 254, 255], np.uint8)
I8_EDGES = np.array([-128, -127, -1, 0, 1, 2, 126, 127], np.int8)
I32_ACC = np.array([-2**31, -2**31 + 1, -2**31 + 100000, -1, 0, 1, 7,
                    2**31 - 100000, 2**31 - 2, 2**31 - 1], np.int64)

LIBS = {
    "avx2": (avx2, avx2.AVX2, {IR.F32: ("mm256_loadu_ps", "mm256_storeu_ps"),
                               IR.UI16: ("mm256_loadu_epi16",
                                         "mm256_storeu_epi16")}),
    "avx512": (avx512, avx512.AVX512,
               {IR.F32: ("mm512_loadu_ps", "mm512_storeu_ps"),
                IR.UI16: ("mm512_loadu_epi16", "mm512_storeu_epi16"),
                IR.BF16: ("mm512_loadu_bf16", "mm512_storeu_bf16"),
                IR.UI8: ("mm512_loadu_epu8", "mm512_storeu_epu8"),
                IR.I8: ("mm512_loadu_epi8", "mm512_storeu_epi8"),
                IR.I32: ("mm512_loadu_epi32", "mm512_storeu_epi32")}),
}
_TNAME = {IR.F32: "f32", IR.UI16: "ui16", IR.BF16: "bf16", IR.UI8: "ui8",
          IR.I8: "i8", IR.I32: "i32"}
_NP = {IR.F32: np.float32, IR.UI16: np.uint16, IR.BF16: np.uint16,
       IR.UI8: np.uint8, IR.I8: np.int8, IR.I32: np.int32}


def _is_fma(instr):
    return "fmadd" in instr.ir().instr.c_template


def _is_dpbf16(instr):
    return "dpbf16" in instr.ir().instr.c_template


def _lowp(instr):
    """A BF16 or VNNI instruction (run emulated and natively too)."""
    feats = set(instr.ir().instr.cpu_features)
    return bool(feats & {"avx512bf16", "avx512vnni"})


def _value(e, sizes):
    if isinstance(e, IR.Const):
        return e.val
    if isinstance(e, IR.Read) and not e.idx:
        return sizes[e.name.name]
    if isinstance(e, IR.BinOp) and e.op in ("+", "-", "*"):
        a, b = _value(e.lhs, sizes), _value(e.rhs, sizes)
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    raise NotImplementedError(f"size expression {e}")


def _wrapper(lib_name, instr, sizes):
    """(source, [(input name, type, n)], [(output name, type, n)]) of a
    wrapper calling ``instr`` with the size arguments ``sizes``."""
    lib, mem, moves = LIBS[lib_name]
    args, body, call = [], [], []
    ins, outs = [], []
    for a in instr.ir().args:
        nm = a.name.name
        if a.type is IR.Size:
            call.append(str(sizes[nm]))
            continue
        t = basetype(a.type)
        dims = [_value(h, sizes) for h in type_shape(a.type)]
        if not dims:                      # a scalar (set1 of a scalar)
            tn = _TNAME[t]
            args += [f"x_{nm}: {tn}[1] @ DRAM", f"y_{nm}: {tn}[1] @ DRAM"]
            ins.append((f"x_{nm}", t, 1))
            body += [f"    s_{nm}: {tn} @ DRAM", f"    s_{nm} = x_{nm}[0]"]
            call.append(f"s_{nm}")
            outs.append((f"y_{nm}", t, 1, f"    y_{nm}[0] = s_{nm}"))
            continue
        if len(dims) == 2 and a.mem is not mem:   # a packed panel of B
            d0, d1 = dims
            tn = _TNAME[t]
            args += [f"x_{nm}: {tn}[{d0}, {d1}] @ DRAM",
                     f"y_{nm}: {tn}[{d0}, {d1}] @ DRAM"]
            ins.append((f"x_{nm}", t, (d0, d1)))
            call.append(f"x_{nm}[0:{d0}, 0:{d1}]")
            outs.append((f"y_{nm}", t, (d0, d1),
                         f"    for i in seq(0, {d0}):\n"
                         f"        for j in seq(0, {d1}):\n"
                         f"            y_{nm}[i, j] = x_{nm}[i, j]"))
            continue
        assert len(dims) == 1, (instr.name(), nm)
        n = dims[0]
        tn = _TNAME[t]
        args += [f"x_{nm}: {tn}[{max(n, 1)}] @ DRAM",
                 f"y_{nm}: {tn}[{max(n, 1)}] @ DRAM"]
        ins.append((f"x_{nm}", t, max(n, 1)))
        outs.append((f"y_{nm}", t, max(n, 1)))
        if a.mem is mem:
            load, store = moves[t]
            body += [f"    r_{nm}: {tn}[{n}] @ {mem.__name__}",
                     f"    {load}(r_{nm}, x_{nm}[0:{n}])"]
            call.append(f"r_{nm}")
            outs[-1] += (f"    {store}(y_{nm}[0:{n}], r_{nm})", )
        else:
            call.append(f"x_{nm}[0:{n}]")
            outs[-1] += (f"    for i in seq(0, {max(n, 1)}):\n"
                         f"        y_{nm}[i] = x_{nm}[i]", )
    body.append(f"    {instr.name()}({', '.join(call)})")
    body += [o[3] for o in outs]
    src = (f"def w_{instr.name()}({', '.join(args)}):\n"
           + "\n".join(body) + "\n")
    return src, ins, [o[:3] for o in outs]


def _size_choices(instr, lanes):
    """Each size argument's values to try: 0, 1, half and all the lanes
    for a mask count; every shift count of interest for a shift."""
    out = {}
    for a in instr.ir().args:
        if a.type is IR.Size:
            out[a.name.name] = ([1, 15, 16, 17] if a.name.name == "k"
                                else [1, lanes - 1, lanes, lanes + 1])
    return out


def _inputs(t, n, rng, factor):
    if t is IR.BF16:
        vals = BF16_EXACT if factor else BF16_EDGES
        return D.f32_to_bf16_bits(rng.choice(vals, n).astype(np.float32))
    if t is IR.UI8:
        return rng.choice(U8_EDGES, n).astype(np.uint8)
    if t is IR.I8:
        return rng.choice(I8_EDGES, n).astype(np.int8)
    if t is IR.I32:
        return rng.choice(I32_ACC, n).astype(np.int32)
    if t is IR.F32 and factor == 4:   # vcvtne2ps2bf16 reads them as 0
        return rng.choice(F32_EDGES[F32_EDGES != np.float32(1.1754942e-38)],
                          n).astype(np.float32)
    if t is IR.F32 and factor == 3:   # a dpbf16 accumulator: no denormal
        with np.errstate(invalid="ignore"):
            normal = ~((np.abs(F32_EDGES) < 2.0 ** -126) & (F32_EDGES != 0))
        return rng.choice(F32_EDGES[normal], n).astype(np.float32)
    if t is IR.F32:
        if factor:
            return rng.choice(F32_EXACT[:-1] if factor == 2 else F32_EXACT,
                              n).astype(np.float32)
        return rng.choice(F32_EDGES, n).astype(np.float32)
    return rng.choice(U16_EDGES, n).astype(np.uint16)


def _bits(a, t=None):
    if t is IR.BF16:   # bf16 bits; NaN payloads unspecified
        nan = ((a & 0x7F80) == 0x7F80) & ((a & 0x7F) != 0)
        return np.where(nan, -1, a.astype(np.int64))
    if a.dtype == np.float32:
        b = a.view(np.uint32).astype(np.int64)
        return np.where(np.isnan(a), -1, b)
    return a.astype(np.int64)


def _emulated(p):
    """The wrapper built against the emulation layer, the host pretending
    to lack BF16 and VNNI."""
    f = compile_emulated(p)
    assert f.emulated & {"avx512bf16", "avx512vnni"}, f.emulated
    return [f]


def _cases():
    for lib_name, (lib, mem, _) in LIBS.items():
        for instr in lib.INSTRS:
            yield pytest.param(lib_name, instr, id=f"{lib_name}-{instr.name()}")


@pytest.mark.parametrize("lib_name,instr", list(_cases()))
def test_instruction_equals_its_body_on_edge_values(lib_name, instr):
    lib, mem, _ = LIBS[lib_name]
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    scope.update({n: getattr(lib, n) for n in lib.__all__})
    lanes = 16 if lib_name == "avx512" else 8
    choices = _size_choices(instr, lanes)
    names = sorted(choices)
    ran = 0
    for vals in itertools.product(*(choices[n] for n in names)):
        sizes = dict(zip(names, vals))
        src, ins, outs = _wrapper(lib_name, instr, sizes)
        try:
            p = parse_proc_source(src, scope)
        except (SchedulingError, ExoTypeError, BoundsError) as e:
            # a size the preconditions refuse (m > lanes, a shift past 15;
            # a size is >= 1, so no mask of 0 lanes)
            assert instr.name() in str(e), (src, e)
            continue
        runs = [p.compile()]
        if _lowp(instr):
            runs += _emulated(p)
        rng = np.random.default_rng(len(src) + ran)
        for trial in range(8):
            # a multiply-add's factors: a (or the broadcast scalar) may
            # be 1e8, b may not, so no product rounds
            args = {nm: _inputs(t, n, rng, _is_fma(instr) and nm != "x_dst"
                                and (1 if nm == "x_a" else 2))
                    for nm, t, n in ins}
            if "cvtne2ps" in instr.ir().instr.c_template:
                args = {nm: _inputs(t, n, rng, 4) for nm, t, n in ins}
            if _is_dpbf16(instr):
                args = {nm: _inputs(t, n, rng, 3 if nm == "x_dst" else 1)
                        for nm, t, n in ins}
            if (trial == 0 and not _lowp(instr)
                    and all(t is IR.F32 for _, t, _ in ins)):
                # a cancelling sum in lane order: 1e8 + 1 - 1e8 + 1
                for nm, t, n in ins:
                    v = np.zeros(n, np.float32)
                    v[:4] = [1e8, 1, -1e8, 1][:n]
                    args[nm] = v
            for nm, t, n in outs:
                args[nm] = np.zeros(n, _NP[t])
            want = {k: v.copy() for k, v in args.items()}
            with np.errstate(all="ignore"):
                p.interpret(**want)
            for f in runs:
                got = {k: v.copy() for k, v in args.items()}
                f(**got)
                for nm, t, _ in outs:
                    assert np.array_equal(_bits(got[nm], t),
                                          _bits(want[nm], t)), (
                        f"{instr.name()} sizes {sizes} ({f}): {nm} C "
                        f"{got[nm]} interpret {want[nm]} on "
                        f"{ {k: v for k, v in args.items() if k.startswith('x_')} }")
        ran += 1
    assert ran, "no size value was admitted"


# ---------------------------------------------------------------------------
# Gemmini: its instructions, called as tests/hw_libs/test_gemmini.py calls
# them (each load and store after the config write it needs), on edge
# values: scales NaN, +-inf, +-0, denormal, huge, negative; i32
# accumulators at their limits (wrap-around and saturation); i8 operands at
# -128 and 127; full and 1-row/1-column tiles.

from exo_hl import f32, i8, i32, proc, seq, size, stride  # noqa: E402
from exo_hl.hw_libs import gemmini as G  # noqa: E402
from exo_hl.hw_libs.gemmini import (  # noqa: E402
    GEMM_ACCUM, GEMM_SCRATCH, config_ld, config_ld_acc, config_ld_id1,
    config_st, ld_acc_i32, ld_acc_i32_bcast, ld_i8, ld_i8_id1, matmul_i8,
    matmul_i8_sized, st_acc_i32, st_acc_i8, st_acc_i8_relu, st_i8,
    zero_acc_i32)


@proc
def g_store(scale: f32, X: i32[16, 16], Y: i8[16, 16], Z: i8[16, 16],
            W: i32[16, 16]):
    acc: i32[16, 16] @ GEMM_ACCUM
    config_ld_acc(stride(X, 0))
    ld_acc_i32(16, 16, X, acc)
    config_st(stride(Y, 0), False)
    st_acc_i8(16, 16, scale, acc, Y)
    config_st(stride(Z, 0), True)
    st_acc_i8_relu(16, 16, scale, acc, Z)
    config_st(stride(W, 0), False)
    st_acc_i32(16, 16, acc, W)


@proc
def g_matmul(A: i8[16, 16], B: i8[16, 16], Bias: i32[16, 16],
             C: i32[16, 16], D: i32[16, 16], E: i8[16, 16]):
    acc: i32[16, 16] @ GEMM_ACCUM
    a: i8[16, 16] @ GEMM_SCRATCH
    b: i8[16, 16] @ GEMM_SCRATCH
    config_ld(stride(A, 0))
    config_ld_id1(stride(B, 0))
    config_ld_acc(stride(Bias, 0))
    config_st(stride(C, 0), False)
    ld_acc_i32(16, 16, Bias, acc)
    ld_i8(16, 16, A, a)
    ld_i8_id1(16, 16, B, b)
    matmul_i8(a, b, acc)
    st_acc_i32(16, 16, acc, C)
    zero_acc_i32(16, 16, acc)
    st_acc_i32(16, 16, acc, D)
    st_i8(16, 16, a, E)


@proc
def g_sized(n: size, k: size, scale: f32, bias: i32[16], A: i8[n, k],
            B: i8[k, 16], Y: i8[n, 16]):
    assert n <= 16 and k <= 16
    acc: i32[16, 16] @ GEMM_ACCUM
    a: i8[16, 16] @ GEMM_SCRATCH
    b: i8[16, 16] @ GEMM_SCRATCH
    config_ld_acc(0)
    ld_acc_i32_bcast(n, 16, bias, acc[0:n, :])
    config_ld(stride(A, 0))
    ld_i8(n, k, A, a[0:n, :])
    config_ld_id1(stride(B, 0))
    ld_i8_id1(k, 16, B, b[0:k, :])
    matmul_i8_sized(n, 13, k, a[0:n, :], b[0:k, :], acc[0:n, :])
    config_st(stride(Y, 0), False)
    st_acc_i8(n, 16, scale, acc[0:n, :], Y)


SCALES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3.4028235e38, -1.0,
          0.5, 2.0 ** -31, 1.0]
I32_EDGES = np.array([-2**31, -2**31 + 1, -1, 0, 1, 2**31 - 2, 2**31 - 1,
                      127, 128, -128, -129, 255, 3, -3], np.int64)


def _same(p, **args):
    f = p.compile()
    outs = []
    for run in (p.interpret, f):
        a = {k: (v.copy() if isinstance(v, np.ndarray) else v)
             for k, v in args.items()}
        with np.errstate(all="ignore"):
            run(**a)
        outs.append(a)
    for k, v in outs[0].items():
        if isinstance(v, np.ndarray):
            assert np.array_equal(_bits(v), _bits(outs[1][k])), (
                p.name(), k, v, outs[1][k], args)


def test_gemmini_instructions_are_all_exercised_here():
    used = set()
    for w in (g_store, g_matmul, g_sized):
        used |= {c.f.name for c in _calls(w.ir().body)}
    assert used == {i.name() for i in G.INSTRS}


def _calls(stmts):
    for s in stmts:
        if isinstance(s, IR.Call):
            yield s
        for attr in ("body", "orelse"):
            yield from _calls(getattr(s, attr, ()) or ())


@pytest.mark.parametrize("scale", SCALES)
def test_gemmini_stores_on_edge_scales_and_accumulators(scale):
    rng = np.random.default_rng(5)
    X = rng.choice(I32_EDGES, (16, 16)).astype(np.int32)
    _same(g_store, scale=np.array([scale], np.float32), X=X,
          Y=np.zeros((16, 16), np.int8), Z=np.zeros((16, 16), np.int8),
          W=np.zeros((16, 16), np.int32))


@pytest.mark.parametrize("case", ["min", "max", "mixed", "wrap"])
def test_gemmini_matmul_on_operand_and_accumulator_limits(case):
    rng = np.random.default_rng(6)
    A = np.full((16, 16), -128 if case != "max" else 127, np.int8)
    B = np.full((16, 16), -128, np.int8)
    Bias = np.zeros((16, 16), np.int32)
    if case == "mixed":
        A = rng.choice(np.array([-128, -1, 0, 1, 127]), (16, 16)).astype(
            np.int8)
        B = rng.choice(np.array([-128, -1, 0, 1, 127]), (16, 16)).astype(
            np.int8)
    if case == "wrap":
        Bias = rng.choice(I32_EDGES, (16, 16)).astype(np.int32)
    _same(g_matmul, A=A, B=B, Bias=Bias, C=np.zeros((16, 16), np.int32),
          D=np.ones((16, 16), np.int32), E=np.zeros((16, 16), np.int8))


@pytest.mark.parametrize("n,k", [(1, 1), (16, 16), (1, 16), (16, 1)])
@pytest.mark.parametrize("scale", [np.nan, -0.0, 1e-45, 3.4028235e38])
def test_gemmini_partial_tiles_on_edges(n, k, scale):
    rng = np.random.default_rng(n + k)
    _same(g_sized, n=n, k=k, scale=np.array([scale], np.float32),
          bias=rng.choice(I32_EDGES, 16).astype(np.int32),
          A=rng.choice(np.array([-128, 127, 0, -1]), (n, k)).astype(np.int8),
          B=rng.choice(np.array([-128, 127, 0, 1]), (k, 16)).astype(np.int8),
          Y=np.zeros((n, 16), np.int8))


def test_gemmini_every_partial_tile():
    """``g_sized`` at every tile size n, k in 1..16 (run-time sizes: one
    build), a scale drawn from the edge scales and a few ordinary ones."""
    f = g_sized.compile()
    rng = np.random.default_rng(7)
    scales = SCALES + [0.37, -2.5, 1.0 / 3]
    for n, k in itertools.product(range(1, 17), range(1, 17)):
        args = dict(
            n=n, k=k,
            scale=np.array([scales[(n * 17 + k) % len(scales)]],
                           np.float32),
            bias=rng.choice(I32_EDGES, 16).astype(np.int32),
            A=rng.choice(np.array([-128, 127, 0, -1, 5]), (n, k))
            .astype(np.int8),
            B=rng.choice(np.array([-128, 127, 0, 1, -7]), (k, 16))
            .astype(np.int8),
            Y=np.zeros((n, 16), np.int8))
        outs = []
        for run in (g_sized.interpret, f):
            a = {key: (v.copy() if isinstance(v, np.ndarray) else v)
                 for key, v in args.items()}
            with np.errstate(all="ignore"):
                run(**a)
            outs.append(a["Y"])
        assert np.array_equal(outs[0], outs[1]), (n, k, args["scale"])
