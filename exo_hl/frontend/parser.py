"""Python AST -> typed core IR (``IR.Proc``), following docs/internals.md.

Parsing and type checking happen in one pass: every expression is typed as it
is built, because the IR needs the types anyway and because an error is best
reported at the node where it arises. Names resolve first among the
procedure's own variables, then in ``scope`` (the defining scope: module
globals, enclosing function locals, closure cells), then among the builtin
externs and the control type names ``bool``/``int``.

Errors are ``ExoSyntaxError`` (Python the procedure language lacks) or
``ExoTypeError`` (ill-typed programs), located with file, line and caret.

Why one module of this size: it is one recursive-descent pass over
Python's AST that types as it builds, one method per construct; the
shared pieces are already elsewhere (typing rules in
``core_ir/typerules.py``, operators in ``core_ir/operators.py``,
fragments in ``fragment.py``).
"""
from __future__ import annotations

import math

import ast
import builtins
import numbers
import string
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..core_ir import types as T
from ..core_ir.config import Config
from ..core_ir.extern import BUILTIN_EXTERNS, Extern
from ..core_ir.memory import DRAM, Memory
from ..core_ir.nodes import IR
from ..core_ir.operators import (ARITH_OPS, CONTROL_EVAL, PY_ARITH, const_int,
                                  PY_BOOL, PY_CMP)
from ..core_ir.srcinfo import SrcInfo
from ..core_ir.state import instr_config_fields
from ..core_ir.syms import Sym
from ..core_ir.traversal import children, walk, walk_stmts
from ..core_ir.windows import make_window
from ..errors import ExoSyntaxError, ExoTypeError, located
from . import surface
from ..core_ir.typerules import (call_arg_problem, control_arith_type,
                                 control_neg_type, data_join, describe_type)

_FnArg = IR.FnArg
#: the largest magnitude of a control integer literal (C's long long)
_C_INT_MAX = 2**63 - 1
#: a run of more than this many terms joined by '+' (or and/or) is grouped
#: pairwise (docs/semantics.md); shorter ones keep Python's left-to-right
#: order (and a printed balanced tree reparses to itself)
BALANCE_MIN = 32
#: expressions nested deeper than this are refused with a located error:
#: later passes are recursive (the limit leaves them ample stack)
MAX_EXPR_DEPTH = 200

_CMP_OPS = PY_CMP      # the operators of the language: core_ir.operators
_ARITH_OPS = PY_ARITH
_UNSUPPORTED_STMTS = {
    ast.While: "'while' loops (use 'for i in seq(lo, hi)')",
    ast.Return: "'return' (procedures return nothing; write to a buffer)",
    ast.Break: "'break'", ast.Continue: "'continue'", ast.Delete: "'del'",
    ast.With: "'with'", ast.Try: "'try'", ast.Raise: "'raise'",
    ast.Import: "'import'", ast.ImportFrom: "'import'",
    ast.Global: "'global'", ast.Nonlocal: "'nonlocal'",
    ast.FunctionDef: "nested function definitions",
    ast.AsyncFunctionDef: "nested function definitions",
    ast.ClassDef: "class definitions", ast.AsyncFor: "'async for'",
}


class _Unresolved:
    """Sentinel for a name absent from the defining scope."""


_MISSING = _Unresolved()


@dataclass
class _Var:
    """What a name denotes inside the procedure being parsed."""
    sym: Sym
    type: object
    mem: object = None
    role: str = "buffer"  # 'size argument', 'loop iterator', 'window', ...

    @property
    def is_control(self):
        return T.is_control(self.type)


def resolve_dotted(node, scope):
    """The Python object a ``Name``/``Attribute`` chain denotes, or _MISSING."""
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        return getattr(builtins, node.id, _MISSING)
    if isinstance(node, ast.Attribute):
        base = resolve_dotted(node.value, scope)
        if base is _MISSING:
            return _MISSING
        return getattr(base, node.attr, _MISSING)
    return _MISSING


def _dotted_text(node) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles all expr nodes
        return "<expr>"


class SourceMap:
    """Turns AST positions of a (dedented) snippet into file ``SrcInfo``."""

    def __init__(self, filename, lines, first_lineno=1, col_shift=0):
        self.filename = filename
        self.lines = lines          # original file lines of the snippet
        self.first = first_lineno   # file line number of snippet line 1
        self.col_shift = col_shift  # indentation removed by dedent

    def __call__(self, node) -> SrcInfo:
        ln = getattr(node, "lineno", 1)
        text = self.lines[ln - 1] if 0 < ln <= len(self.lines) else None
        col = getattr(node, "col_offset", 0) + self.col_shift
        end = None
        if getattr(node, "end_lineno", None) == ln and node.end_col_offset:
            end = node.end_col_offset + self.col_shift
        return SrcInfo(self.filename, self.first + ln - 1, col, end, text)


