"""Every RVV instruction against its body on edge values, under
qemu-riscv64 at VLEN 128 and 256 (the same code: vl <= 4 is exact on
every RVV machine), and the vector length as checked config state.

Wrappers as in test_neon_edge_values.py, with the length ``n`` of each
instruction set first by ``rvv_vsetvl_e32m1(n)`` (n = 1..4; 5 is
refused; for register groups of LMUL k ``rvv_vsetvl_e32m{k}``, up to
4 * k). All wrappers run in one qemu process per VLEN. The lengths of
the machine (``rvv_vsetvlmax_e32m1``, ``rvv_vsetvl_min_e32m1``) at VLEN
128, 256 and 512, one executable, in their own test.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import exo_hl
from exo_hl import ExoTypeError, SchedulingError
from exo_hl.codegen_c.cross import CrossProgram
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.types import shape as type_shape
from exo_hl.errors import BoundsError
from exo_hl.frontend.decorators import parse_proc_source
from exo_hl.hw_libs import rvv

from .cross_tools import (check_against_interpret, library_scope,
                          need_target, size_value)
from .test_neon_edge_values import EDGES, EXACT

pytestmark = pytest.mark.no_c_audit("RISC-V C: checked by the cross "
                                    "compiler with -Werror in these tests")


def lmul(instr):
    """The LMUL of an instruction's registers (1 when it has none)."""
    return next((a.mem.lmul for a in instr.ir().args
                 if isinstance(a.mem, type)
                 and issubclass(a.mem, rvv.RVVRegisters)),
                int(instr.name()[-1]) if "vsetvl_e32m" in instr.name()
                else 1)


def is_u16(instr):
    """Whether an instruction works on ui16 lanes (``u16.py``)."""
    return instr.name().endswith(("_u16", "_e16m1"))


def wrapper(instr, n):
    k = lmul(instr)
    u16 = is_u16(instr)
    sfx = "" if k == 1 else f"m{k}"
    ty, lanes = ("ui16", 8) if u16 else ("f32", 4)
    setvl = "rvv_vsetvl_e16m1" if u16 else f"rvv_vsetvl_e32m{k}"
    load, store = (("rvv_vle16_u16", "rvv_vse16_u16") if u16 else
                   (f"rvv_vle32_f32{sfx}", f"rvv_vse32_f32{sfx}"))
    args, body, call, ins, outs = [], [f"    {setvl}({n})"], [], [], []
    for a in instr.ir().args:
        nm = a.name.name
        if a.type is IR.Size:
            call.append(str(n))
            continue
        dims = [size_value(h, {"n": n}) for h in type_shape(a.type)]
        if not dims:
            args += [f"x_{nm}: f32[1] @ DRAM", f"y_{nm}: f32[1] @ DRAM"]
            ins.append((f"x_{nm}", 1))
            body += [f"    s_{nm}: f32 @ DRAM", f"    s_{nm} = x_{nm}[0]"]
            call.append(f"s_{nm}")
            outs.append((f"y_{nm}", 1, f"    y_{nm}[0] = s_{nm}"))
            continue
        m = dims[0]
        args += [f"x_{nm}: {ty}[{m}] @ DRAM", f"y_{nm}: {ty}[{m}] @ DRAM"]
        ins.append((f"x_{nm}", m))
        if isinstance(a.mem, type) and issubclass(a.mem, rvv.RVVRegisters):
            body += [f"    r_{nm}: {ty}[{lanes * k}] @ {a.mem.__name__}",
                     f"    {load}({n}, r_{nm}[0:{n}], x_{nm}[0:{n}])"]
            call.append(f"r_{nm}[0:{n}]")
            outs.append((f"y_{nm}", m, f"    {store}({n}, "
                         f"y_{nm}[0:{n}], r_{nm}[0:{n}])"))
        else:
            call.append(f"x_{nm}[0:{m}]")
            outs.append((f"y_{nm}", m, f"    for i in seq(0, {m}):\n"
                         f"        y_{nm}[i] = x_{nm}[i]"))
    if "vsetvl_e" not in instr.name():
        body.append(f"    {instr.name()}({', '.join(call)})")
    body += [o[2] for o in outs]
    if not args:
        args = ["z: f32[1] @ DRAM"]
    src = (f"def w_{instr.name()}_n{n}({', '.join(args)}):\n"
           + "\n".join(body) + "\n")
    return src, ins, [o[:2] for o in outs]


