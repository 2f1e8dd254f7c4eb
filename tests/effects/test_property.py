"""Property: whenever a check answers 'safe', the interpreter agrees.

Random small statements over two buffers and one config field are built as
IR; for each pair the checks are asked, and every 'safe' answer is validated
by running both programs on random inputs (integer-valued floats, so
reordered reductions are exact) and comparing buffers and config state.
"""
from __future__ import annotations

import random

import numpy as np

from exo_hl import Procedure, config, index
from exo_hl.core_ir.config import Config
from exo_hl.core_ir.interpret import ConfigState
from exo_hl.core_ir.memory import DRAM
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.syms import Sym
from exo_hl.core_ir.traversal import fresh_copy
from exo_hl.effects import api

SIZE = 12
CFG = Config("PCfg", (("v", IR.Index), ))
A, B = Sym("A"), Sym("B")
NSYM = Sym("N")
TT = IR.Tensor((IR.Const(SIZE, type=IR.Int), ), False, IR.F32)
ARGS = (IR.FnArg(NSYM, IR.Size, None, None),
        IR.FnArg(A, TT, DRAM, None), IR.FnArg(B, TT, DRAM, None))


def c(v):
    return IR.Const(v, type=IR.Int)


def rd(s):
    return IR.Read(s, (), type=IR.Index)


def add(a, b):
    return IR.BinOp("+", a, b, type=IR.Index)


def gen_idx(rng, it):
    if it is not None and rng.random() < 0.7:
        return add(rd(it), c(rng.randrange(0, SIZE - 4)))
    if rng.random() < 0.15:
        return IR.ReadConfig(CFG, "v", type=IR.Index)
    return c(rng.randrange(0, SIZE))


def gen_leaf(rng, it):
    r = rng.random()
    if r < 0.12:
        return IR.WriteConfig(CFG, "v", c(rng.randrange(0, 4)))
    buf = rng.choice((A, B))
    idx = (gen_idx(rng, it), )
    if rng.random() < 0.5:
        rhs = IR.Const(float(rng.randrange(1, 5)), type=IR.Num)
    else:
        rhs = IR.Read(rng.choice((A, B)), (gen_idx(rng, it), ), type=IR.F32)
    kind = IR.Reduce if rng.random() < 0.4 else IR.Assign
    return kind(buf, IR.F32, idx, rhs)


def gen_stmt(rng, depth=0):
    r = rng.random()
    if depth == 0 and r < 0.45:
        it = Sym("i")
        lo = rng.randrange(0, 2)
        hi = rng.randrange(lo, 5)
        body = gen_leaf(rng, it)
        if rng.random() < 0.3:
            body = IR.If(IR.BinOp("<", rd(it), c(rng.randrange(0, 4)),
                                  type=IR.Bool), (body, ), ())
        return IR.For(it, c(lo), c(hi), (body, ), IR.Seq)
    if depth == 0 and r < 0.55:
        return IR.If(IR.BinOp("<", rd(NSYM), c(rng.randrange(1, 4)),
                              type=IR.Bool), (gen_leaf(rng, None), ), ())
    return gen_leaf(rng, None)


def mkproc(body):
    return Procedure(IR.Proc("p", ARGS, (), tuple(body), None, None))


def run(p, inputs):
    n, a, b, v = inputs
    a, b = a.copy(), b.copy()
    st = ConfigState()
    st[(CFG, "v")] = v
    p.interpret(N=n, A=a, B=b, config_state=st)
    return a, b, st.get((CFG, "v"), v)


def same(r1, r2):
    return (np.array_equal(r1[0], r2[0], equal_nan=True)
            and np.array_equal(r1[1], r2[1], equal_nan=True)
            and r1[2] == r2[2])


def random_inputs(rng):
    return (rng.randrange(1, 5),
            np.array([float(rng.randrange(-3, 4)) for _ in range(SIZE)],
                     dtype=np.float32),
            np.array([float(rng.randrange(-3, 4)) for _ in range(SIZE)],
                     dtype=np.float32),
            rng.randrange(0, 4))


def test_safe_answers_agree_with_interpreter():
    rng = random.Random(1234)
    # a fixed number of cases (not a time budget): the same cases run on a
    # loaded machine as on an idle one
    cases = safe_comm = safe_shad = safe_par = safe_fis = 0
    while cases < 200:
        s1, s2 = gen_stmt(rng), gen_stmt(rng)
        s2 = fresh_copy((s2, ))[0]
        p12 = mkproc((s1, s2))
        cases += 1
        ctx = api.context(p12.ir(), (0, ))
        inputs = [random_inputs(rng) for _ in range(3)]
        if api.commutes(s1, s2, ctx):
            safe_comm += 1
            p21 = mkproc((s2, s1))
            for inp in inputs:
                assert same(run(p12, inp), run(p21, inp)), (str(p12), str(p21))
        if api.shadows(s1, s2, ctx):
            safe_shad += 1
            p2 = mkproc((s2, ))
            for inp in inputs:
                assert same(run(p12, inp), run(p2, inp)), str(p12)
        # loops: parallel = iterations in any order; check the reversed order
        if isinstance(s1, IR.For):
            lp = mkproc((s1, ))
            if api.loop_is_parallel(lp.ir(), (0, )):
                safe_par += 1
                it = s1.iter
                rev = s1.update(body=tuple(
                    _subst_iter(s, it, s1.lo, s1.hi) for s in s1.body))
                pr = mkproc((rev, ))
                for inp in inputs:
                    assert same(run(lp, inp), run(pr, inp)), str(lp)
            # fission of a two-statement body
            leaf = gen_leaf(rng, s1.iter)
            two = s1.update(body=s1.body + (leaf, ))
            pf = mkproc((two, ))
            if api.can_fission(pf.ir(), (0, ), 1):
                safe_fis += 1
                l1 = s1
                l2 = fresh_copy((s1.update(body=(leaf, )), ))[0]
                pff = mkproc((l1, l2))
                for inp in inputs:
                    assert same(run(pf, inp), run(pff, inp)), str(pf)
    print(f"\nproperty test: {cases} random cases; safe answers validated: "
          f"commutes {safe_comm}, shadows {safe_shad}, parallel {safe_par}, "
          f"fission {safe_fis}")
    assert cases >= 100 and safe_comm >= 20 and safe_shad >= 3


def _subst_iter(s, it, lo, hi):
    """Run iterations in reverse: i -> lo + hi - 1 - i."""
    from exo_hl.core_ir.traversal import subst
    rev = IR.BinOp("-", IR.BinOp("+", lo, hi, type=IR.Index),
                   add(rd(it), c(1)), type=IR.Index)
    return subst(s, {it: rev})
