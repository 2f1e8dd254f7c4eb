"""``Procedure``: the user-facing handle on an IR procedure.

This module is a thin facade. Each scheduling method forwards to exactly one
rewrite module under ``exo_hl.rewrites`` (``p.split`` -> ``rewrites/split.py``),
and seeing/running/compiling forward to ``core_ir`` and ``codegen_c``.
A ``Procedure`` is immutable: every method returns a new one that records the
procedure and operation it was derived from (its provenance).
"""
from __future__ import annotations

import importlib
from typing import Optional

from .core_ir.nodes import IR
from .errors import SchedulingError


def _check_well_formed(proc_ir, op: str, parent_ir=None) -> None:
    """Raise ``SchedulingError`` unless ``proc_ir`` passes the static checks.

    ``parent_ir``: a procedure known to pass them that ``proc_ir`` was
    derived from; then only what the rewrite could affect is re-checked
    (``frontend.recheck``; ``EXO_HL_FULL_RECHECK=1`` re-checks everything).
    """
    from .errors import BoundsError, ExoTypeError
    from .frontend.recheck import check_rewritten
    try:
        check_rewritten(proc_ir, parent_ir)
    except (BoundsError, ExoTypeError) as e:
        raise SchedulingError(
            f"{op}: the rewritten procedure '{proc_ir.name}' would not be "
            f"well formed, so the rewrite is rejected:\n{e}") from None


def _same_ir(a, b) -> bool:
    """``a == b`` for two procedures, without hashing whole bodies (tuple
    comparison skips identical statements)."""
    return a is b or (a.name == b.name and a.instr == b.instr
                      and a.args == b.args and a.preds == b.preds
                      and a.body == b.body)