#: the vector lengths of any machine: tested by
#: test_machine_vector_length_under_qemu
VLA_SETS = (rvv.rvv_vsetvlmax_e32m1, rvv.rvv_vsetvl_min_e32m1,
            rvv.rvv_vsetvl_min_e32m2, rvv.rvv_vsetvl_min_e32m4,
            rvv.rvv_vsetvl_min_e32m8, rvv.rvv_vsetvl_min_e16m1)


def build():
    scope = library_scope(rvv)
    made = []
    for instr in rvv.INSTRS:
        if instr in VLA_SETS:
            continue
        # the lanes every machine has
        top = 8 if is_u16(instr) else 4 * lmul(instr)
        for n in sorted({1, 2, top - 1, top, top + 1}):
            src, ins, outs = wrapper(instr, n)
            try:
                p = parse_proc_source(src, scope)
            except (SchedulingError, ExoTypeError, BoundsError) as e:
                assert n == top + 1 and "rvv_" in str(e), (src, e)
                continue
            assert n <= top, src
            made.append((instr, n, p, ins, outs))
    return made


def _inputs(instr, ins, rng, trial):
    if is_u16(instr):        # ui16 edge values, any mix
        return {nm: rng.choice(EDGES[IR.UI16], k) for nm, k in ins}
    fused = "vfmacc" in instr.ir().instr.c_template
    args = {}
    for nm, k in ins:
        pool = EXACT[IR.F32] if fused and nm != "x_dst" else EDGES[IR.F32]
        args[nm] = rng.choice(pool, k).astype(np.float32)
        if trial == 0 and not fused:    # cancels in lane order only
            v = np.zeros(k, np.float32)
            if nm != "x_dst":
                v[:4] = [1, 1e8, -1e8, 1][:k]
            args[nm] = v
        if trial == 1 and "unfused" in instr.name():
            args[nm] = np.full(k, -(1 + 2.0 ** -11) if nm == "x_dst"
                               else 1 + 2.0 ** -12, np.float32)
    return args


@pytest.mark.parametrize("target", ["riscv64", "riscv64-vlen256"])
def test_every_rvv_instruction_equals_its_body_under_qemu(target):
    need_target(target)
    made = build()
    assert {i for i, *_ in made} == set(rvv.INSTRS) - set(VLA_SETS)
    prog = CrossProgram([p for _, _, p, _, _ in made], target,
                        cflags="-std=c11 -Werror", stem="rvv_edges")
    calls = []
    for k, (instr, n, p, ins, outs) in enumerate(made):
        rng = np.random.default_rng(k)
        for trial in range(8):
            args = _inputs(instr, ins, rng, trial)
            for nm, m in outs:
                args[nm] = np.zeros(m, np.uint16 if is_u16(instr)
                                    else np.float32)
            if not args:
                args = {"z": np.zeros(1, np.float32)}
            calls.append((f"{instr.name()} n={n}", p, args,
                          [nm for nm, _ in outs]))
    check_against_interpret(prog, calls)
    # the last wrapper set vl: the context came back from the target
    assert prog.get_config(rvv.VL, "vl") == made[-1][1]


