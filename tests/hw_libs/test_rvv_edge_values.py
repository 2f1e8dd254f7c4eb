"""Every RVV instruction against its body on edge values, under
qemu-riscv64 at VLEN 128 and 256 (the same code: vl <= 4 is exact on
every RVV machine), and the vector length as checked config state.

Wrappers as in test_neon_edge_values.py, with the length ``n`` of each
instruction set first by ``rvv_vsetvl_e32m1(n)`` (n = 1..4; 5 is
refused). All wrappers run in one qemu process per VLEN. The lengths of
the machine (``rvv_vsetvlmax_e32m1``, ``rvv_vsetvl_min_e32m1``) at VLEN
128, 256 and 512, one executable, in their own test.
"""
from __future__ import annotations

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


def wrapper(instr, n):
    args, body, call, ins, outs = [], [f"    rvv_vsetvl_e32m1({n})"], [], \
        [], []
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
        k = dims[0]
        args += [f"x_{nm}: f32[{k}] @ DRAM", f"y_{nm}: f32[{k}] @ DRAM"]
        ins.append((f"x_{nm}", k))
        if a.mem is rvv.RVV:
            body += [f"    r_{nm}: f32[4] @ RVV",
                     f"    rvv_vle32_f32({n}, r_{nm}[0:{n}], x_{nm}[0:{n}])"]
            call.append(f"r_{nm}[0:{n}]")
            outs.append((f"y_{nm}", k, f"    rvv_vse32_f32({n}, "
                         f"y_{nm}[0:{n}], r_{nm}[0:{n}])"))
        else:
            call.append(f"x_{nm}[0:{k}]")
            outs.append((f"y_{nm}", k, f"    for i in seq(0, {k}):\n"
                         f"        y_{nm}[i] = x_{nm}[i]"))
    if instr is not rvv.rvv_vsetvl_e32m1:
        body.append(f"    {instr.name()}({', '.join(call)})")
    body += [o[2] for o in outs]
    if not args:
        args = ["z: f32[1] @ DRAM"]
    src = (f"def w_{instr.name()}_n{n}({', '.join(args)}):\n"
           + "\n".join(body) + "\n")
    return src, ins, [o[:2] for o in outs]


#: the vector lengths of any machine: tested by
#: test_machine_vector_length_under_qemu
VLA_SETS = (rvv.rvv_vsetvlmax_e32m1, rvv.rvv_vsetvl_min_e32m1)


def build():
    scope = library_scope(rvv)
    made = []
    for instr in rvv.INSTRS:
        if instr in VLA_SETS:
            continue
        for n in (1, 2, 3, 4, 5):
            src, ins, outs = wrapper(instr, n)
            try:
                p = parse_proc_source(src, scope)
            except (SchedulingError, ExoTypeError, BoundsError) as e:
                assert n == 5 and "rvv_" in str(e), (src, e)
                continue
            assert n <= 4, src
            made.append((instr, n, p, ins, outs))
    return made


def _inputs(instr, ins, rng, trial):
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
                args[nm] = np.zeros(m, np.float32)
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


def test_machine_vector_length_under_qemu():
    """``rvv_vsetvlmax_e32m1`` reads VLMAX (VLEN / 32) and
    ``rvv_vsetvl_min_e32m1(avl)`` sets ``min(avl, VLMAX)``: one executable
    at VLEN 128, 256 and 512 loads VLMAX floats, then doubles and stores
    the first ``min(avl, VLMAX)``; ``interpret()`` with ``VL.vlmax`` at
    the machine's value computes the same."""
    from exo_hl.core_ir.interpret import ConfigState
    p = parse_proc_source(VLA_SRC, library_scope(rvv))
    m = 40
    x = np.arange(1, 2049, dtype=np.float32)
    exes = set()
    for target, vlmax in (("riscv64", 4), ("riscv64-vlen256", 8),
                          ("riscv64-vlen512", 16)):
        need_target(target)
        prog = CrossProgram([p], target, cflags="-std=c11 -Werror",
                            stem="rvv_vla")
        exes.add(prog.executable)
        avls = (1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 40)
        calls = [(p, dict(m=m, avl=a, x=x.copy(),
                          y=np.zeros(m, np.float32))) for a in avls]
        prog.run_many(calls)
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
        assert prog.get_config(rvv.VL, "vl") == min(avls[-1], vlmax)
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
    with pytest.raises(BoundsError, match="VL.vl == n"):
        parse_proc_source(VLA_SRC.replace(
            "rvv_vse32_f32(VL.vl, y[0:VL.vl], d[0:VL.vl])",
            "rvv_vse32_f32(avl, y[0:avl], d[0:avl])"), scope)
