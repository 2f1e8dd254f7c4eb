"""``merge_writes(block)``: two consecutive writes of one location become one.

    x[i] = a;  x[i] += b    ~>   x[i] = a + b
    x[i] += a; x[i] += b    ~>   x[i] += a + b
    x[i] = a;  x[i] = b     ~>   x[i] = b        (and ``+=`` then ``=``)

Checked:
- the two statements write the same location: their indices are proven
  equal (nothing runs between them that could change a control value);
- when the second one is a ``+=``: ``b`` does not read what the first one
  writes (the effects of ``tmp = b`` and the first write commute), and the
  value is unchanged by merging: ``a`` and ``b`` have ``x``'s own data
  type (any integer width when ``x`` is an integer: stores wrap, so the
  sums agree modulo its width; ``bf16`` is a floating-point type like
  the others) or are literals it holds exactly (the sum then needs no
  second precision, which C would refuse), and after ``x[i] = a`` the location
  holds ``a`` for ``x[i] + b`` exactly as ``a + b`` uses it
  (``_precision.holder_problem``, the rule of ``inline_assign``: a literal
  is computed in ``x``'s type first, in the sum's type after merging).
  ``+=; +=`` re-associates the sum, as reordering reductions does
  (reductions are treated as commutative and associative);
- when the second one is ``=``: the first write is dead (its effect is
  shadowed by the second, which does not read it).
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.precision_mix import INT_BITS
from ..core_ir.nodes import IR
from ..core_ir.syms import Sym
from ..effects import api as EA
from . import _common as C
from ._expr_at import expr_text
from ..frontend.typecheck import data_join
from ._precision import _holds_exactly, holder_problem

OP = "merge_writes"


def _fits(e, t) -> bool:
    """``e`` has the value it would have after being stored into ``t``.

    Only an integer location may take operands of other widths (integer
    stores wrap, so ``x += a; x += b`` and ``x += a + b`` agree modulo
    its width); any other location, ``bf16`` included, takes only its own
    type: a ``bf16`` location rounds ``x + a`` before ``b`` is added, so
    ``i32`` operands summed first round differently (257 + 1 into a
    ``bf16`` 0: 256 stepwise, 258 merged)."""
    if isinstance(e, IR.Const) and isinstance(e.val, (int, float)) \
            and not isinstance(e.val, bool):
        return _holds_exactly(t, float(e.val))
    if t in INT_BITS:
        return e.type in INT_BITS
    return e.type == t


def merge_writes(proc, block):
    blk = C.resolve_block(proc, block, OP)
    ir = proc.ir()
    if len(blk.stmts) != 2:
        raise C.scheduling_error(proc, blk.stmts[0], f"{OP}: expected a block "
                                 f"of exactly two statements")
    s1, s2 = blk.stmts
    p1 = blk.paths()[0]

    def fail(msg, st=s2):
        return C.scheduling_error(proc, st, f"{OP}: {msg}")

    for st in (s1, s2):
        if not isinstance(st, (IR.Assign, IR.Reduce)):
            raise fail("both statements must be assignments or reductions",
                       st)
    if s1.name != s2.name or len(s1.idx) != len(s2.idx):
        raise fail(f"the statements write different buffers "
                   f"('{s1.name.name}', '{s2.name.name}')")
    if s1.idx:
        pred = None
        for a, b in zip(s1.idx, s2.idx):
            eq = IR.BinOp("==", a, b, type=IR.Bool)
            pred = eq if pred is None else IR.BinOp("and", pred, eq,
                                                    type=IR.Bool)
        if not EA.prove_at(ir, p1, pred):
            raise fail("cannot prove that both statements write the same "
                       "location")
    ctx = EA.context(ir, p1)
    if isinstance(s2, IR.Assign):
        r = EA.shadows((s1, ), (s2, ), ctx)
        if not r:
            raise fail(f"the first write is not dead: the second statement "
                       f"may read it ({r.reason})")
        new = s2
    else:
        probe = IR.Assign(Sym("tmp"), s2.rhs.type, (), s2.rhs,
                          srcinfo=s2.srcinfo)
        r = EA.commutes((s1, ), (probe, ), ctx)
        if not r:
            raise fail(f"'{expr_text(s2.rhs)}' may read the location the "
                       f"first statement writes ({r.reason})")
        t = T.basetype(s1.type)
        rhs = IR.BinOp("+", s1.rhs, s2.rhs,
                       type=data_join(s1.rhs.type, s2.rhs.type),
                       srcinfo=s2.rhs.srcinfo)
        new = s1.update(rhs=rhs)
        for e in (s1.rhs, s2.rhs):
            if not _fits(e, t):
                raise fail(f"'{expr_text(e)}' ({T.type_name(e.type)}) would "
                           f"not keep its value through the {T.type_name(t)} "
                           f"location, so merging may round differently")
        if isinstance(s1, IR.Assign):
            # x = a; x += b is x = a; x = x + b: the location x holds a for
            # the second statement, exactly the shared holder rule
            why = holder_problem(s1.rhs, t, (new, ))
            if why:
                raise fail(f"'{expr_text(s1.rhs)}' would not keep its value "
                           f"through the {T.type_name(t)} location, so "
                           f"merging may round differently: {why}")
    new_ir = C.replace_block_at(ir, blk.parent, blk.field, blk.lo, blk.hi,
                                (new, ))
    return proc._derive(new_ir, OP, forward=C.forward_replace_block(
        blk.parent, blk.field, blk.lo, blk.hi, 1))