def test_an_instruction_under_another_vector_length_is_refused():
    src = ("def f(x: f32[3] @ DRAM, y: f32[3] @ DRAM):\n"
           "    rvv_vsetvl_e32m1(2)\n"
           "    r: f32[4] @ RVV\n"
           "    rvv_vle32_f32(3, r[0:3], x[0:3])\n"
           "    rvv_vse32_f32(3, y[0:3], r[0:3])\n")
    scope = library_scope(rvv)
    with pytest.raises(BoundsError, match="VL.vl == n"):
        parse_proc_source(src, scope)
    with pytest.raises(BoundsError, match="VL.vl == n"):   # no vsetvl
        parse_proc_source(src.replace("    rvv_vsetvl_e32m1(2)\n", ""),
                          scope)


def test_rvv_registers_need_constant_indices():
    src = ("def f(x: f32[2, 4] @ DRAM, y: f32[2, 4] @ DRAM):\n"
           "    rvv_vsetvl_e32m1(4)\n"
           "    r: f32[2, 4] @ RVV\n"
           "    for i in seq(0, 2):\n"
           "        rvv_vle32_f32(4, r[i, 0:4], x[i, 0:4])\n"
           "        rvv_vse32_f32(4, y[i, 0:4], r[i, 0:4])\n")
    scope = library_scope(rvv)
    p = parse_proc_source(src, scope)
    with pytest.raises(exo_hl.MemGenError, match="indexed with constants"):
        p.c_code_str()
    need_target("riscv64")
    q = p.unroll("i")
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    y = np.zeros((2, 4), np.float32)
    q.compile(target="riscv64", cflags="-std=c11 -Werror")(x, y)
    assert np.array_equal(x, y)


VLA_SRC = """\
def w_vla(m: size, avl: size, x: f32[2048] @ DRAM, y: f32[m] @ DRAM):
    assert avl <= m
    assert m <= 2048
    rvv_vsetvlmax_e32m1()
    r: f32[2048] @ RVV
    d: f32[2048] @ RVV
    rvv_vle32_f32(VL.vl, r[0:VL.vl], x[0:VL.vl])
    rvv_vsetvl_min_e32m1(avl)
    rvv_vfadd_vv_f32(VL.vl, d[0:VL.vl], r[0:VL.vl], r[0:VL.vl])
    rvv_vse32_f32(VL.vl, y[0:VL.vl], d[0:VL.vl])
"""


def _vla_group_src(k):
    """Load and store the first ``min(avl, k * VLMAX)`` floats with
    register groups of ``k``."""
    m = 2048 * k
    return (f"def w_vla{k}(m: size, avl: size, x: f32[m] @ DRAM,\n"
            f"           y: f32[m] @ DRAM):\n"
            f"    assert avl <= m\n"
            f"    assert m <= {m}\n"
            f"    rvv_vsetvlmax_e32m1()\n"
            f"    rvv_vsetvl_min_e32m{k}(avl)\n"
            f"    r: f32[{m}] @ RVVM{k}\n"
            f"    rvv_vle32_f32m{k}(VL.vl, r[0:VL.vl], x[0:VL.vl])\n"
            f"    rvv_vse32_f32m{k}(VL.vl, y[0:VL.vl], r[0:VL.vl])\n")


