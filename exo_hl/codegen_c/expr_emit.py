"""Printing IR expressions as C: control expressions as they are, data
expressions in their evaluation type (docs/semantics.md, ``arith.py``).

A mixin of ``ProcEmitter``: it relies on the emitter's buffers, names and
memory access (``bufs``, ``cname``, ``lvalue``, ``tensor_strides``).
"""
from __future__ import annotations

import re

from ..core_ir import operators as OPS
from ..core_ir.nodes import IR
from ..core_ir.types import C_TYPES, is_data, is_tensor_or_window
from ..errors import ExoTypeError, MemGenError
from ..core_ir import datasem as D
from ..core_ir import extern as EXT
from . import arith as A
from ..core_ir.precision_mix import check_precision  # the one rule

# C precedence and spelling of the operators: core_ir.operators
_PREC_ADD, _PREC_MUL = OPS.PREC_ADD, OPS.PREC_MUL
_PREC_UNARY, _PREC_ATOM = OPS.PREC_UNARY, OPS.PREC_ATOM
_BIN_PREC = OPS.C_PREC
_C_OP = OPS.C_SPELLING
#: integer element types by width (all narrower than C's int, or int itself)


def _is_const_int(e):
    return isinstance(e, IR.Const) and type(e.val) is int


def _folded(e):
    """The value of a control expression made of integer literals only
    (``OPS.const_int``), else None. C computes such an expression in
    ``int`` (its literals fit one): ``1024 * 2147483647`` overflowed there
    (undefined behaviour; gcc wrapped it) where the IR's value, and the
    64-bit range walk (``core_ir/control_ranges.py``), are exact; printed
    folded, a literal that does not fit ``int`` is a wider C type."""
    return None if is_data(e.type) else OPS.const_int(e)


def _c_data_type(t):
    """The data type values of type ``t`` have in C (``R`` is float)."""
    return IR.F32 if t is IR.Num else t


#: the text a bf16 read prints as (its value: the f32 its bits are the top of)
_BF16_READ = "exo_bf16_to_f32("