class ProcParser:
    """Builds one ``IR.Proc`` from a ``FunctionDef``."""

    def __init__(self, fdef: ast.FunctionDef, scope: dict, srcmap: SourceMap,
                 instr=None):
        self.fdef = fdef
        self.scope = scope
        self.src = srcmap
        self.name = fdef.name
        self.instr = instr

    # ------------------------------------------------------------------
    # errors
    def syntax_error(self, msg, node):
        return ExoSyntaxError(f"in procedure '{self.name}': {msg}",
                              self.src(node))

    def type_error(self, msg, node):
        return ExoTypeError(located(msg, self.src(node), self.name))

    # ------------------------------------------------------------------
    # name resolution in the defining scope
    def lookup_global(self, node):
        return resolve_dotted(node, self.scope)

    def resolve_type_name(self, node):
        """A scalar IR type named by ``node`` (``f32``, ``size``, ``bool``)."""
        obj = self.lookup_global(node)
        if isinstance(obj, surface.TypeMarker):
            return obj.ir_type
        if isinstance(node, ast.Name) and node.id in ("bool", "int"):
            if obj is _MISSING or obj is getattr(builtins, node.id):
                return IR.Bool if node.id == "bool" else IR.Int
        if obj is _MISSING:
            raise self.type_error(f"unknown type '{_dotted_text(node)}' (name "
                                  f"not defined)", node)
        raise self.type_error(f"'{_dotted_text(node)}' is not a type "
                              f"(it is {type(obj).__name__})", node)

    def resolve_memory(self, node):
        obj = self.lookup_global(node)
        if isinstance(obj, type) and issubclass(obj, Memory):
            return obj
        if obj is _MISSING:
            raise self.type_error(f"unknown memory '{_dotted_text(node)}' "
                                  f"(name not defined)", node)
        raise self.type_error(f"'{_dotted_text(node)}' is not a Memory class",
                              node)

    # ------------------------------------------------------------------
    # types
    def parse_type(self, ann, env, what):
        """(IR type, memory) of an annotation ``T``, ``T[..]``,
        ``[T][..]``, each optionally ``@ MEM``."""
        mem = None
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.MatMult):
            mem = self.resolve_memory(ann.right)
            ann = ann.left
        if isinstance(ann, ast.Subscript):
            base = ann.value
            is_window = False
            if isinstance(base, ast.List):
                if len(base.elts) != 1:
                    raise self.syntax_error(
                        "a window type is written [T][dims]", base)
                base, is_window = base.elts[0], True
            elem = self.resolve_type_name(base)
            if not T.is_real_scalar(elem):
                raise self.type_error(
                    f"tensor elements must be a data type, not "
                    f"'{_dotted_text(base)}'", base)
            dims = ann.slice.elts if isinstance(ann.slice, ast.Tuple) \
                else [ann.slice]
            hi = tuple(self.size_expr(d, env) for d in dims)
            typ = IR.Tensor(hi, is_window, elem)
        elif isinstance(ann, ast.List):
            raise self.syntax_error("a window type needs dimensions: "
                                    "[T][dims]", ann)
        elif isinstance(ann, (ast.Name, ast.Attribute)):
            typ = self.resolve_type_name(ann)
        elif isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                inner = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                raise self.syntax_error(f"cannot parse type {ann.value!r}",
                                        ann) from None
            ast.copy_location(inner, ann)
            for n in ast.walk(inner):
                ast.copy_location(n, ann)
            return self.parse_type(inner, env, what)
        else:
            raise self.syntax_error(f"unsupported type annotation "
                                    f"'{_dotted_text(ann)}'", ann)
        if T.is_control(typ):
            if mem is not None:
                raise self.type_error(f"{what} has control type "
                                      f"{describe_type(typ)}: control values "
                                      f"have no memory", ann)
        elif mem is None:
            mem = DRAM
        return typ, mem

    def size_expr(self, node, env):
        return self.control_expr(node, env, "a tensor dimension",
                                 want_int=True)

    # ------------------------------------------------------------------
    # the procedure
    def parse(self) -> IR.Proc:
        fd = self.fdef
        a = fd.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or \
                getattr(a, "posonlyargs", None):
            raise self.syntax_error("procedure arguments are plain names with "
                                    "type annotations (no defaults, *args, "
                                    "keyword-only)", fd)
        env = {}
        args = []
        for arg in a.args:
            if arg.annotation is None:
                raise self.type_error(f"argument '{arg.arg}' needs a type "
                                      f"annotation", arg)
            if arg.arg in env:
                raise self.syntax_error(f"duplicate argument '{arg.arg}'", arg)
            typ, mem = self.parse_type(arg.annotation, env,
                                       f"argument '{arg.arg}'")
            sym = Sym(arg.arg)
            role = (f"{describe_type(typ)} argument" if T.is_control(typ)
                    else "argument")
            env[arg.arg] = _Var(sym, typ, mem, role)
            args.append(_FnArg(sym, typ, mem, self.src(arg)))

        body_nodes = list(fd.body)
        if (body_nodes and isinstance(body_nodes[0], ast.Expr)
                and isinstance(body_nodes[0].value, ast.Constant)
                and isinstance(body_nodes[0].value.value, str)):
            body_nodes = body_nodes[1:]  # docstring
        preds = []
        while body_nodes and isinstance(body_nodes[0], ast.Assert):
            s = body_nodes.pop(0)
            if s.msg is not None:
                raise self.syntax_error("assert messages are not supported",
                                        s.msg)
            preds.append(self.control_expr(s.test, env, "a precondition",
                                           want_bool=True))
        body = self.block(body_nodes, env)
        if not body:
            body = (IR.Pass(srcinfo=self.src(fd)), )
        out = IR.Proc(self.name, tuple(args), tuple(preds), body, self.instr,
                      self.src(fd))
        self.check_control_literals(out)
        self.check_expr_depth(out)
        return out

    def check_expr_depth(self, p):
        """No expression nests deeper than ``MAX_EXPR_DEPTH``."""
        parts = [(e, None) for e in p.preds]
        parts += [(c, s) for s in walk_stmts(p.body) for c in children(s)
                  if isinstance(c, IR.expr)]
        for e, s in parts:
            d = expr_depth(e)
            if d > MAX_EXPR_DEPTH:
                raise ExoTypeError(located(
                    f"expression nested {d} levels deep (at most "
                    f"{MAX_EXPR_DEPTH}); split it with intermediate "
                    f"variables", e.srcinfo or getattr(s, "srcinfo", None),
                    self.name))

    def check_control_literals(self, p):
        """Control integers are C integers: a literal no C integer type
        holds (C has no wider one than 64 bits) would not compile."""
        for a in p.args:
            for n in walk(a.type):
                self._check_literal(n, a.srcinfo)
        for part in (*p.preds, *p.body):
            for n in walk(part):
                self._check_literal(n, None)
                if isinstance(n, IR.Alloc):
                    for m in walk(n.type):
                        self._check_literal(m, n.srcinfo)

    def _check_literal(self, n, where):
        if isinstance(n, IR.Const) and type(n.val) is int and \
                not -_C_INT_MAX <= n.val <= _C_INT_MAX:
            raise ExoTypeError(located(
                f"integer literal {n.val} is too large for a C integer "
                f"(control values must lie within +-(2**63 - 1))",
                n.srcinfo or where, self.name))

    # ------------------------------------------------------------------
    # statements
    def block(self, stmts, env):
        env = dict(env)  # names bound in a block end with it
        out = []
        for s in stmts:
            try:
                out.extend(self.stmt(s, env))
            except RecursionError:
                raise self.type_error(
                    f"expression nested too deeply (more than "
                    f"{MAX_EXPR_DEPTH} levels); split it with intermediate "
                    f"variables", s) from None
        return tuple(out)

    def stmt(self, s, env):
        si = self.src(s)
        if isinstance(s, ast.Pass):
            return [IR.Pass(srcinfo=si)]
        if isinstance(s, ast.Assert):
            raise self.syntax_error("'assert' (a precondition) is only allowed "
                                    "at the top of the procedure body", s)
        if isinstance(s, ast.For):
            return [self.for_stmt(s, env)]
        if isinstance(s, ast.If):
            cond = self.control_expr(s.test, env, "an if condition",
                                     want_bool=True)
            body = self.block(s.body, env)
            orelse = self.block(s.orelse, env)
            return [IR.If(cond, body, orelse, srcinfo=si)]
        if isinstance(s, ast.AnnAssign):
            return self.alloc_stmt(s, env)
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1 or isinstance(s.targets[0], ast.Tuple):
                raise self.syntax_error("assign one target at a time", s)
            return [self.assign(s.targets[0], s.value, env, s, reduce=False)]
        if isinstance(s, ast.AugAssign):
            if not isinstance(s.op, ast.Add):
                raise self.syntax_error(
                    f"only '+=' is supported as an augmented assignment, not "
                    f"'{type(s.op).__name__}='", s)
            return [self.assign(s.target, s.value, env, s, reduce=True)]
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Call):
                return [self.call_stmt(s.value, env, s)]
            if isinstance(s.value, ast.Constant) and \
                    isinstance(s.value.value, str):
                raise self.syntax_error("a string is only allowed as the "
                                        "docstring", s)
            raise self.syntax_error("an expression statement has no effect; "
                                    "only calls may stand alone", s)
        for cls, what in _UNSUPPORTED_STMTS.items():
            if isinstance(s, cls):
                raise self.syntax_error(f"{what} not supported in procedures",
                                        s)
        raise self.syntax_error(f"unsupported statement "
                                f"({type(s).__name__})", s)

    def for_stmt(self, s, env):
        if s.orelse:
            raise self.syntax_error("'for ... else' is not supported", s)
        if not isinstance(s.target, ast.Name):
            raise self.syntax_error("a loop variable must be a single name",
                                    s.target)
        it = s.iter
        marker = None
        if isinstance(it, ast.Call):
            marker = self.lookup_global(it.func)
        if not isinstance(marker, surface.LoopMarker):
            raise self.syntax_error("loops are written 'for i in seq(lo, hi)'"
                                    " or 'for i in par(lo, hi)'", it)
        if len(it.args) != 2 or it.keywords:
            raise self.syntax_error(f"{marker!r}() takes two arguments "
                                    f"(lo, hi)", it)
        lo = self.control_expr(it.args[0], env, "a loop bound", want_int=True)
        hi = self.control_expr(it.args[1], env, "a loop bound", want_int=True)
        sym = Sym(s.target.id)
        inner = dict(env)
        inner[s.target.id] = _Var(sym, IR.Index, None, "loop iterator")
        body = self.block(s.body, inner)
        return IR.For(sym, lo, hi, body, marker.mode, srcinfo=self.src(s))

    def alloc_stmt(self, s, env):
        if not isinstance(s.target, ast.Name):
            raise self.syntax_error("an allocation names a new buffer: "
                                    "'t: f32[16] @ DRAM'", s.target)
        name = s.target.id
        typ, mem = self.parse_type(s.annotation, env, f"buffer '{name}'")
        if T.is_control(typ):
            raise self.type_error(
                f"cannot allocate '{name}' of control type "
                f"{describe_type(typ)}: only data buffers can be allocated",
                s.annotation)
        if isinstance(typ, IR.Tensor) and typ.is_window:
            raise self.type_error(f"cannot allocate a window '{name}'; "
                                  f"allocate a tensor T[...]", s.annotation)
        sym = Sym(name)
        out = [IR.Alloc(sym, typ, mem, srcinfo=self.src(s))]
        env[name] = _Var(sym, typ, mem, "buffer")
        if s.value is not None:
            out.append(self.assign(s.target, s.value, env, s, reduce=False))
        return out

    def write_target(self, var, name, node):
        """Refuse writes to control names and check the target is data."""
        if var.is_control:
            raise self.type_error(
                f"cannot assign to '{name}': it is a {var.role} (control "
                f"values are read-only inside a procedure)", node)

    def assign(self, target, value, env, s, reduce):
        si = self.src(s)
        op = "+=" if reduce else "="
        if isinstance(target, ast.Attribute):
            obj = self.lookup_global(target.value)
            if isinstance(obj, Config):
                if reduce:
                    raise self.syntax_error("config fields are written with "
                                            "'=', not '+='", s)
                ftype = self.config_field(obj, target.attr, target)
                rhs = self.typed_as(value, ftype, env,
                                    f"config field {obj.name()}.{target.attr}")
                return IR.WriteConfig(obj, target.attr, rhs, srcinfo=si)
            raise self.syntax_error(f"cannot assign to "
                                    f"'{_dotted_text(target)}'", target)
        if isinstance(target, ast.Name):
            var = env.get(target.id)
            if var is None:
                if not reduce and self.is_window_expr(value):
                    return self.window_stmt(target.id, value, env, s)
                raise self.type_error(
                    f"'{target.id}' is not defined; allocate it first "
                    f"('{target.id}: f32') before assigning to it", target)
            self.write_target(var, target.id, target)
            if T.is_tensor_or_window(var.type):
                raise self.type_error(
                    f"cannot {'reduce into' if reduce else 'assign to'} "
                    f"buffer '{target.id}' as a whole; index it", target)
            idx = ()
        elif isinstance(target, ast.Subscript):
            if not isinstance(target.value, ast.Name):
                raise self.syntax_error("write to 'A[i, j]' where A is a "
                                        "buffer name", target)
            bname = target.value.id
            var = env.get(bname)
            if var is None:
                raise self.undefined(target.value)
            self.write_target(var, bname, target.value)
            idx = self.point_indices(target, var, env)
        else:
            raise self.syntax_error(f"unsupported target of '{op}'", target)
        elem = T.basetype(var.type)
        rhs = self.data_expr(value, env, f"the value written to "
                             f"'{_dotted_text(target)}'")
        ctor = IR.Reduce if reduce else IR.Assign
        return ctor(var.sym, elem, idx, rhs, srcinfo=si)

    def window_stmt(self, name, value, env, s):
        rhs = self.window_expr(value, env)
        sym = Sym(name)
        base = env[value.value.id]
        env[name] = _Var(sym, rhs.type, base.mem, "window")
        return IR.WindowStmt(sym, rhs, srcinfo=self.src(s))

    def call_stmt(self, c, env, s):
        if not isinstance(c.func, (ast.Name, ast.Attribute)):
            raise self.syntax_error("a call statement names a procedure",
                                    c.func)
        callee = self.lookup_global(c.func)
        if callee is _MISSING:
            if isinstance(c.func, ast.Name) and c.func.id in env:
                raise self.type_error(f"'{c.func.id}' is a variable, not a "
                                      f"procedure", c.func)
            raise self.undefined(c.func)
        ir = callee.ir() if hasattr(callee, "ir") and callable(callee.ir) \
            else callee
        if not isinstance(ir, IR.Proc):
            what = ("an extern (usable only inside expressions)"
                    if isinstance(callee, Extern)
                    else f"a {type(callee).__name__}")
            raise self.type_error(f"cannot call '{_dotted_text(c.func)}': it "
                                  f"is {what}, not a procedure", c.func)
        if c.keywords:
            raise self.syntax_error("procedure calls take positional "
                                    "arguments only", c.keywords[0].value)
        if len(c.args) != len(ir.args):
            raise self.type_error(
                f"call to '{ir.name}' passes {len(c.args)} arguments, "
                f"expected {len(ir.args)}", c)
        args = []
        for p, a in zip(ir.args, c.args):
            e, mem = self.call_arg(p, a, env)
            why = call_arg_problem(p, e, mem)
            if why:
                raise self.type_error(f"in call to '{ir.name}': {why}", a)
            args.append(e)
        # Views of one buffer passed to two parameters, one written by the
        # callee, must be provably disjoint: that needs the path facts and
        # SMT, so it is checked with the bounds (effects/bounds.py).
        return IR.Call(ir, tuple(args), srcinfo=self.src(s))

    def call_arg(self, param, a, env):
        """(expr, memory) of one call argument."""
        if not T.is_control(param.type):
            if isinstance(a, ast.Name) and a.id in env:
                var = env[a.id]
                if not var.is_control:
                    return IR.Read(var.sym, (), type=var.type,
                                   srcinfo=self.src(a)), var.mem
            if self.is_window_expr(a):
                e = self.window_expr(a, env)
                return e, env[a.value.id].mem
        e = self.expr(a, env)
        if T.is_real_scalar(param.type) and T.is_control(e.type):
            pass  # reported by call_arg_problem
        return e, None

    # ------------------------------------------------------------------
    # expressions
    def undefined(self, node):
        if isinstance(node, ast.Name) and node.id == self.name:
            return self.type_error(
                f"procedure '{self.name}' calls itself: procedures cannot be "
                f"recursive (write the repetition as a loop)", node)
        return self.type_error(f"name '{_dotted_text(node)}' is not defined",
                               node)

    def is_window_expr(self, node):
        return (isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and any(isinstance(d, ast.Slice) for d in self.dims_of(node)))

    @staticmethod
    def dims_of(sub):
        s = sub.slice
        return list(s.elts) if isinstance(s, ast.Tuple) else [s]

    def control_expr(self, node, env, what, want_bool=False, want_int=False):
        e = self.expr(node, env)
        if not T.is_control(e.type):
            raise self.type_error(
                f"{what} must be a control expression, but it depends on "
                f"data ({describe_type(e.type)}); control may never depend "
                f"on data", node)
        if want_bool and e.type is not IR.Bool:
            raise self.type_error(f"{what} must be a bool, got "
                                  f"{describe_type(e.type)}", node)
        if want_int and not T.is_int_control(e.type):
            raise self.type_error(f"{what} must be an integer, got "
                                  f"{describe_type(e.type)}", node)
        return e

    def index_expr(self, node, env):
        return self.control_expr(node, env, "an index", want_int=True)

    def to_data(self, e, node, what):
        """``e`` as a data expression: integer literals become ``R``
        literals; any other control value is an error."""
        if isinstance(e, IR.Const) and type(e.val) in (int, float):
            try:
                v = float(e.val)
            except OverflowError:   # beyond every float: the nearest is inf
                v = math.inf if e.val > 0 else -math.inf
            return IR.Const(v, type=IR.Num, srcinfo=e.srcinfo)
        if isinstance(e, IR.USub) and _is_literal(e.arg):
            # a negation stays one (``-(-2.5)``): folding it into the
            # literal ``2.5`` would change the value where the literal
            # saturates (``-(-2147483648.5)`` in an i32 context wraps), and
            # the printed text would not parse back to the same program
            return e.update(arg=self.to_data(e.arg, node, what),
                            type=IR.Num)
        if isinstance(e, IR.BinOp) and T.is_control(e.type) and \
                _is_literal(e) and e.op in ARITH_OPS:
            lhs = self.to_data(e.lhs, node, what)
            rhs = self.to_data(e.rhs, node, what)
            return e.update(lhs=lhs, rhs=rhs, type=IR.Num)
        if T.is_real_scalar(e.type):
            return e
        if T.is_tensor_or_window(e.type):
            raise self.type_error(f"{what} must be a data scalar, got a "
                                  f"whole buffer; index it", node)
        raise self.type_error(
            f"{what} must be data, got control value of type "
            f"{describe_type(e.type)} (control cannot be converted to data)",
            node)

    def data_expr(self, node, env, what):
        return self.to_data(self.expr(node, env), node, what)

    def typed_as(self, node, typ, env, what):
        """An expression assigned to something of scalar type ``typ``."""
        if T.is_real_scalar(typ):
            return self.data_expr(node, env, what)
        e = self.expr(node, env)
        if not T.is_control(e.type):
            raise self.type_error(f"{what} has control type "
                                  f"{describe_type(typ)} but the value "
                                  f"depends on data", node)
        ok = (e.type is IR.Bool) if typ is IR.Bool else \
            (T.is_indexable(e.type) if typ is IR.Stride
             else T.is_int_control(e.type))
        if not ok:
            raise self.type_error(f"{what} has type {describe_type(typ)}, "
                                  f"got {describe_type(e.type)}", node)
        return e

    def config_field(self, cfg, field, node):
        if not cfg.has_field(field):
            raise self.type_error(f"config {cfg.name()} has no field "
                                  f"'{field}'", node)
        return cfg.lookup_type(field)

    def expr(self, node, env):
        si = self.src(node)
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return IR.Const(v, type=IR.Bool, srcinfo=si)
            if isinstance(v, int):
                return IR.Const(v, type=IR.Int, srcinfo=si)
            if isinstance(v, float):
                return IR.Const(v, type=IR.Num, srcinfo=si)
            raise self.syntax_error(f"unsupported literal {v!r}", node)
        if isinstance(node, ast.Name):
            var = env.get(node.id)
            if var is not None:
                if T.is_tensor_or_window(var.type):
                    raise self.type_error(
                        f"buffer '{node.id}' used as a value needs indices "
                        f"('{node.id}[...]')", node)
                return IR.Read(var.sym, (), type=var.type, srcinfo=si)
            return self.global_value(node)
        if isinstance(node, ast.Attribute):
            return self.global_value(node)
        if isinstance(node, ast.Subscript):
            if not isinstance(node.value, ast.Name):
                raise self.syntax_error("index a buffer by name: A[i, j]",
                                        node)
            var = env.get(node.value.id)
            if var is None:
                raise self.undefined(node.value)
            if self.is_window_expr(node):
                raise self.type_error(
                    "a window expression (with ':') may only be passed to a "
                    "call or bound with 'w = A[...]'", node)
            idx = self.point_indices(node, var, env)
            return IR.Read(var.sym, idx, type=T.basetype(var.type),
                           srcinfo=si)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.UAdd):
                return self.expr(node.operand, env)
            if isinstance(node.op, ast.USub):
                if isinstance(node.operand, ast.Constant) and \
                        type(node.operand.value) in (int, float):
                    c = self.expr(node.operand, env)
                    return c.update(val=-c.val, srcinfo=si)
                a = self.expr(node.operand, env)
                if a.type is IR.Bool or T.is_tensor_or_window(a.type):
                    raise self.type_error(f"cannot negate a "
                                          f"{describe_type(a.type)}", node)
                return IR.USub(a, type=control_neg_type(a), srcinfo=si)
            if isinstance(node.op, ast.Not):
                a = self.expr(node.operand, env)
                if a.type is not IR.Bool:
                    raise self.type_error(f"'not' needs a bool, got "
                                          f"{describe_type(a.type)}", node)
                return IR.Not(a, type=IR.Bool, srcinfo=si)
            raise self.syntax_error("unsupported unary operator", node)
        if isinstance(node, ast.BoolOp):
            op = PY_BOOL[type(node.op)]
            vals = [self.expr(v, env) for v in node.values]
            for v, vn in zip(vals, node.values):
                if v.type is not IR.Bool:
                    raise self.type_error(
                        f"'{op}' needs bool operands, got "
                        f"{describe_type(v.type)}", vn)
            return _balanced_bool(op, vals, si)
        if isinstance(node, ast.Compare):
            return self.compare(node, env)
        if isinstance(node, ast.BinOp):
            return self.binop(node, env)
        if isinstance(node, ast.Call):
            return self.call_expr(node, env)
        if isinstance(node, ast.Lambda):
            raise self.syntax_error("lambda is not supported in procedures",
                                    node)
        if isinstance(node, ast.IfExp):
            raise self.syntax_error("conditional expressions 'a if c else b'"
                                    " are not supported; use select(...) or "
                                    "an if statement", node)
        raise self.syntax_error(f"unsupported expression "
                                f"({type(node).__name__})", node)

    def global_value(self, node):
        """A name from the defining scope used as a value."""
        si = self.src(node)
        if isinstance(node, ast.Attribute):
            base = self.lookup_global(node.value)
            if isinstance(base, Config):
                ftype = self.config_field(base, node.attr, node)
                return IR.ReadConfig(base, node.attr, type=ftype, srcinfo=si)
        obj = self.lookup_global(node)
        if obj is _MISSING:
            raise self.undefined(node)
        # Python constants of the defining scope are literals
        if isinstance(obj, (bool, np.bool_)):
            return IR.Const(bool(obj), type=IR.Bool, srcinfo=si)
        if isinstance(obj, numbers.Integral):
            return IR.Const(int(obj), type=IR.Int, srcinfo=si)
        if isinstance(obj, numbers.Real):
            return IR.Const(float(obj), type=IR.Num, srcinfo=si)
        raise self.type_error(
            f"'{_dotted_text(node)}' ({type(obj).__name__}) cannot be used as "
            f"a value in a procedure", node)

    def point_indices(self, sub, var, env):
        dims = self.dims_of(sub)
        name = sub.value.id
        if not T.is_tensor_or_window(var.type):
            raise self.type_error(f"'{name}' is not a buffer and cannot be "
                                  f"indexed ({var.role} of type "
                                  f"{describe_type(var.type)})", sub)
        nd = len(T.shape(var.type))
        if len(dims) != nd:
            raise self.type_error(
                f"'{name}' has {nd} dimensions but is indexed with "
                f"{len(dims)}", sub)
        for d in dims:
            if isinstance(d, ast.Slice):
                raise self.type_error("a slice cannot be written to", d)
        return tuple(self.index_expr(d, env) for d in dims)

    def window_expr(self, node, env):
        """``A[i, lo:hi]`` -> ``WindowExpr`` typed by ``WindowType``."""
        name = node.value.id
        var = env.get(name)
        if var is None:
            raise self.undefined(node.value)
        if not T.is_tensor_or_window(var.type):
            raise self.type_error(f"'{name}' is not a buffer; only buffers "
                                  f"have windows", node.value)
        shape = T.shape(var.type)
        dims = self.dims_of(node)
        if len(dims) != len(shape):
            raise self.type_error(f"'{name}' has {len(shape)} dimensions but "
                                  f"the window gives {len(dims)}", node)
        idx = []
        for d, size in zip(dims, shape):
            dsi = self.src(d)
            if isinstance(d, ast.Slice):
                if d.step is not None:
                    raise self.syntax_error("window slices have no step",
                                            d.step)
                lo = (self.index_expr(d.lower, env) if d.lower is not None
                      else IR.Const(0, type=IR.Int, srcinfo=dsi))
                hi = (self.index_expr(d.upper, env) if d.upper is not None
                      else size)
                idx.append(IR.Interval(lo, hi, srcinfo=dsi))
            else:
                idx.append(IR.Point(self.index_expr(d, env), srcinfo=dsi))
        return make_window(var.sym, var.type, idx, self.src(node))

    def compare(self, node, env):
        si = self.src(node)
        left = self.expr(node.left, env)
        left_node = node.left
        out = []
        for op, rnode in zip(node.ops, node.comparators):
            right = self.expr(rnode, env)
            negate = isinstance(op, ast.NotEq)
            sop = "==" if negate else _CMP_OPS.get(type(op))
            if sop is None:
                raise self.syntax_error(f"unsupported comparison "
                                        f"'{type(op).__name__}'", node)
            for e, n in ((left, left_node), (right, rnode)):
                if not T.is_control(e.type):
                    raise self.type_error(
                        f"comparison of data values ({describe_type(e.type)})"
                        f" would make control depend on data; use select()",
                        n)
            if sop == "==" and (left.type is IR.Bool) != \
                    (right.type is IR.Bool):
                raise self.type_error("cannot compare a bool with a number",
                                      node)
            if sop != "==" and (left.type is IR.Bool or right.type is IR.Bool):
                raise self.type_error(f"'{sop}' needs numbers, not bools",
                                      node)
            c = IR.BinOp(sop, left, right, type=IR.Bool, srcinfo=si)
            if negate:
                c = IR.Not(c, type=IR.Bool, srcinfo=si)
            out.append(c)
            left, left_node = right, rnode
        return _balanced_bool("and", out, si)

    def binop(self, node, env):
        """A chain ``t0 op1 t1 op2 t2 ...`` (Python's left-leaning tree),
        walked iteratively; a run of more than ``BALANCE_MIN`` terms joined
        by ``+`` is grouped pairwise (docs/semantics.md), so a long sum is a
        tree of logarithmic depth for every later pass."""
        spine = []
        n = node
        while isinstance(n, ast.BinOp):
            spine.append(n)
            n = n.left
        spine.reverse()
        acc, acc_node = self.expr(n, env), n
        k = 0
        while k < len(spine):
            run = k
            while run < len(spine) and isinstance(spine[run].op, ast.Add):
                run += 1
            if run - k >= BALANCE_MIN:
                items = [(acc, acc_node)] + [
                    (self.expr(b.right, env), b.right) for b in spine[k:run]]
                acc, acc_node = self.balanced(items, spine[run - 1]), \
                    spine[run - 1]
                k = run
                continue
            b = spine[k]
            acc = self.binop1(b, acc, acc_node, self.expr(b.right, env),
                              b.right)
            acc_node = b
            k += 1
        return acc

    def balanced(self, items, node):
        """``items`` ((IR, ast node) pairs) summed pairwise, level by
        level."""
        while len(items) > 1:
            nxt = [(self.binop1(node, a, an, b, bn), node) for (a, an), (b, bn)
                   in zip(items[0::2], items[1::2])]
            if len(items) % 2:
                nxt.append(items[-1])
            items = nxt
        return items[0][0]

    def binop1(self, node, lhs, lnode, rhs, rnode):
        """One arithmetic operation ``node.op`` on typed operands."""
        si = self.src(node)
        op = _ARITH_OPS.get(type(node.op))
        if op is None:
            raise self.syntax_error(f"unsupported operator "
                                    f"'{type(node.op).__name__}'", node)
        for e, n in ((lhs, lnode), (rhs, rnode)):
            if e.type is IR.Bool:
                raise self.type_error(f"arithmetic '{op}' on a bool", n)
        ldata, rdata = T.is_real_scalar(lhs.type), T.is_real_scalar(rhs.type)
        if ldata or rdata:
            what = f"an operand of '{op}' with a data operand"
            lhs = self.to_data(lhs, lnode, what)
            rhs = self.to_data(rhs, rnode, what)
            # (data '/' and '%': docs/semantics.md)
            return IR.BinOp(op, lhs, rhs, type=data_join(lhs.type, rhs.type),
                            srcinfo=si)
        if lhs.type is IR.Num and rhs.type is IR.Num:  # pragma: no cover
            return IR.BinOp(op, lhs, rhs, type=IR.Num, srcinfo=si)
        # control arithmetic: quasi-affine only
        stride = lhs.type is IR.Stride or rhs.type is IR.Stride
        if op == "*":
            if const_int(lhs) is None and const_int(rhs) is None:
                raise self.type_error(
                    f"control expression '{_dotted_text(node)}' is not "
                    f"quasi-affine: '*' needs a constant operand", node)
        elif op in "/%":
            if stride:
                raise self.type_error(f"'{op}' on a stride", node)
            c = const_int(rhs)
            if c is None or c <= 0:
                raise self.type_error(
                    f"control expression is not quasi-affine: '{op}' needs "
                    f"a positive constant divisor", rnode)
        return IR.BinOp(op, lhs, rhs, type=control_arith_type(lhs, rhs),
                        srcinfo=si)

    def call_expr(self, node, env):
        si = self.src(node)
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            if isinstance(node.func, ast.Lambda):
                self.expr(node.func, env)  # reports the lambda
            raise self.syntax_error("only named externs can be called inside"
                                    " expressions", node.func)
        fn = self.lookup_global(node.func)
        if fn is _MISSING and isinstance(node.func, ast.Name) and \
                node.func.id not in env:
            fn = BUILTIN_EXTERNS.get(node.func.id, _MISSING)
        if node.keywords:
            raise self.syntax_error("keyword arguments are not supported "
                                    "here", node.keywords[0].value)
        if isinstance(fn, surface.StrideMarker):
            if len(node.args) != 2 or not isinstance(node.args[0], ast.Name):
                raise self.syntax_error("stride(A, d) takes a buffer name and "
                                        "a constant dimension", node)
            var = env.get(node.args[0].id)
            if var is None:
                raise self.undefined(node.args[0])
            if not T.is_tensor_or_window(var.type):
                raise self.type_error(f"stride() of '{node.args[0].id}', "
                                      f"which is not a buffer", node.args[0])
            d = node.args[1]
            dim = d.value if isinstance(d, ast.Constant) else None
            if isinstance(d, (ast.Name, ast.Attribute)) and not (
                    isinstance(d, ast.Name) and d.id in env):
                dim = self.lookup_global(d)  # a constant of the scope
            if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
                raise self.type_error("stride(A, d): d must be an integer "
                                      "constant", d)
            dim = int(dim)
            nd = len(T.shape(var.type))
            if not 0 <= dim < nd:
                raise self.type_error(f"stride(): dimension {dim} out of "
                                      f"range for '{node.args[0].id}' with "
                                      f"{nd} dimensions", d)
            return IR.StrideExpr(var.sym, dim, type=IR.Stride, srcinfo=si)
        if isinstance(fn, Extern):
            args = [self.data_expr(a, env, f"an argument of {fn.name()}()")
                    for a in node.args]
            try:
                rt = fn.typecheck([a.type for a in args])
            except TypeError as e:
                raise self.type_error(f"in extern call {fn.name()}(): {e}",
                                      node) from None
            rt = getattr(rt, "ir_type", rt)
            if not T.is_real_scalar(rt):
                raise self.type_error(f"extern {fn.name()} returned a "
                                      f"non-data type {rt!r}", node)
            return IR.Extern(fn, tuple(args), type=rt, srcinfo=si)
        if fn is _MISSING:
            raise self.undefined(node.func)
        if isinstance(fn, surface.LoopMarker):
            raise self.syntax_error(f"{fn!r}() only appears in "
                                    f"'for i in {fn!r}(lo, hi)'", node)
        ir = getattr(fn, "ir", None)
        if callable(ir) or isinstance(fn, IR.Proc):
            raise self.type_error(f"procedure '{_dotted_text(node.func)}' is "
                                  f"called as a statement, not inside an "
                                  f"expression", node)
        raise self.type_error(f"'{_dotted_text(node.func)}' is not an extern "
                              f"function usable in a procedure", node.func)


