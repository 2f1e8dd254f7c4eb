"""Random, type-preserving edits of procedure IR (for testing the checks
that every rewrite result goes through, independently of the rewrites'
own safety conditions): integer constants in bounds, indices, sizes,
windows and config values moved a little; adjacent statements swapped;
statements deleted or duplicated (with fresh names); loop modes flipped;
allocations moved to another memory; the first precondition changed;
an integer control expression respelled (``respell``: its sums and
products with their operands swapped, which is the same value, or that
spelling added to it or shifted by one, which is not: what a comparison
of expressions up to their value must tell apart)."""
from __future__ import annotations

from exo_hl.core_ir import blockinfo
from exo_hl.core_ir import types as T
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.traversal import fresh_copy, map_node
from exo_hl.core_ir.windows import make_window
from exo_hl.rewrites._common import replace_block_at


def _all_stmts(ir):
    out = []

    def go(stmts, prefix, field):
        for i, s in enumerate(stmts):
            path = prefix + ((field, i), )
            out.append((path, s))
            if isinstance(s, (IR.For, IR.If)):
                go(s.body, path, "body")
            if isinstance(s, IR.If):
                go(s.orelse, path, "orelse")
    go(ir.body, (), "body")
    return out


_OWN = {IR.For: ("lo", "hi"), IR.If: ("cond", ), IR.Assign: ("idx", "rhs"),
        IR.Reduce: ("idx", "rhs"), IR.WriteConfig: ("rhs", ),
        IR.Call: ("args", ), IR.WindowStmt: ("rhs", )}


def _rebuilt(s, fields, change):
    """``s`` with ``change`` mapped over the expressions of ``fields`` (a
    window statement's type kept consistent with its new indices)."""
    upd = {}
    for f in fields:
        v = getattr(s, f)
        if isinstance(v, tuple):
            upd[f] = tuple(map_node(x, change) for x in v)
        else:
            upd[f] = map_node(v, change)
    if isinstance(s, IR.WindowStmt):   # keep the window's type consistent
        r = upd["rhs"]
        upd["rhs"] = make_window(r.name, r.type.src_type, r.idx, r.srcinfo)
    return s.update(**upd)


def _int_consts_changed(s, rng):
    """``s`` with one integer constant of its own expressions (or of its
    allocation size) moved by a small amount, or None."""
    if isinstance(s, IR.Alloc):
        if not isinstance(s.type, IR.Tensor):
            return None
        hi = list(s.type.hi)
        k = rng.randrange(len(hi))
        if not isinstance(hi[k], IR.Const):
            return None
        hi[k] = hi[k].update(val=max(1, hi[k].val + rng.choice([-2, -1, 1])))
        return s.update(type=s.type.update(hi=tuple(hi)))
    fields = _OWN.get(type(s))
    if not fields:
        return None
    count = [0]

    def is_int(n):
        return (isinstance(n, IR.Const) and type(n.val) is int
                and n.type in (IR.Int, IR.Index, IR.Size))

    def counter(n):
        if is_int(n):
            count[0] += 1
        return None
    for f in fields:
        v = getattr(s, f)
        for x in (v if isinstance(v, tuple) else (v, )):
            map_node(x, counter)
    if not count[0]:
        return None
    target = rng.randrange(count[0])
    seen = [0]
    delta = rng.choice([-2, -1, 1, 2, 3])

    def change(n):
        if is_int(n):
            seen[0] += 1
            if seen[0] - 1 == target:
                return n.update(val=n.val + delta)
        return None
    return _rebuilt(s, fields, change)


def _swapped(e):
    """``e`` with the operands of every ``+`` and ``*`` swapped (the same
    value, a different spelling and term order)."""
    if isinstance(e, IR.BinOp):
        lhs, rhs = _swapped(e.lhs), _swapped(e.rhs)
        if e.op in ("+", "*"):
            lhs, rhs = rhs, lhs
        return e.update(lhs=lhs, rhs=rhs)
    if isinstance(e, IR.USub):
        return e.update(arg=_swapped(e.arg))
    return e


