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

Gemmini is not covered here: its instructions run through a simulator
whose configuration state is being reworked (separate C registers per
config); tests/hw_libs/test_gemmini.py checks them against their bodies.
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
from exo_hl.hw_libs import avx2, avx512

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

LIBS = {
    "avx2": (avx2, avx2.AVX2, {IR.F32: ("mm256_loadu_ps", "mm256_storeu_ps"),
                               IR.UI16: ("mm256_loadu_epi16",
                                         "mm256_storeu_epi16")}),
    "avx512": (avx512, avx512.AVX512,
               {IR.F32: ("mm512_loadu_ps", "mm512_storeu_ps"),
                IR.UI16: ("mm512_loadu_epi16", "mm512_storeu_epi16")}),
}
_TNAME = {IR.F32: "f32", IR.UI16: "ui16"}


def _is_fma(instr):
    return "fmadd" in instr.ir().instr.c_template


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
    if t is IR.F32:
        if factor:
            return rng.choice(F32_EXACT[:-1] if factor == 2 else F32_EXACT,
                              n).astype(np.float32)
        return rng.choice(F32_EDGES, n).astype(np.float32)
    return rng.choice(U16_EDGES, n).astype(np.uint16)


def _bits(a):
    if a.dtype == np.float32:
        b = a.view(np.uint32).astype(np.int64)
        return np.where(np.isnan(a), -1, b)
    return a.astype(np.int64)


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
        f = p.compile()
        rng = np.random.default_rng(len(src) + ran)
        for trial in range(8):
            # a multiply-add's factors: a (or the broadcast scalar) may
            # be 1e8, b may not, so no product rounds
            args = {nm: _inputs(t, n, rng, _is_fma(instr) and nm != "x_dst"
                                and (1 if nm == "x_a" else 2))
                    for nm, t, n in ins}
            if trial == 0 and ins[0][1] is IR.F32:
                # a cancelling sum in lane order: 1e8 + 1 - 1e8 + 1
                for nm, t, n in ins:
                    v = np.zeros(n, np.float32)
                    v[:4] = [1e8, 1, -1e8, 1][:n]
                    args[nm] = v
            for nm, t, n in outs:
                args[nm] = np.zeros(n, ins[0][1] is IR.F32 and np.float32
                                    or np.uint16)
                args[nm] = args[nm].astype(
                    np.float32 if t is IR.F32 else np.uint16)
            want = {k: v.copy() for k, v in args.items()}
            got = {k: v.copy() for k, v in args.items()}
            with np.errstate(all="ignore"):
                p.interpret(**want)
            f(**got)
            for nm, _, _ in outs:
                assert np.array_equal(_bits(got[nm]), _bits(want[nm])), (
                    f"{instr.name()} sizes {sizes}: {nm} C {got[nm]} "
                    f"interpret {want[nm]} on "
                    f"{ {k: v for k, v in args.items() if k.startswith('x_')} }")
        ran += 1
    assert ran, "no size value was admitted"