def _balanced_bool(op, vals, si):
    """``v0 op v1 op ...`` for ``and``/``or`` (exactly associative): left
    to right when short, grouped pairwise when long."""
    if len(vals) <= BALANCE_MIN:
        acc = vals[0]
        for v in vals[1:]:
            acc = IR.BinOp(op, acc, v, type=IR.Bool, srcinfo=si)
        return acc
    while len(vals) > 1:
        nxt = [IR.BinOp(op, a, b, type=IR.Bool, srcinfo=si)
               for a, b in zip(vals[0::2], vals[1::2])]
        if len(vals) % 2:
            nxt.append(vals[-1])
        vals = nxt
    return vals[0]


def expr_depth(e) -> int:
    """Nesting depth of an IR expression (iteratively: it may be deep)."""
    best, stack = 0, [(e, 1)]
    while stack:
        x, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in children(x))
    return best


def _is_literal(e) -> bool:
    if isinstance(e, IR.Const):
        return True
    if isinstance(e, IR.USub):
        return _is_literal(e.arg)
    if isinstance(e, IR.BinOp):
        return _is_literal(e.lhs) and _is_literal(e.rhs)
    return False


def check_instr_template(proc: IR.Proc, template: str):
    """Every ``{placeholder}`` of an instr template must name an argument
    (or ``arg_data`` for a buffer argument), or be ``{Cfg.field}`` for a
    config field the instruction reads or writes."""
    names = {a.name.name for a in proc.args}
    names |= {a.name.name + "_data" for a in proc.args
              if not T.is_control(a.type)}
    try:
        fields = [(f, spec, conv) for _, f, spec, conv
                  in string.Formatter().parse(template) if f is not None]
    except ValueError as e:
        raise ExoTypeError(located(f"bad instr template {template!r}: {e}",
                                   proc.srcinfo, proc.name)) from None
    cfg_fields = instr_config_fields(proc)
    for f, spec, conv in fields:
        base = f.split(".")[0].split("[")[0]
        if base not in names and f in cfg_fields and not (spec or conv):
            continue    # {Cfg.field}: the field's C lvalue
        if base in names and (f != base or spec or conv):
            # each placeholder becomes C text (a string): an attribute,
            # index, conversion or format spec would fail when the code is
            # generated, or paste Python text into the C
            raise ExoTypeError(located(
                f"instr template placeholder '{{{f}{'!' + conv if conv else ''}"
                f"{':' + spec if spec else ''}}}' must be a bare "
                f"'{{{base}}}': write C after it ('{{{base}}}.data', "
                f"'{{{base}}}.strides[0]')", proc.srcinfo, proc.name))
        if base not in names:
            known = sorted(names) + sorted(
                "{" + k + "}" for k in cfg_fields if k.split(".")[0]
                not in names)
            raise ExoTypeError(located(
                f"instr template placeholder '{{{f}}}' names no argument "
                f"and no config field the instruction reads or writes "
                f"(it may name: {', '.join(known)})",
                proc.srcinfo, proc.name))
