"""``divide_dim(buffer, dim, factor)``: split one dimension of a buffer.

    t : T[..., n, ...]           t : T[..., n / factor, factor, ...]
    t[..., x, ...]        ~>     t[..., x / factor, x % factor, ...]

For ``0 <= x < n`` with ``n`` divisible by ``factor`` the map
``x -> (x / factor, x % factor)`` is a bijection onto the new index space,
and the row-major layout is unchanged, so every access reads and writes the
same element as before: no proof is needed beyond the constant-size checks.
Uses that cannot be re-expressed are rejected: a slice (``lo:hi``) of the
divided dimension in a window, and the whole buffer passed to a call
(the callee's view of its shape would change).
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.windows import make_window
from ..core_ir.simplify import env_at, simplify_expr, with_loop
from ..core_ir.traversal import walk_stmts
from ..core_ir.visitors import map_accesses
from ..provenance import derive
from . import _common as C

OP = "divide_dim"


def divide_dim(proc, buffer, dim, factor):
    if not C.is_count(factor):
        raise C.scheduling_error(proc, None, f"{OP}: factor must be a "
                                 f"positive int, got {factor!r}")
    buf, n = C.resolve_alloc_dim(proc, buffer, dim, OP, "divided")
    a = buf.node
    ir = proc.ir()
    shape = T.shape(a.type)

    def fail(s, msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    if n % factor:
        raise fail(a, f"dimension {dim} of '{a.name}' has size {n}, which "
                   f"{factor} does not divide")
    *parent, (field, index) = buf.loc
    parent = tuple(parent)
    scope = C.get_list(ir, parent, field)[index + 1:]
    env = env_at(ir, buf.loc)
    si = a.srcinfo

    def c(v):
        return B.const(v, si)

    def split(x):  # simplified later, with the ranges at each access
        return (B.binop("/", x, c(factor), srcinfo=x.srcinfo),
                B.binop("%", x, c(factor), srcinfo=x.srcinfo))

    def new_idx(idx):
        hi, lo = split(idx[dim])
        return idx[:dim] + (hi, lo) + idx[dim + 1:]

    new_t = a.type.update(hi=shape[:dim] + (c(n // factor), c(factor))
                          + shape[dim + 1:])

    for s in walk_stmts(scope):
        if isinstance(s, IR.Call):
            for arg in s.args:
                if isinstance(arg, IR.Read) and arg.name == a.name \
                        and not arg.idx:
                    raise fail(s, f"'{a.name}' is passed whole to "
                               f"'{s.f.name}'; dividing a dimension would "
                               f"change the callee's view of it")

    def write(n_):
        return n_.update(idx=new_idx(n_.idx))

    def read(n_):
        return n_.update(idx=new_idx(n_.idx)) if n_.idx else None

    def window(n_):
        w = n_.idx[dim]
        if isinstance(w, IR.Interval):
            raise _Reject(n_)
        hi, lo = split(w.pt)
        acc = n_.idx[:dim] + (IR.Point(hi, srcinfo=w.srcinfo),
                              IR.Point(lo, srcinfo=w.srcinfo)) \
            + n_.idx[dim + 1:]
        return make_window(a.name, new_t, acc, n_.srcinfo)

    def stride(n_):
        # the old dimension's stride is that of the new inner one
        return n_.update(dim=n_.dim + 1) if n_.dim >= dim else None

    out = []
    for s in scope:
        try:
            out.append(map_accesses(s, a.name, write=write, read=read,
                                    window=window, stride=stride))
        except _Reject:
            bad = next((x for x in walk_stmts((s, )) if _slices(x, a.name,
                                                                 dim)), s)
            raise fail(bad, f"a window takes a slice of dimension {dim} of "
                       f"'{a.name}', which cannot be divided") from None
    out = simplify_accesses(tuple(out), env, a.name)
    new_ir = C.replace_block_at(ir, parent, field, index,
                                index + 1 + len(scope),
                                (a.update(type=new_t), ) + out)
    return derive(proc, new_ir, OP)


def simplify_accesses(stmts, env, name):
    """Normalize the index expressions of accesses to ``name`` only, each
    with the loop ranges known where it occurs."""
    def fix(e, env):
        def read(n):
            if not n.idx:
                return None
            return n.update(idx=tuple(simplify_expr(i, env) for i in n.idx))

        def window(n):
            acc = tuple((w.update(pt=simplify_expr(w.pt, env))
                         if isinstance(w, IR.Point) else
                         w.update(lo=simplify_expr(w.lo, env),
                                  hi=simplify_expr(w.hi, env)))
                        for w in n.idx)
            return n.update(idx=acc, type=n.type.update(idx=acc))
        return map_accesses(e, name, read=read, window=window)

    out = []
    for s in stmts:
        if isinstance(s, IR.For):
            s = s.update(body=simplify_accesses(
                s.body, with_loop(env, s.iter, s.lo, s.hi), name))
        elif isinstance(s, IR.If):
            s = s.update(body=simplify_accesses(s.body, env, name),
                         orelse=simplify_accesses(s.orelse, env, name))
        else:
            if isinstance(s, (IR.Assign, IR.Reduce)) and s.name == name:
                s = s.update(idx=tuple(simplify_expr(i, env) for i in s.idx))
            s = fix(s, env)
        out.append(s)
    return tuple(out)


class _Reject(Exception):
    pass


def _slices(s, name, dim):
    """Does statement ``s`` itself hold a window slicing ``name`` at dim?"""
    exprs = []
    if isinstance(s, IR.WindowStmt):
        exprs = [s.rhs]
    elif isinstance(s, IR.Call):
        exprs = list(s.args)
    return any(isinstance(e, IR.WindowExpr) and e.name == name
               and isinstance(e.idx[dim], IR.Interval) for e in exprs)
