"""Every NEON instruction against its body on edge values, through qemu.

As tests/hw_libs/test_edge_values.py does for x86: each instruction gets a
wrapper generated from its signature (register arguments loaded and stored
with the library's own load and store; DRAM arguments windows of the
wrapper's arguments; sizes and lanes literals, each value the
preconditions admit among those tried, and one past them refused). All
wrappers of one target are built into one executable and all their calls
run in one qemu process (``CrossProgram.run_many``), then compared with
``interpret()`` bit for bit (NaNs equal to each other: their sign and
payload are unspecified, docs/semantics.md). The fused multiply-adds are
the documented exception (one rounding, their bodies two): their factors
are chosen so that products are exact, where both agree; the unfused
``vmla`` gets every edge value, so a contraction by the compiler fails.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from exo_hl import ExoTypeError, SchedulingError
from exo_hl.codegen_c.cross import CrossProgram
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.types import basetype, shape as type_shape
from exo_hl.errors import BoundsError
from exo_hl.frontend.decorators import parse_proc_source
from exo_hl.hw_libs import neon

from .cross_tools import (check_against_interpret, library_scope,
                          need_target, size_value)

#: the C is for ARM: the suite's host-compiler audit cannot build it; the
#: cross builds here compile it with -std=c11 -Wall -Wextra -Werror instead
pytestmark = pytest.mark.no_c_audit("ARM C: checked by the cross compiler "
                                    "with -Werror in these tests")
CROSS_CFLAGS = "-std=c11 -Werror"

EDGES = {
    IR.F32: np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45,
                      -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38,
                      1e8, -1e8, 1.0, -1.0, 0.5, 3.0, 16777217.0, 0.1,
                      # (1 + 2**-12)**2 rounds: a fused multiply-add
                      # with -(1 + 2**-11) tells one rounding from two
                      1 + 2.0 ** -12, -(1 + 2.0 ** -11)], np.float32),
    IR.F16: np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6e-8, -6e-8,
                      6.1e-5, 65504, -65504, 2048, 1.0, -1.0, 0.5, 3.0,
                      0.1, 1e4, 1 + 2.0 ** -6, -(1 + 2.0 ** -5)],
                     np.float16),
    IR.F64: np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324,
                      2.2250738585072014e-308, 1.7976931348623157e308,
                      -1.7976931348623157e308, 1e16, -1e16, 1.0, -1.0, 0.5,
                      3.0, 0.1, 1 + 2.0 ** -30, -(1 + 2.0 ** -29)],
                     np.float64),
    # ui16: the ends, the multiples of 3 and their neighbours, the points
    # where a sum of two or three wraps, the largest quarter/low-bit mixes
    IR.UI16: np.array([0, 1, 2, 3, 4, 5, 21844, 21845, 21846, 32767, 32768,
                       32769, 43690, 43691, 65532, 65533, 65534, 65535],
                      np.uint16),
}
#: factors of the fused multiply-adds: every product of two is exact
EXACT = {t: np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0,
                      -2.0, 3.0, 0.5, 100.0], dt)
         for t, dt in ((IR.F32, np.float32), (IR.F16, np.float16),
                       (IR.F64, np.float64))}
DTYPE = {IR.F32: np.float32, IR.F16: np.float16, IR.F64: np.float64,
         IR.UI16: np.uint16}
TNAME = {IR.F32: "f32", IR.F16: "f16", IR.F64: "f64", IR.UI16: "ui16"}
MOVES = {IR.F32: ("neon_vld_4xf32", "neon_vst_4xf32"),
         IR.F16: ("neon_vld_8xf16", "neon_vst_8xf16"),
         IR.F64: ("neon_vld_2xf64", "neon_vst_2xf64"),
         IR.UI16: ("neon_vld_8xu16", "neon_vst_8xu16")}
LANES = {IR.F32: 4, IR.F16: 8, IR.F64: 2, IR.UI16: 8}


def _fused(instr):
    return "vfma" in instr.ir().instr.c_template


def wrapper(instr, sizes, mem, moves):
    """(source, inputs [(name, type, n)], outputs [(name, type, n)])."""
    args, body, call, ins, outs = [], [], [], [], []
    for a in instr.ir().args:
        nm = a.name.name
        if a.type in (IR.Size, IR.Index):
            call.append(str(sizes[nm]))
            continue
        t = basetype(a.type)
        tn = TNAME[t]
        dims = [size_value(h, sizes) for h in type_shape(a.type)]
        if not dims:                       # a data scalar
            args += [f"x_{nm}: {tn}[1] @ DRAM", f"y_{nm}: {tn}[1] @ DRAM"]
            ins.append((f"x_{nm}", t, 1))
            body += [f"    s_{nm}: {tn} @ DRAM", f"    s_{nm} = x_{nm}[0]"]
            call.append(f"s_{nm}")
            outs.append((f"y_{nm}", t, 1, f"    y_{nm}[0] = s_{nm}"))
            continue
        n = dims[0]
        args += [f"x_{nm}: {tn}[{n}] @ DRAM", f"y_{nm}: {tn}[{n}] @ DRAM"]
        ins.append((f"x_{nm}", t, n))
        if a.mem is mem:
            load, store = moves[t]
            body += [f"    r_{nm}: {tn}[{n}] @ {mem.__name__}",
                     f"    {load}(r_{nm}, x_{nm}[0:{n}])"]
            call.append(f"r_{nm}")
            outs.append((f"y_{nm}", t, n,
                         f"    {store}(y_{nm}[0:{n}], r_{nm})"))
        else:
            call.append(f"x_{nm}[0:{n}]")
            outs.append((f"y_{nm}", t, n,
                         f"    for i in seq(0, {n}):\n"
                         f"        y_{nm}[i] = x_{nm}[i]"))
    body.append(f"    {instr.name()}({', '.join(call)})")
    body += [o[3] for o in outs]
    tag = "_".join(f"{k}{v}" for k, v in sorted(sizes.items()))
    src = (f"def w_{instr.name()}{'_' + tag if tag else ''}"
           f"({', '.join(args)}):\n" + "\n".join(body) + "\n")
    return src, ins, [o[:3] for o in outs]


def size_choices(instr, lanes):
    out = {}
    for a in instr.ir().args:
        if a.type is IR.Size:
            out[a.name.name] = [1, lanes - 1, lanes, lanes + 1]
        elif a.type is IR.Index:
            out[a.name.name] = list(range(lanes)) + [lanes]
    return out


def build_wrappers(lib, instrs, mem, moves, lanes_of):
    """[(instr, sizes, proc, ins, outs)] of every admitted size choice;
    also asserts a refused choice names the instruction."""
    scope = library_scope(lib)
    made = []
    for instr in instrs:
        elem = next(basetype(a.type) for a in instr.ir().args
                    if a.type not in (IR.Size, IR.Index))
        choices = size_choices(instr, lanes_of[elem])
        names = sorted(choices)
        ran = 0
        for vals in itertools.product(*(choices[n] for n in names)):
            sizes = dict(zip(names, vals))
            src, ins, outs = wrapper(instr, sizes, mem, moves)
            try:
                p = parse_proc_source(src, scope)
            except (SchedulingError, ExoTypeError, BoundsError) as e:
                assert instr.name() in str(e), (src, e)
                continue
            made.append((instr, sizes, p, ins, outs))
            ran += 1
        assert ran, f"{instr.name()}: no size value was admitted"
    return made


def inputs(instr, ins, rng, trial, edges=EDGES, exact=EXACT):
    args = {}
    for nm, t, n in ins:
        dt = DTYPE[t]
        if _fused(instr) and nm != "x_dst":
            pool = exact[t] if nm != "x_b" else exact[t][:-1]
        else:
            pool = edges[t]
        args[nm] = rng.choice(pool, n).astype(dt)
        if trial == 0 and t is IR.F32 and not _fused(instr):
            # a sum that cancels in lane order (1) and pairwise (0)
            v = np.zeros(n, dt)
            if nm != "x_dst":
                v[:4] = [1, 1e8, -1e8, 1][:n]
            args[nm] = v
        if trial == 1 and "vmla" in instr.name():
            # the product rounds: one rounding (a contraction) gives
            # 2**-24, the body's two 0
            args[nm] = np.full(n, -(1 + 2.0 ** -11) if nm == "x_dst"
                               else 1 + 2.0 ** -12, dt)
    return args


def check_target(made, target, trials=8):
    prog = CrossProgram([p for _, _, p, _, _ in made], target,
                        cflags=CROSS_CFLAGS, stem=f"neon_edges_{target.replace('-', '_')}")
    calls = []
    for k, (instr, sizes, p, ins, outs) in enumerate(made):
        rng = np.random.default_rng(k)
        for trial in range(trials):
            args = inputs(instr, ins, rng, trial)
            for nm, t, n in outs:
                args[nm] = np.zeros(n, DTYPE[t])
            calls.append((f"{instr.name()} sizes {sizes}", p, args,
                          [nm for nm, _, _ in outs]))
    return check_against_interpret(prog, calls)


def _is_f16(instr):
    return "fp16" in instr.ir().instr.cpu_features


def test_every_neon_instruction_equals_its_body_under_qemu():
    need_target("aarch64")
    made = build_wrappers(neon, [i for i in neon.INSTRS if not _is_f16(i)],
                          neon.Neon, MOVES, LANES)
    assert check_target(made, "aarch64") >= 8 * len(made)


def test_every_neon_fp16_instruction_equals_its_body_under_qemu():
    need_target("aarch64-fp16")
    made = build_wrappers(neon, [i for i in neon.INSTRS if _is_f16(i)],
                          neon.Neon, MOVES, LANES)
    assert check_target(made, "aarch64-fp16") >= 8 * len(made)


def test_fp16_code_for_plain_aarch64_is_refused_naming_the_target():
    need_target("aarch64")
    made = build_wrappers(neon, [neon.neon_vadd_8xf16], neon.Neon, MOVES,
                          LANES)
    with pytest.raises(RuntimeError, match="lacks fp16.*aarch64-fp16"):
        made[0][2].compile(target="aarch64")


def test_neon_code_for_the_x86_host_is_refused_naming_the_target():
    made = build_wrappers(neon, [neon.neon_vadd_4xf32], neon.Neon, MOVES,
                          LANES)
    with pytest.raises(RuntimeError, match="target='aarch64'"):
        made[0][2].compile()


def test_neon_ui16_means_on_every_edge_triple_under_qemu():
    """The means of three and the wrapping add on every triple of edge
    values (5832 lanes) and random ones, against numpy's formulas and
    ``interpret()``, in one call."""
    need_target("aarch64")
    src = (
        "def means(n: size, a: ui16[8 * n] @ DRAM, b: ui16[8 * n] @ DRAM,\n"
        "          c: ui16[8 * n] @ DRAM, e: ui16[8 * n] @ DRAM,\n"
        "          w: ui16[8 * n] @ DRAM, s: ui16[8 * n] @ DRAM):\n"
        "    for g in seq(0, n):\n"
        "        ra: ui16[8] @ Neon\n"
        "        rb: ui16[8] @ Neon\n"
        "        rc: ui16[8] @ Neon\n"
        "        rm: ui16[8] @ Neon\n"
        "        neon_vld_8xu16(ra, a[8 * g:8 * g + 8])\n"
        "        neon_vld_8xu16(rb, b[8 * g:8 * g + 8])\n"
        "        neon_vld_8xu16(rc, c[8 * g:8 * g + 8])\n"
        "        neon_mean3_8xu16(rm, ra, rb, rc)\n"
        "        neon_vst_8xu16(e[8 * g:8 * g + 8], rm)\n"
        "        neon_mean3_wrap_8xu16(rm, ra, rb, rc)\n"
        "        neon_vst_8xu16(w[8 * g:8 * g + 8], rm)\n"
        "        neon_vadd_8xu16(rm, ra, rb)\n"
        "        neon_vst_8xu16(s[8 * g:8 * g + 8], rm)\n")
    p = parse_proc_source(src, library_scope(neon))
    ev = EDGES[IR.UI16]
    trip = np.array(list(itertools.product(ev, ev, ev)), np.uint16)
    rng = np.random.default_rng(3)
    rand = rng.integers(0, 65536, (2360, 3), dtype=np.uint16)
    abc = np.concatenate([trip, rand])            # 8192 lanes
    n = len(abc) // 8
    args = dict(n=n, a=abc[:, 0].copy(), b=abc[:, 1].copy(),
                c=abc[:, 2].copy(), e=np.zeros(8 * n, np.uint16),
                w=np.zeros(8 * n, np.uint16), s=np.zeros(8 * n, np.uint16))
    want = {k: (v.copy() if isinstance(v, np.ndarray) else v)
            for k, v in args.items()}
    p.interpret(**want)
    p.compile(target="aarch64").run_many([args])
    tot = abc.astype(np.int64).sum(axis=1)
    np.testing.assert_array_equal(args["e"], tot // 3)
    np.testing.assert_array_equal(args["w"], (tot % 65536) // 3)
    np.testing.assert_array_equal(
        args["s"], (abc[:, 0].astype(np.int64) + abc[:, 1]) % 65536)
    for k in "ews":
        np.testing.assert_array_equal(args[k], want[k])
