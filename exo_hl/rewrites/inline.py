"""``inline(call)``: replace a call site by the callee's body.

The callee's parameters are mapped onto the caller's arguments:
- control parameters are substituted by the argument expressions (also inside
  the size expressions of types);
- data-scalar parameters are renamed to the caller's scalar;
- buffer/window parameters are renamed to the caller's buffer, and when the
  argument is a window ``A[r, 0:n]`` every access is composed with it
  (``x[i]`` becomes ``A[r, 0 + i]``); ``stride(x, d)`` becomes the stride of
  the underlying dimension of the caller's buffer.
Symbols bound in the body get fresh copies (symbols are unique per procedure).
The callee's preconditions are dropped: they were proven at the call.
Inlining is a pure substitution of the call's meaning, safe as long as every
substituted expression keeps its value: the call evaluates its arguments
once, the inlined body at every use, so arguments (control values, window
indices) may not read a config field that the callee may write.

New statements keep the *callee's* srcinfo: that is the source line the code
really comes from, and what a reader of an error message wants to see.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir.nodes import IR
from ..core_ir.visitors import Mutator
from ..core_ir.windows import make_window
from ..core_ir.traversal import fresh_copy, map_types_in_node, walk_stmts
from ..core_ir import simplify as S
from ..core_ir import types as T
from ..provenance import derive
from . import _common as C
from ._build import retype_window_reads


def inline(proc, call):
    path, stmt = C.resolve_stmt(proc, call, "inline")
    if not isinstance(stmt, IR.Call):
        raise C.scheduling_error(
            proc, stmt, "inline: expected a call statement")
    # the call evaluates its arguments once; inlined, they are re-evaluated
    # at every use inside the body
    C.check_moved(proc, "inline", [C.Moved(
        "call arguments", stmt, stmt.args, stmt.f.body,
        "the call's arguments",
        f"'{stmt.f.name}'")])
    try:
        new_body = inline_call(stmt)
    except _InlineError as e:
        raise C.scheduling_error(
            proc, stmt, f"inline: cannot inline: {e}") from None
    # normalize the composed indices (``0 + i`` -> ``i``, ``1 + i`` -> ``i + 1``)
    new_body = S.simplify_stmts(new_body, S.env_at(proc.ir(), path))
    new_ir = C.replace_stmts_at(proc.ir(), path, new_body)
    return derive(proc, new_ir, "inline",
                  forward=C.forward_replace_by_new(path, len(new_body)))


class _InlineError(Exception):
    pass


# ---------------------------------------------------------------------------
# the IR core: a call statement -> the statements that replace it

def inline_call(call):
    """The callee body with parameters bound to the call's arguments."""
    f = call.f
    ctrl = {}      # param sym -> control expression
    bufs = {}      # param sym -> (caller sym, access tuple or None, caller type)
    for fa, arg in zip(f.args, call.args):
        if T.is_control(fa.type):
            ctrl[fa.name] = arg
        elif isinstance(arg, IR.WindowExpr):
            bufs[fa.name] = (arg.name, arg.idx, arg.type.src_type)
        elif isinstance(arg, IR.Read) and not arg.idx:
            bufs[fa.name] = (arg.name, None, arg.type)
        else:
            raise _InlineError(f"unsupported argument for '{fa.name}'")

    body = fresh_copy(f.body)
    body = tuple(_rebind(s, ctrl, bufs) for s in body)
    body = _retype_window_names(body)
    return body or (IR.Pass(srcinfo=call.srcinfo), )


def _retype_window_names(body):
    """Whole reads of a window name carry the window's type, which mentioned
    the callee's parameters; give them the rebound window statement's type."""
    wtypes = {s.name: s.rhs.type for s in walk_stmts(body)
              if isinstance(s, IR.WindowStmt)}
    return retype_window_reads(body, wtypes) if wtypes else body


def _compose(access, idx):
    """Indices into the caller's buffer for point indices ``idx`` of a window
    ``access`` (a tuple of Interval/Point), or ``idx`` itself if no window."""
    if access is None:
        return tuple(idx)
    it = iter(idx)
    out = []
    for w in access:
        if isinstance(w, IR.Point):
            out.append(w.pt)
        else:
            i = next(it)
            out.append(_add(w.lo, i))
    return tuple(out)


def _compose_window(access, widx):
    """A window access ``widx`` of the parameter, relative to the caller's."""
    if access is None:
        return tuple(widx)
    it = iter(widx)
    out = []
    for w in access:
        if isinstance(w, IR.Point):
            out.append(w)
            continue
        inner = next(it)
        if isinstance(inner, IR.Point):
            out.append(inner.update(pt=_add(w.lo, inner.pt)))
        else:
            out.append(inner.update(lo=_add(w.lo, inner.lo),
                                    hi=_add(w.lo, inner.hi)))
    return tuple(out)


def _add(a, b):
    if isinstance(a, IR.Const) and a.val == 0:
        return b
    if isinstance(b, IR.Const) and b.val == 0:
        return a
    return B.add(a, b, b.srcinfo)


def _rebind(stmt, ctrl, bufs):
    """Substitute control params and redirect buffer params in one stmt."""

    def ctrl_only(n):
        if isinstance(n, IR.Read) and n.name in ctrl and not n.idx:
            return ctrl[n.name]
        return None

    # types of allocations and window expressions mention control params
    stmt = map_types_in_node(stmt, ctrl_only) if ctrl else stmt
    return _Rebind(ctrl, bufs).mutate(stmt)


class _Rebind(Mutator):
    """The callee's control parameters become the caller's values
    (``ctrl``: Sym -> expr); its buffer parameters the caller's buffers
    (``bufs``: Sym -> (caller Sym, window access or None, caller type))."""

    def __init__(self, ctrl, bufs):
        self.ctrl, self.bufs = ctrl, bufs

    def elem_type(self, sym, old):
        bt = T.basetype(self.bufs[sym][2])
        return bt if bt in T.DATA_TYPES else old

    def mutate_Read(self, n):
        if n.name in self.ctrl and not n.idx:
            return self.ctrl[n.name]
        if n.name not in self.bufs:
            return None
        sym, acc, btype = self.bufs[n.name]
        if not n.idx and T.is_tensor_or_window(n.type):
            # the whole parameter passed on (to a call)
            if acc is None:
                return n.update(name=sym, type=btype)
            full = tuple(IR.Interval(B.const(0, n.srcinfo), h,
                                     srcinfo=n.srcinfo)
                         for h in T.shape(n.type))
            return make_window(sym, btype, _compose_window(acc, full),
                               n.srcinfo)
        return n.update(name=sym, idx=_compose(acc, n.idx),
                        type=self.elem_type(n.name, n.type))

    def mutate_WindowExpr(self, n):
        if n.name not in self.bufs:
            return None
        sym, acc, btype = self.bufs[n.name]
        return make_window(sym, btype, _compose_window(acc, n.idx),
                           n.srcinfo)

    def mutate_StrideExpr(self, n):
        if n.name not in self.bufs:
            return None
        sym, acc, _ = self.bufs[n.name]
        dim = n.dim
        if acc is not None:
            dims = [d for d, w in enumerate(acc)
                    if isinstance(w, IR.Interval)]
            dim = dims[n.dim]
        return n.update(name=sym, dim=dim)

    def mutate_Assign(self, n):
        if n.name not in self.bufs:
            return None
        sym, acc, _ = self.bufs[n.name]
        return n.update(name=sym, idx=_compose(acc, n.idx),
                        type=self.elem_type(n.name, n.type))

    mutate_Reduce = mutate_Assign