def respell(s, rng):
    """``s`` with one integer control expression of its own (a binary
    operation: an index, a bound, a condition's operand, a call argument)
    respelled, or None: swapped operands (the same value), the swapped
    spelling added to the expression (twice the value: its atoms each
    appear twice, under two spellings) or shifted by one."""
    fields = _OWN.get(type(s))
    if not fields:
        return None
    found = []

    def collect(n):
        if isinstance(n, IR.BinOp) and T.is_int_control(n.type):
            found.append(n)
        return None
    for f in fields:
        v = getattr(s, f)
        for x in (v if isinstance(v, tuple) else (v, )):
            map_node(x, collect)
    if not found:
        return None
    target = rng.choice(found)
    sw = _swapped(target)
    how = rng.choice(["swap", "swap", "twice", "shift"])
    if how == "swap":
        new = sw
    elif how == "twice":
        new = IR.BinOp("+", target, sw, type=target.type,
                       srcinfo=target.srcinfo)
    else:
        one = IR.Const(1, type=IR.Int, srcinfo=target.srcinfo)
        new = IR.BinOp("+", sw, one, type=target.type, srcinfo=target.srcinfo)

    def change(n):
        return new if n is target else None
    return _rebuilt(s, fields, change)


def respelled(ir, rng):
    """``ir`` with one statement ``respell``-ed, or None."""
    path, s = rng.choice(_all_stmts(ir))
    *parent, (field, i) = path
    ns = respell(s, rng)
    return None if ns is None else replace_block_at(
        ir, tuple(parent), field, i, i + 1, (ns, ))


def mutate(ir, rng, mems):
    """A random edit of ``ir`` (or None if the drawn one does not apply);
    ``mems``: memories an allocation may be moved between."""
    stmts = _all_stmts(ir)
    changers = [(p, s) for p, s in stmts if blockinfo.stmt_info(s).sc]
    # state changers (config writes, allocations, windows) are what the
    # context of other statements is made of: edit them often
    path, s = rng.choice(changers if changers and rng.random() < 0.4
                         else stmts)
    *parent, (field, i) = path
    parent = tuple(parent)
    kind = rng.choice(["const"] * 5 + ["swap", "delete", "dup", "mode",
                                       "mem", "pred", "respell"])
    if kind in ("const", "respell"):
        ns = (_int_consts_changed if kind == "const" else respell)(s, rng)
        return None if ns is None else replace_block_at(
            ir, parent, field, i, i + 1, (ns, ))
    if kind == "swap":
        blk = _block(ir, parent, field)
        if i + 1 >= len(blk):
            return None
        return replace_block_at(ir, parent, field, i, i + 2,
                                (blk[i + 1], blk[i]))
    if kind == "delete":
        blk = _block(ir, parent, field)
        rest = () if len(blk) > 1 else (IR.Pass(srcinfo=s.srcinfo), )
        return replace_block_at(ir, parent, field, i, i + 1, rest)
    if kind == "dup":
        return replace_block_at(ir, parent, field, i, i + 1,
                                (s, ) + fresh_copy((s, )))
    if kind == "mode":
        if not isinstance(s, IR.For):
            return None
        mode = IR.Seq if s.mode is IR.Par else IR.Par
        return replace_block_at(ir, parent, field, i, i + 1,
                                (s.update(mode=mode), ))
    if kind == "mem":
        if not isinstance(s, IR.Alloc):
            return None
        others = [m for m in mems if m is not s.mem]
        if not others:
            return None
        mem = rng.choice(others)
        return replace_block_at(ir, parent, field, i, i + 1,
                                (s.update(mem=mem), ))
    # pred: move the constant of the first precondition
    if not ir.preds or not isinstance(ir.preds[0].rhs, IR.Const):
        return None
    p = ir.preds[0]
    return ir.update(preds=(p.update(rhs=p.rhs.update(
        val=max(1, p.rhs.val + rng.choice([-2, -1, 1])))), ) + ir.preds[1:])


def _block(ir, parent, field):
    node = ir
    for f, k in parent:
        node = getattr(node, f)[k]
    return getattr(node, field)
