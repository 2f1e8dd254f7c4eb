"""Print IR as Python-like source that ``@proc`` parses back (docs/api.md §5).

The printed text is what every scheduling test compares against, so it must
be stable: minimal parentheses from Python's operator precedence, symbols by
their spelling (renamed ``x_1``, ``x_2``... only where two *different*
symbols of one spelling would both be visible, so the text reparses to the
same structure), and long lines broken at 80 columns between arguments or
operands (``line_break.py``), never inside a subscript.

``alpha_equal`` (structural equality modulo a consistent renaming of
symbols) lives here too: it is what "reparses to the same procedure" means.
"""
from __future__ import annotations

import json
from typing import Dict, Optional

from .line_break import COLUMN_LIMIT, break_line
from .nodes import IR, Node, same_constant
from . import operators as OPS
from .operators import loop_kind_name
from .syms import Sym
from .types import DATA_TYPES, TYPE_NAMES, is_control

_DATA_TYPE_SET = frozenset(DATA_TYPES)

# Python operator precedence (higher binds tighter): core_ir.operators
_PREC_NOT, _PREC_CMP = OPS.PREC_NOT, OPS.PREC_CMP
_PREC_UNARY, _PREC_ATOM = OPS.PREC_UNARY, OPS.PREC_ATOM
_BINOP_PREC = OPS.PY_PREC


# ----------------------------------------------------------------------------
# small pieces


def mem_name(mem) -> str:
    """The surface name of a Memory class (``DRAM`` when unset)."""
    if mem is None:
        return "DRAM"
    n = getattr(mem, "name", None)
    return n() if callable(n) else mem.__name__


def _str_literal(s: str) -> str:
    # JSON string syntax is a subset of Python's, and reads as "..." text
    return json.dumps(s, ensure_ascii=False)