class ExprEmitter:
    """Expression printing for one procedure's emitter."""

    def check_precision(self, e, stmt=None):
        return check_precision(e, self._err, stmt)

    def data_expr(self, e, target_t, check=True):
        """``e`` printed for storing into ``target_t``: computed in its
        evaluation type, then converted (docs/semantics.md)."""
        if check:
            self.check_precision(e)
        tgt = _c_data_type(target_t)
        t = D.eval_type(e, tgt, D.default_leaf)
        text, prec, rng = self.dexpr(e, t)
        if (tgt is IR.BF16 and isinstance(e, (IR.Read, IR.ReadConfig))
                and e.type is IR.BF16 and text.startswith(_BF16_READ)):
            # bf16 into bf16: the round trip through f32 done on the bits
            return "exo_bf16_copy(" + text[len(_BF16_READ):]
        conv = A.convert(text, prec >= _PREC_UNARY, t, tgt, rng)
        return text if conv is None else conv

    def dexpr(self, e, t):
        """(text, precedence, value range) of the data expression ``e``,
        computed in its evaluation type ``t`` (the value range is that of
        the 32-bit result for integers, None for floats)."""
        rng = None
        if isinstance(e, IR.Const):
            text = A.literal(e.val, t)
            if A.needs_math(text):
                self.prog.need_math = True
            if D.is_int(t):
                v = D.literal(e.val, t)
                rng = (v, v)
            return text, (_PREC_UNARY if text.startswith(("-", "("))
                          else _PREC_ATOM), rng
        if isinstance(e, (IR.Read, IR.ReadConfig)):
            text, prec = self._expr(e, None)
            if D.is_int(t):
                lt = D.default_leaf(e)
                rng = D.int_range(lt) if D.is_int(lt) else A.FULL
            return text, prec, rng
        if isinstance(e, IR.USub):
            a, ap, ar = self.operand(e.arg, t)
            if not D.is_int(t):
                a = a if ap >= _PREC_UNARY and not a.startswith("-") \
                    else f"({a})"
                return f"-{a}", _PREC_UNARY, None
            plain, rng = A.neg_range(ar)
            if plain:
                a = a if ap >= _PREC_UNARY and not a.startswith("-") \
                    else f"({a})"
                return f"-{a}", _PREC_UNARY, rng
            return f"exo_neg_i32({a})", _PREC_ATOM, rng
        if isinstance(e, IR.BinOp):
            return self.data_binop(e, t)
        if isinstance(e, IR.Extern):
            if e.f is EXT.select and D.is_int(t):
                decided = self.decided_select(e, t)
                if decided is not None:
                    return self.operand(decided, t)
            self.prog.need_math = True
            self.prog.add_global(e.f.c_global(C_TYPES[t]))
            if e.f.own_arg_types:
                args = []
                for a in e.args:
                    self.check_precision(a)
                    at = D.ext_arg_context(a, D.default_leaf)
                    args.append(self.dexpr(a, at)[0])
            else:
                args = [self.operand(a, t)[0] for a in e.args]
            if D.is_int(t):
                rt = e.type if e.f.own_arg_types else IR.I32
                rng = D.int_range(rt) if D.is_int(rt) else A.FULL
            return e.f.compile(args, C_TYPES[t]), _PREC_ATOM, rng
        self._err(MemGenError, f"cannot compile data expression "
                  f"{type(e).__name__}", e)

    def decided_select(self, e, t):
        """The argument ``select(a, b, c, d)`` (integer evaluation type
        ``t``) gives whatever the values, when the ranges of ``a`` and ``b``
        decide ``a < b`` (``u < 0`` on a ``ui8``, ``x < 200`` on an
        ``i8``), else None: C compilers warn about such comparisons
        (-Wtype-limits), and the branch not taken need not be printed."""
        saved = set(self.read_names)
        (_, _, ra), (_, _, rb) = (self.operand(x, t) for x in e.args[:2])
        self.read_names = saved
        if ra[1] < rb[0]:
            return e.args[2]
        if ra[0] >= rb[1]:
            return e.args[3]
        return None

    def operand(self, e, t):
        """``e`` as an operand of an operation of evaluation type ``t``:
        (text, precedence, range), converted to ``t`` when needed."""
        te = D.eval_type(e, t, D.default_leaf)
        text, prec, rng = self.dexpr(e, te)
        if te is t:
            return text, prec, rng
        conv = A.convert(text, prec >= _PREC_UNARY, te, t, rng or A.FULL)
        if conv is None:
            return text, prec, rng
        return conv, _PREC_UNARY if conv.startswith("(") else _PREC_ATOM, \
            (rng if D.is_int(t) else None)

    def data_binop(self, e, t):
        op = e.op
        p = _BIN_PREC[op]
        lhs, lp, lr = self.operand(e.lhs, t)
        rhs, rp, rr = self.operand(e.rhs, t)
        if D.is_int(t):
            plain, rng = A.op_range(op, lr, rr)
            if not plain:
                name = {"+": "add", "-": "sub", "*": "mul", "/": "div",
                        "%": "mod"}[op]
                return f"exo_{name}_i32({lhs}, {rhs})", _PREC_ATOM, rng
        else:
            rng = None
            if op == "%":
                self.prog.need_math = True
                if t is IR.F64:
                    return f"fmod({lhs}, {rhs})", _PREC_ATOM, None
                text = f"fmodf({lhs}, {rhs})"
                if t is IR.F16:
                    return f"(_Float16){text}", _PREC_UNARY, None
                return text, _PREC_ATOM, None
        lhs = lhs if lp >= p else f"({lhs})"
        rhs = rhs if rp >= p + 1 else f"({rhs})"
        text = f"{lhs} {_C_OP[op]} {rhs}"
        if t is IR.F16:
            # round every half-precision operation (C may keep float range)
            return f"(_Float16)({text})", _PREC_UNARY, None
        return text, p, rng

    def expr(self, e, ctx=None):
        return self._expr(e, ctx)[0]

    def wrap(self, e, min_prec, ctx=None):
        text, prec = self._expr(e, ctx)
        return text if prec >= min_prec else f"({text})"

    def is_nonneg(self, e):
        if isinstance(e, IR.Const):
            return type(e.val) is int and e.val >= 0
        if isinstance(e, IR.Read) and not e.idx:
            return e.name in self.nonneg
        if isinstance(e, IR.BinOp) and e.op in ("+", "*", "/", "%"):
            return self.is_nonneg(e.lhs) and self.is_nonneg(e.rhs)
        return False

    @staticmethod
    def literal(v):
        """A control literal (data literals: ``arith.literal``)."""
        if isinstance(v, bool):
            return "true" if v else "false"
        return repr(v)

    def _expr(self, e, ctx):
        if isinstance(e, (IR.Const, IR.USub, IR.BinOp, IR.Extern)) and (
                is_data(e.type) or e.type is IR.Num):
            dom = ctx if ctx is not None and is_data(ctx) else IR.F32
            t = D.eval_type(e, _c_data_type(dom), D.default_leaf)
            text, prec, _ = self.dexpr(e, t)
            return text, prec
        if isinstance(e, IR.Const):
            text = self.literal(e.val)
            return text, (_PREC_UNARY if text.startswith("-") else _PREC_ATOM)
        if isinstance(e, IR.Read):
            buf = self.bufs.get(e.name)
            if buf is None:
                name = self.cname(e.name, e)
                self.read_names.add(name)
                return name, _PREC_ATOM
            self.read_names.add(buf.cname)
            if is_tensor_or_window(e.type):
                self._err(MemGenError, f"whole buffer '{buf.cname}' used as a "
                          f"value", e)
            self.check_readable(buf, e)
            text = self.lvalue(buf, e.idx, e)
            if e.type is IR.BF16:    # its value: the f32 its bits are the top of
                return f"exo_bf16_to_f32({text})", _PREC_ATOM
            return text, (_PREC_UNARY if text.startswith("*") else _PREC_ATOM)
        if isinstance(e, IR.USub):
            inner = self.wrap(e.arg, _PREC_UNARY, ctx)
            if inner.startswith("-"):
                inner = f"({inner})"
            return f"-{inner}", _PREC_UNARY
        if isinstance(e, IR.Not):
            return f"!{self.wrap(e.arg, _PREC_UNARY, ctx)}", _PREC_UNARY
        v = _folded(e) if isinstance(e, (IR.BinOp, IR.USub)) else None
        if v is not None:
            text = self.literal(v) if v > -2**63 else \
                f"({-2**63 + 1} - 1)"       # no literal is -2**63 in C
            return text, (_PREC_UNARY if v < 0 else _PREC_ATOM)
        if isinstance(e, IR.BinOp):
            return self._binop(e, ctx)
        if isinstance(e, IR.StrideExpr):
            buf = self.bufs[e.name]
            if buf.kind == "window":
                return f"{buf.cname}.strides[{e.dim}]", _PREC_ATOM
            s = self.tensor_strides(buf)[e.dim]
            return s, (_PREC_ATOM if re.fullmatch(r"\w+", s) else _PREC_MUL)
        if isinstance(e, IR.ReadConfig):
            text = f"ctxt->{self.prog.config_fields[e.config, e.field]}"
            if e.config.lookup_type(e.field) is IR.BF16:
                return f"exo_bf16_to_f32({text})", _PREC_ATOM
            return text, _PREC_ATOM
        if isinstance(e, IR.WindowExpr):
            self._err(MemGenError, "a window can only be bound or passed to a "
                      "call", e)
        self._err(MemGenError, f"cannot compile expression "
                  f"{type(e).__name__}", e)

    def _binop(self, e, ctx):
        op = e.op
        p = _BIN_PREC[op]
        control = not is_data(e.type) and not (
            is_data(e.lhs.type) or is_data(e.rhs.type))
        if control and op in ("/", "%"):
            d = _folded(e.rhs)       # a literal, or literals: (7 * 3)
            if d is None or d <= 0:
                self._err(ExoTypeError, "integer division/modulo needs a "
                          "positive constant divisor", e)
            if not self.is_nonneg(e.lhs):
                self.prog.need_floor = True
                fn = "exo_floor_div" if op == "/" else "exo_floor_mod"
                return f"{fn}({self.expr(e.lhs)}, {d})", _PREC_ATOM
        if op in OPS.BOOL_OPS:
            def side(x):
                t, xp = self._expr(x, ctx)
                if xp < p or (op == "or" and isinstance(x, IR.BinOp)
                                 and x.op == "and"):
                    return f"({t})"
                return t
            return f"{side(e.lhs)} {_C_OP[op]} {side(e.rhs)}", p
        if op in OPS.CMP_OPS:
            # comparisons: operands are arithmetic; never chain comparisons
            sub_ctx = ctx
            if is_data(e.lhs.type) or is_data(e.rhs.type):
                sub_ctx = next((x.type for x in (e.lhs, e.rhs)
                                if x.type is not IR.Num and is_data(x.type)),
                               ctx)
            lhs = self.wrap(e.lhs, _PREC_ADD, sub_ctx)
            rhs = self.wrap(e.rhs, _PREC_ADD, sub_ctx)
            if control and lhs == rhs:
                # a control value compared with itself (integers: no NaN)
                # has a known result, and C compilers warn about it
                # (-Wtautological-compare, in -Wall)
                return ("true" if op in ("==", "<=", ">=") else "false",
                        _PREC_ATOM)
            return f"{lhs} {_C_OP[op]} {rhs}", p
        lhs = self.wrap(e.lhs, p, ctx)
        rhs = self.wrap(e.rhs, p + 1, ctx)
        return f"{lhs} {_C_OP[op]} {rhs}", p