def test_machine_vector_length_under_qemu():
    """``rvv_vsetvlmax_e32m1`` reads VLMAX (VLEN / 32) and
    ``rvv_vsetvl_min_e32m1(avl)`` sets ``min(avl, VLMAX)``: one executable
    at VLEN 128, 256 and 512 loads VLMAX floats, then doubles and stores
    the first ``min(avl, VLMAX)``; ``interpret()`` with ``VL.vlmax`` at
    the machine's value computes the same. For groups of k = 2, 4, 8,
    ``rvv_vsetvl_min_e32m{k}(avl)`` copies ``min(avl, k * VLMAX)``."""
    from exo_hl.core_ir.interpret import ConfigState
    scope = library_scope(rvv)
    p = parse_proc_source(VLA_SRC, scope)
    groups = {k: parse_proc_source(_vla_group_src(k), scope)
              for k in (2, 4, 8)}
    m = 40
    x = np.arange(1, 2049, dtype=np.float32)
    exes = set()
    for target, vlmax in (("riscv64", 4), ("riscv64-vlen256", 8),
                          ("riscv64-vlen512", 16)):
        need_target(target)
        prog = CrossProgram([p, *groups.values()], target,
                            cflags="-std=c11 -Werror", stem="rvv_vla")
        exes.add(prog.executable)
        avls = (1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 40)
        calls = [(p, dict(m=m, avl=a, x=x.copy(),
                          y=np.zeros(m, np.float32))) for a in avls]
        gavls = (1, 7, 8, 9, 16, 17, 31, 32, 33, 64, 65, 128, 129, 200)
        gcalls = [(k, a, (q, dict(m=200, avl=a, x=x[:200].copy(),
                                  y=np.zeros(200, np.float32))))
                  for k, q in groups.items() for a in gavls]
        prog.run_many(calls + [c for _, _, c in gcalls])
        for k, a, (_, args) in gcalls:      # min(avl, k * VLMAX) copied
            want = np.where(np.arange(200) < min(a, k * vlmax), x[:200], 0)
            assert np.array_equal(args["y"], want), (target, k, a)
        for a, (_, args) in zip(avls, calls):
            k = min(a, vlmax)
            want = np.zeros(m, np.float32)
            want[:k] = 2 * x[:k]
            assert np.array_equal(args["y"], want), (target, a)
            st = ConfigState()
            st[rvv.VL.vlmax] = vlmax
            y = np.zeros(m, np.float32)
            p.interpret(m=m, avl=a, x=x, y=y, config_state=st)
            assert np.array_equal(y, want), (target, a)
        assert prog.get_config(rvv.VL, "vlmax") == vlmax
        # the last call: groups of 8, avl 200
        assert prog.get_config(rvv.VL, "vl") == min(200, 8 * vlmax)
    assert len(exes) == 1        # the same executable at every VLEN


def test_machine_vector_lengths_are_checked():
    """A length of the machine's needs ``rvv_vsetvlmax_e32m1`` first (the
    checker knows nothing of ``VL.vlmax`` otherwise), a register of the
    4 guaranteed lanes cannot hold it, and ``vl`` may be less than
    ``avl``: each refused."""
    scope = library_scope(rvv)
    with pytest.raises(BoundsError, match="VL.vlmax >= 4"):
        parse_proc_source(VLA_SRC.replace("rvv_vsetvlmax_e32m1()",
                                          "rvv_vsetvl_e32m1(4)"), scope)
    with pytest.raises(BoundsError, match="r"):
        parse_proc_source(VLA_SRC.replace("f32[2048] @ RVV",
                                          "f32[4] @ RVV"), scope)
    # a length set for a register group is more than one register has
    # (the C would act on fewer lanes than the body): refused
    with pytest.raises(BoundsError, match="n <= 4 or n <= VL.vlmax"):
        parse_proc_source(
            "def f(x: f32[32] @ DRAM, y: f32[32] @ DRAM):\n"
            "    rvv_vsetvl_e32m8(32)\n"
            "    r: f32[2048] @ RVV\n"
            "    rvv_vle32_f32(32, r[0:32], x[0:32])\n", scope)
    with pytest.raises(BoundsError, match="n <= 4 or n <= VL.vlmax"):
        parse_proc_source(_vla_group_src(8).replace(
            "@ RVVM8", "@ RVV").replace("_f32m8(", "_f32("), scope)
    # vl may be less than avl: a store of avl lanes is refused
    with pytest.raises(BoundsError, match="VL.vl == n|n <= 4 or"):
        parse_proc_source(VLA_SRC.replace(
            "rvv_vse32_f32(VL.vl, y[0:VL.vl], d[0:VL.vl])",
            "rvv_vse32_f32(avl, y[0:avl], d[0:avl])"), scope)