def _const_str(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        if v in (float("inf"), float("-inf")):
            # a literal beyond every float (1e400) reparses as infinity
            return "1e400" if v > 0 else "-1e400"
        return repr(v)
    return str(v)


class _Namer:
    """Maps symbols to printed spellings.

    ``env`` holds the decided spelling of every symbol bound so far; symbols
    not in it print by their own name (fragments printed for messages).
    A binding is respelled ``x_k`` only if its name is visible bound to a
    different symbol, or names a global the procedure uses; ``avoid`` holds
    every spelling a fresh ``x_k`` must not take.
    """

    def __init__(self, reserved=(), avoid=()):
        self.env: Dict[Sym, str] = {}
        self.reserved = set(reserved)
        self.avoid = set(reserved) | set(avoid)
        # per base name, the least k whose ``name_k`` may still be free
        # (``avoid`` only grows), so respelling n copies of ``t`` is linear
        self.next_k: Dict[str, int] = {}

    def name(self, s: Sym) -> str:
        return self.env.get(s, s.name)

    def bind(self, s: Sym, scope: Dict[str, Sym]) -> str:
        """Decide the spelling of a symbol bound here, given visible names."""
        if s in self.env:
            nm = self.env[s]
        else:
            nm = s.name
            other = scope.get(nm)
            if (other is not None and other is not s) or nm in self.reserved:
                k = self.next_k.get(s.name, 1)
                while f"{s.name}_{k}" in self.avoid:
                    k += 1
                self.next_k[s.name] = k + 1
                nm = f"{s.name}_{k}"
            self.env[s] = nm
            self.avoid.add(nm)
        scope[nm] = s
        return nm


# ----------------------------------------------------------------------------
# expressions


def _expr(e, nm: _Namer) -> tuple:
    """(text, precedence) of an expression."""
    if isinstance(e, IR.Read):
        n = nm.name(e.name)
        if e.idx:
            idx = ", ".join(_expr(i, nm)[0] for i in e.idx)
            return f"{n}[{idx}]", _PREC_ATOM
        return n, _PREC_ATOM
    if isinstance(e, IR.Const):
        v = e.val
        if (isinstance(v, int) and not isinstance(v, bool)
                and e.type in _DATA_TYPE_SET):
            v = float(v)  # a data literal reads (and reparses) as a real
        neg = not isinstance(v, bool) and v < 0
        prec = _PREC_UNARY if neg else _PREC_ATOM
        return _const_str(v), prec
    if isinstance(e, IR.USub):
        a = _wrap(e.arg, nm, _PREC_UNARY)
        if isinstance(e.arg, IR.Const) and not a.startswith("-"):
            # ``-c`` reads back as the literal -c, which saturates where
            # the negation of c does not (``-t`` with ``t: i32 = 1e10``
            # inlined: -2147483647, the literal -1e10 gives -2147483648);
            # ``-(+c)`` reads back as the negation
            a = f"(+{a})"
        return f"-{a}", _PREC_UNARY
    if isinstance(e, IR.Not):
        a = _wrap(e.arg, nm, _PREC_NOT)
        return f"not {a}", _PREC_NOT
    if isinstance(e, IR.BinOp):
        p = _BINOP_PREC[e.op]
        # left-associative; comparisons do not chain in the IR, so a
        # comparison operand that is itself a comparison needs parentheses
        lhs = _wrap(e.lhs, nm, p + 1 if p == _PREC_CMP else p)
        rhs = _wrap(e.rhs, nm, p + 1)
        return f"{lhs} {e.op} {rhs}", p
    if isinstance(e, IR.Extern):
        args = ", ".join(_expr(a, nm)[0] for a in e.args)
        return f"{e.f.name()}({args})", _PREC_ATOM
    if isinstance(e, IR.WindowExpr):
        idx = ", ".join(_w_access(w, nm) for w in e.idx)
        return f"{nm.name(e.name)}[{idx}]", _PREC_ATOM
    if isinstance(e, IR.StrideExpr):
        return f"stride({nm.name(e.name)}, {e.dim})", _PREC_ATOM
    if isinstance(e, IR.ReadConfig):
        return f"{e.config.name()}.{e.field}", _PREC_ATOM
    raise TypeError(f"not an IR expression: {e!r}")


def _wrap(e, nm, min_prec) -> str:
    s, p = _expr(e, nm)
    return f"({s})" if p < min_prec else s


def _w_access(w, nm) -> str:
    if isinstance(w, IR.Interval):
        return f"{_expr(w.lo, nm)[0]}:{_expr(w.hi, nm)[0]}"
    return _expr(w.pt, nm)[0]


def type_to_str(t, nm: Optional[_Namer] = None) -> str:
    """``f32``, ``size``, ``f32[n, 16]``, ``[f32][n]``."""
    nm = nm or _Namer()
    if isinstance(t, IR.WindowType):
        t = t.as_tensor
    if isinstance(t, IR.Tensor):
        base = TYPE_NAMES[t.type]
        dims = ", ".join(_expr(h, nm)[0] for h in t.hi)
        return f"[{base}][{dims}]" if t.is_window else f"{base}[{dims}]"
    return TYPE_NAMES[t]


def expr_to_str(e) -> str:
    """An expression as source text (symbols by their spelling)."""
    return _expr(e, _Namer())[0]


# ----------------------------------------------------------------------------
# statements


def _typed_decl(name: str, t, mem, nm) -> str:
    ts = type_to_str(t, nm)
    if is_control(t):
        return f"{name}: {ts}"
    return f"{name}: {ts} @ {mem_name(mem)}"


def arg_to_str(a) -> str:
    """One procedure argument as the signature prints it (name, type and,
    for data, memory): what a cursor's ``.text()`` shows for an argument."""
    return _typed_decl(a.name.name, a.type, a.mem, _Namer())


def _block(stmts, nm, scope, indent, out):
    if not stmts:
        out.append("    " * indent + "pass")
        return
    for s in stmts:
        _stmt(s, nm, scope, indent, out)


def _stmt(s, nm: _Namer, scope: Dict[str, Sym], indent: int, out: list):
    pad = "    " * indent
    e = lambda x: _expr(x, nm)[0]  # noqa: E731
    if isinstance(s, (IR.Assign, IR.Reduce)):
        lhs = nm.name(s.name)
        if s.idx:
            lhs += f"[{', '.join(e(i) for i in s.idx)}]"
        op = "=" if isinstance(s, IR.Assign) else "+="
        out.append(f"{pad}{lhs} {op} {e(s.rhs)}")
    elif isinstance(s, IR.WriteConfig):
        out.append(f"{pad}{s.config.name()}.{s.field} = {e(s.rhs)}")
    elif isinstance(s, IR.Pass):
        out.append(f"{pad}pass")
    elif isinstance(s, IR.If):
        kw = "if"
        while True:
            out.append(f"{pad}{kw} {e(s.cond)}:")
            _block(s.body, nm, dict(scope), indent + 1, out)
            if len(s.orelse) == 1 and isinstance(s.orelse[0], IR.If):
                s, kw = s.orelse[0], "elif"
                continue
            if s.orelse:
                out.append(f"{pad}else:")
                _block(s.orelse, nm, dict(scope), indent + 1, out)
            break
    elif isinstance(s, IR.For):
        lo, hi = e(s.lo), e(s.hi)
        inner = dict(scope)
        it = nm.bind(s.iter, inner)
        mode = loop_kind_name(s.mode)
        out.append(f"{pad}for {it} in {mode}({lo}, {hi}):")
        _block(s.body, nm, inner, indent + 1, out)
    elif isinstance(s, IR.Alloc):
        ts = type_to_str(s.type, nm)
        n = nm.bind(s.name, scope)
        out.append(f"{pad}{n}: {ts} @ {mem_name(s.mem)}")
    elif isinstance(s, IR.Call):
        args = ", ".join(e(a) for a in s.args)
        out.append(f"{pad}{s.f.name}({args})")
    elif isinstance(s, IR.WindowStmt):
        rhs = e(s.rhs)
        n = nm.bind(s.name, scope)
        out.append(f"{pad}{n} = {rhs}")
    else:
        raise TypeError(f"not an IR statement: {s!r}")


def stmt_to_str(s, indent: int = 0) -> str:
    """A statement (or tuple of statements) as source text, unformatted."""
    out: list = []
    nm = _Namer()
    stmts = s if isinstance(s, (tuple, list)) else (s, )
    for x in stmts:
        _stmt(x, nm, {}, indent, out)
    return "\n".join(out)


# ----------------------------------------------------------------------------
# procedures


def _names_in(p) -> tuple:
    """(names of the non-local things a procedure mentions, which are never
    reused; spellings of all its symbols), in one walk."""
    from .traversal import walk
    glob = {mem_name(a.mem) for a in p.args if a.mem is not None}
    syms = {a.name.name for a in p.args}
    for root in tuple(p.body) + tuple(p.preds):
        for n in walk(root):
            cls = type(n)
            if cls is IR.Read or cls is IR.Assign or cls is IR.Reduce or \
                    cls is IR.WindowExpr or cls is IR.WindowStmt:
                syms.add(n.name.name)
            elif cls is IR.For:
                syms.add(n.iter.name)
                glob.add(loop_kind_name(n.mode))
            elif cls is IR.Alloc:
                syms.add(n.name.name)
                glob.add(mem_name(n.mem))
                if isinstance(n.type, IR.Tensor):
                    for h in n.type.hi:
                        syms |= {x.name.name for x in walk(h)
                                 if type(x) is IR.Read}
            elif cls is IR.Call:
                glob.add(n.f.name)
            elif cls is IR.Extern:
                glob.add(n.f.name())
            elif cls is IR.WriteConfig or cls is IR.ReadConfig:
                glob.add(n.config.name())
            elif cls is IR.StrideExpr:
                syms.add(n.name.name)
                glob.add("stride")
    return glob, syms


def proc_to_raw_str(p) -> str:
    """The procedure's source text, one line per statement (before long
    lines are broken)."""
    reserved, sym_names = _names_in(p)
    nm = _Namer(reserved=reserved, avoid=sym_names)
    scope: Dict[str, Sym] = {}
    # all arguments are visible in every argument's type
    names = [nm.bind(a.name, scope) for a in p.args]
    arg_strs = [_typed_decl(n, a.type, a.mem, nm)
                for n, a in zip(names, p.args)]
    out = []
    if p.instr is not None:
        deco = f"@instr({_str_literal(p.instr.c_template)}"
        if p.instr.c_global:
            deco += f", c_global={_str_literal(p.instr.c_global)}"
        if p.instr.cpu_features:
            feats = ", ".join(_str_literal(f) for f in p.instr.cpu_features)
            deco += f", cpu_features={{{feats}}}"
        out.append(deco + ")")
    out.append(f"def {p.name}({', '.join(arg_strs)}):")
    for pr in p.preds:
        out.append(f"    assert {_expr(pr, nm)[0]}")
    if p.body or not p.preds:
        _block(p.body, nm, scope, 1, out)
    return "\n".join(out) + "\n"


def proc_to_str(p) -> str:
    """``str(Procedure)``: readable source that ``@proc`` accepts again.

    No trailing newline, so ``print(p)`` shows exactly the procedure. Lines
    longer than 80 columns are broken by ``line_break`` (between arguments
    or operands, never inside a subscript).
    """
    lines = proc_to_raw_str(p).rstrip("\n").split("\n")
    return "\n".join(ln if len(ln) <= COLUMN_LIMIT else break_line(ln)
                     for ln in lines)


# ----------------------------------------------------------------------------
# alpha equivalence


def alpha_equal(a, b) -> bool:
    """Structural equality modulo a consistent (bijective) renaming of Syms.

    Source locations are ignored; configs, externs and memories compare by
    identity; callees of calls compare by ``alpha_equal`` on their own.
    """
    return _Alpha().eq(a, b)


class _Alpha:
    def __init__(self):
        self.fwd: Dict[Sym, Sym] = {}
        self.bwd: Dict[Sym, Sym] = {}

    def sym(self, x, y) -> bool:
        fx, by = self.fwd.get(x), self.bwd.get(y)
        if fx is None and by is None:
            self.fwd[x], self.bwd[y] = y, x
            return True
        return fx is y and by is x

    def eq(self, a, b) -> bool:
        if isinstance(a, Sym) or isinstance(b, Sym):
            return isinstance(a, Sym) and isinstance(b, Sym) and self.sym(a, b)
        if isinstance(a, Node) or isinstance(b, Node):
            if type(a) is not type(b):
                return False
            for f in a._fields + a._attributes:
                if f == "srcinfo":
                    continue
                x, y = getattr(a, f), getattr(b, f)
                if isinstance(a, IR.Call) and f == "f":
                    # a callee is compared in its own renaming
                    if not (x is y or alpha_equal(x, y)):
                        return False
                elif not self.eq(x, y):
                    return False
            return True
        if isinstance(a, tuple) or isinstance(b, tuple):
            return (isinstance(a, tuple) and isinstance(b, tuple)
                    and len(a) == len(b)
                    and all(self.eq(x, y) for x, y in zip(a, b)))
        if type(a) is not type(b):
            return False
        if isinstance(a, float):
            return same_constant(a, b)    # -0.0 is not 0.0, a NaN is itself
        if isinstance(a, (int, str, bool)) or a is None:
            return a == b
        return a is b or a == b