class Procedure:
    __slots__ = ("_ir", "_parent", "_op", "_equiv_mod", "_cache", "_forward")

    def __init__(self, ir, parent: Optional["Procedure"] = None, op: str = "",
                 equiv_mod=frozenset(), forward=None):
        if not isinstance(ir, IR.Proc):
            raise TypeError("Procedure wraps an IR.Proc")
        object.__setattr__(self, "_ir", ir)
        object.__setattr__(self, "_parent", parent)
        object.__setattr__(self, "_op", op)
        # config fields (Config, field) modulo which this procedure is only
        # equivalent to its parent; empty when fully equivalent
        object.__setattr__(self, "_equiv_mod", frozenset(equiv_mod))
        # per-object memo for derived analyses (never affects semantics)
        object.__setattr__(self, "_cache", {})
        # maps a cursor path of the parent onto this procedure (or None)
        object.__setattr__(self, "_forward", forward)

    def __setattr__(self, name, value):
        raise AttributeError("Procedure objects are immutable")

    # ------------------------------------------------------------------
    # identity and provenance
    def name(self) -> str:
        return self._ir.name

    def ir(self):
        """The underlying immutable IR (``IR.Proc``)."""
        return self._ir

    def is_instr(self) -> bool:
        return self._ir.instr is not None

    def parent(self) -> Optional["Procedure"]:
        return self._parent

    def derivation(self):
        """[(op, procedure)] from the root algorithm down to this procedure."""
        chain = []
        p = self
        while p is not None:
            chain.append((p._op, p))
            p = p._parent
        return list(reversed(chain))

    def _derive(self, new_ir, op: str, equiv_mod=frozenset(), forward=None):
        """A new procedure derived from this one by the rewrite ``op``.

        Every rewrite ends here, so this is where the result is re-checked
        like freshly written code (call signatures, bounds, callee
        preconditions, parallel loops): whatever a rewrite's own check
        missed, it can never hand back an ill-formed procedure. When this
        procedure passed those checks itself, only what the rewrite changed
        (and what that can affect) is re-checked (``frontend.recheck``).
        """
        checked = self._cache.get("checked", False)
        if not _same_ir(new_ir, self._ir):
            from .core_ir.windows import retype_window_names
            parent = self._ir if checked else None
            new_ir = retype_window_names(new_ir, parent)
            _check_well_formed(new_ir, op, parent)
            checked = True
        p = Procedure(new_ir, parent=self, op=op, equiv_mod=equiv_mod,
                      forward=forward)
        if checked:
            # new_ir passed the checks and is retyped (a fixed point of
            # retype_window_names): later rewrites can re-check against it
            p._cache["checked"] = True
        return p

    # ------------------------------------------------------------------
    # seeing
    def __str__(self):
        from .core_ir.printer import proc_to_str
        return proc_to_str(self._ir)

    def __repr__(self):
        return f"<Procedure {self.name()}>"

    def _repr_pretty_(self, p, cycle):  # IPython / notebooks
        p.text(str(self))

    # ------------------------------------------------------------------
    # running
    def interpret(self, *args, **kwargs):
        from .core_ir.interpret import run_interpreter
        return run_interpreter(self._ir, args, kwargs)

    def compile(self, **opts):
        from .codegen_c.runner import compile_callable
        return compile_callable(self, **opts)

    def c_code_str(self) -> str:
        from .codegen_c.emit import c_code_str
        return c_code_str([self])

    # ------------------------------------------------------------------
    # scheduling: each method is one rewrite module
    def _rewrite(self, module: str, *args, **kwargs) -> "Procedure":
        try:
            mod = importlib.import_module(f"exo_hl.rewrites.{module}")
        except ModuleNotFoundError as e:
            if e.name == f"exo_hl.rewrites.{module}":
                raise NotImplementedError(
                    f"the '{module}' rewrite is not available yet") from None
            raise
        return getattr(mod, module)(self, *args, **kwargs)

    def split(self, loop, factor, outer, inner, tail="guard"):
        return self._rewrite("split", loop, factor, outer, inner, tail=tail)

    def reorder(self, outer_loop, inner_loop=None):
        return self._rewrite("reorder", outer_loop, inner_loop)

    def unroll(self, loop):
        return self._rewrite("unroll", loop)

    def inline(self, call):
        return self._rewrite("inline", call)

    def set_memory(self, buffer, mem):
        return self._rewrite("set_memory", buffer, mem)

    def set_precision(self, buffer, typ):
        return self._rewrite("set_precision", buffer, typ)

    def call_eqv(self, call, new_proc):
        return self._rewrite("call_eqv", call, new_proc)

    def bind_expr(self, expr, new_name, cse=False):
        return self._rewrite("bind_expr", expr, new_name, cse=cse)

    def stage_mem(self, block, window, new_name, accum=False):
        return self._rewrite("stage_mem", block, window, new_name, accum=accum)

    def bind_config(self, expr, config, field):
        return self._rewrite("bind_config", expr, config, field)

    def lift_alloc(self, alloc, n_lifts=1):
        return self._rewrite("lift_alloc", alloc, n_lifts=n_lifts)

    def fission_after(self, stmt, n_lifts=1):
        return self._rewrite("fission_after", stmt, n_lifts=n_lifts)

    def reorder_stmts(self, s1, s2=None):
        return self._rewrite("reorder_stmts", s1, s2)

    def configwrite_at(self, stmt, config, field, expr, before=False):
        return self._rewrite("configwrite_at", stmt, config, field, expr,
                             before=before)

    def replace(self, block, sub_proc):
        return self._rewrite("replace", block, sub_proc)

    def add_guard(self, stmt, cond):
        return self._rewrite("add_guard", stmt, cond)

    def fuse_loop(self, loop1, loop2=None):
        return self._rewrite("fuse_loop", loop1, loop2)

    def lift_if(self, if_stmt, n_lifts=1):
        return self._rewrite("lift_if", if_stmt, n_lifts=n_lifts)

    def partition_loop(self, loop, cut):
        return self._rewrite("partition_loop", loop, cut)

    def remove_loop(self, loop):
        return self._rewrite("remove_loop", loop)

    def parallelize(self, loop):
        return self._rewrite("parallelize", loop)

    def rename(self, new_name):
        return self._rewrite("rename", new_name)

    def simplify(self):
        return self._rewrite("simplify")

    def partial_eval(self, *args, **sizes):
        return self._rewrite("partial_eval", *args, **sizes)

    def make_instr(self, c_template, c_global="", cpu_features=()):
        return self._rewrite("make_instr", c_template, c_global=c_global,
                             cpu_features=cpu_features)

    def cpu_features(self) -> frozenset:
        """Every CPU feature this procedure needs (GCC names), through the
        instructions it calls and the memories it uses: its compiled code
        runs only on CPUs that have all of them."""
        from .core_ir.cpu_features import proc_features
        return proc_features(self._ir)

    def expand_dim(self, buffer, alloc_dim, indexing_expr):
        return self._rewrite("expand_dim", buffer, alloc_dim, indexing_expr)

    def divide_dim(self, buffer, dim, factor):
        return self._rewrite("divide_dim", buffer, dim, factor)

    def unroll_buffer(self, buffer, dim):
        return self._rewrite("unroll_buffer", buffer, dim)

    def delete_pass(self):
        return self._rewrite("delete_pass")

    def shift_loop(self, loop, new_lo):
        return self._rewrite("shift_loop", loop, new_lo)

    def is_eq(self, other: "Procedure") -> bool:
        from .rewrites.call_eqv import is_eq
        return is_eq(self, other)

    # ------------------------------------------------------------------
    # pointing (API.md section 4)
    def find(self, pattern, many=False):
        from .cursors import find
        return find(self, pattern, many=many)

    def find_loop(self, name, many=False):
        from .cursors import find_loop
        return find_loop(self, name, many=many)

    def body(self):
        from .cursors import proc_body
        return proc_body(self)

    def args(self):
        from .cursors import proc_args
        return proc_args(self)

    def forward(self, cursor):
        from .cursors import forward
        return forward(self, cursor)


__all__ = ["Procedure", "SchedulingError"]