MEANS_SRC = """\
def means(n: size, a: ui16[8 * n] @ DRAM, b: ui16[8 * n] @ DRAM,
          c: ui16[8 * n] @ DRAM, e: ui16[8 * n] @ DRAM,
          w: ui16[8 * n] @ DRAM, s: ui16[8 * n] @ DRAM):
    rvv_vsetvl_e16m1(8)
    for g in seq(0, n):
        ra: ui16[8] @ RVV
        rb: ui16[8] @ RVV
        rc: ui16[8] @ RVV
        rm: ui16[8] @ RVV
        rvv_vle16_u16(8, ra, a[8 * g:8 * g + 8])
        rvv_vle16_u16(8, rb, b[8 * g:8 * g + 8])
        rvv_vle16_u16(8, rc, c[8 * g:8 * g + 8])
        rvv_mean3_u16(8, rm, ra, rb, rc)
        rvv_vse16_u16(8, e[8 * g:8 * g + 8], rm)
        rvv_mean3_wrap_u16(8, rm, ra, rb, rc)
        rvv_vse16_u16(8, w[8 * g:8 * g + 8], rm)
        rvv_vadd_vv_u16(8, rm, ra, rb)
        rvv_vse16_u16(8, s[8 * g:8 * g + 8], rm)
"""

VLA16_SRC = """\
def w_vla16(m: size, avl: size, x: ui16[m] @ DRAM, y: ui16[m] @ DRAM):
    assert avl <= m
    assert m <= 4096
    rvv_vsetvlmax_e32m1()
    rvv_vsetvl_min_e16m1(avl)
    r: ui16[4096] @ RVV
    d: ui16[4096] @ RVV
    e: ui16[4096] @ RVV
    rvv_vle16_u16(VL.vl, r[0:VL.vl], x[0:VL.vl])
    rvv_mean3_u16(VL.vl, d[0:VL.vl], r[0:VL.vl], r[0:VL.vl], r[0:VL.vl])
    rvv_vadd_vv_u16(VL.vl, e[0:VL.vl], d[0:VL.vl], r[0:VL.vl])
    rvv_vse16_u16(VL.vl, y[0:VL.vl], e[0:VL.vl])
"""


def test_rvv_ui16_means_on_every_edge_triple_under_qemu():
    """The means of three and the wrapping add on every triple of ui16
    edge values (5832 lanes) and random ones, against numpy's formulas and
    ``interpret()``, in one call (VLEN 128); and at the machine's length
    for 16-bit lanes, ``rvv_vsetvl_min_e16m1(avl)`` = ``min(avl, 2 *
    VLMAX)``, at VLEN 128 and 256 (one executable): ``x / 1 + x`` wraps
    in the first ``min(avl, VLEN / 16)`` lanes."""
    from exo_hl.core_ir.interpret import ConfigState
    need_target("riscv64")
    scope = library_scope(rvv)
    p = parse_proc_source(MEANS_SRC, scope)
    q = parse_proc_source(VLA16_SRC, scope)
    ev = EDGES[IR.UI16]
    trip = np.array(list(itertools.product(ev, ev, ev)), np.uint16)
    rng = np.random.default_rng(35)
    rand = rng.integers(0, 65536, (2360, 3), dtype=np.uint16)
    abc = np.concatenate([trip, rand])            # 8192 lanes
    n = len(abc) // 8
    args = dict(n=n, a=abc[:, 0].copy(), b=abc[:, 1].copy(),
                c=abc[:, 2].copy(), e=np.zeros(8 * n, np.uint16),
                w=np.zeros(8 * n, np.uint16), s=np.zeros(8 * n, np.uint16))
    want = {k: (v.copy() if isinstance(v, np.ndarray) else v)
            for k, v in args.items()}
    p.interpret(**want)
    x = rng.integers(0, 65536, 200, dtype=np.uint16)
    x[:4] = [65535, 32768, 32767, 0]
    avls = (1, 7, 8, 9, 16, 17, 31, 32, 33, 200)
    for target, vlmax in (("riscv64", 4), ("riscv64-vlen256", 8)):
        need_target(target)
        prog = CrossProgram([p, q], target, cflags="-std=c11 -Werror",
                            stem="rvv_u16")
        calls = [(q, dict(m=200, avl=a, x=x.copy(),
                          y=np.zeros(200, np.uint16))) for a in avls]
        prog.run_many(([(p, args)] if vlmax == 4 else []) + calls)
        for a, (_, got) in zip(avls, calls):
            k = min(a, 2 * vlmax)
            y = np.zeros(200, np.uint16)
            y[:k] = (2 * x[:k].astype(np.int64)) % 65536
            assert np.array_equal(got["y"], y), (target, a)
            st = ConfigState()
            st[rvv.VL.vlmax] = vlmax
            mine = np.zeros(200, np.uint16)
            q.interpret(m=200, avl=a, x=x, y=mine, config_state=st)
            assert np.array_equal(mine, y), (target, a)
        assert prog.get_config(rvv.VL, "vl") == min(200, 2 * vlmax)
    tot = abc.astype(np.int64).sum(axis=1)
    np.testing.assert_array_equal(args["e"], tot // 3)
    np.testing.assert_array_equal(args["w"], (tot % 65536) // 3)
    np.testing.assert_array_equal(
        args["s"], (abc[:, 0].astype(np.int64) + abc[:, 1]) % 65536)
    for k in "ews":
        np.testing.assert_array_equal(args[k], want[k])


def test_rvv_ui16_vector_lengths_are_checked():
    """A length of 8 set for ui16 is more than the 4 f32 lanes every
    machine has: an f32 instruction under it is refused (a length of 4 is
    exact for both); a ui16 length past 8 needs the machine's, and a
    ui16 register buffer has 8 or 4096 lanes."""
    scope = library_scope(rvv)
    with pytest.raises(BoundsError, match="n <= 4 or n <= VL.vlmax"):
        parse_proc_source(
            "def f(x: f32[8] @ DRAM):\n"
            "    rvv_vsetvl_e16m1(8)\n"
            "    r: f32[2048] @ RVV\n"
            "    rvv_vle32_f32(8, r[0:8], x[0:8])\n", scope)
    parse_proc_source(
        "def f(x: f32[4] @ DRAM, u: ui16[4] @ DRAM):\n"
        "    rvv_vsetvl_e16m1(4)\n"
        "    r: f32[4] @ RVV\n"
        "    s: ui16[8] @ RVV\n"
        "    rvv_vle32_f32(4, r[0:4], x[0:4])\n"
        "    rvv_vle16_u16(4, s[0:4], u[0:4])\n", scope)
    with pytest.raises((BoundsError, SchedulingError),
                       match=r"n <= 8|VL.vlmax"):
        parse_proc_source(
            "def f(u: ui16[16] @ DRAM):\n"
            "    rvv_vsetvl_e32m4(16)\n"
            "    s: ui16[4096] @ RVV\n"
            "    rvv_vle16_u16(16, s[0:16], u[0:16])\n", scope)
    # the machine's length needs vsetvlmax first
    with pytest.raises(BoundsError, match="VL.vlmax >= 4"):
        parse_proc_source(VLA16_SRC.replace("rvv_vsetvlmax_e32m1()",
                                            "rvv_vsetvl_e16m1(8)"), scope)
    p = parse_proc_source(
        "def f(u: ui16[4] @ DRAM):\n"
        "    rvv_vsetvl_e16m1(4)\n"
        "    s: ui16[4] @ RVV\n"
        "    rvv_vle16_u16(4, s[0:4], u[0:4])\n", scope)
    with pytest.raises(exo_hl.MemGenError, match="8 .*or 4096"):
        p.c_code_str()
