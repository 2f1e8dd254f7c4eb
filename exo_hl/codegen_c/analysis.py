"""Whole-program facts the C emitter needs before printing anything.

Which procedures are reached (and in which order to define them), which
pointer arguments are ever written (so the rest can be ``const``), which
arguments may alias at some call site (so only the others get ``restrict``),
and which configs are touched (so the context struct holds their fields).
"""
from __future__ import annotations

from ..core_ir.buffers import arg_root

from ..core_ir.nodes import IR
from ..core_ir.traversal import walk, walk_stmts
from ..core_ir.types import is_tensor_or_window, is_real_scalar


def as_ir(p):
    """Accept both ``Procedure`` and bare ``IR.Proc``."""
    return p if isinstance(p, IR.Proc) else p.ir()


def calls_in(proc):
    for s in walk_stmts(proc.body):
        if isinstance(s, IR.Call):
            yield s


def reached_procs(publics):
    """Every non-instr procedure reached from ``publics``, callees first."""
    order, seen = [], set()

    def visit(p):
        if p in seen:
            return
        seen.add(p)
        for c in calls_in(p):
            if c.f.instr is None:
                visit(c.f)
        order.append(p)

    for p in publics:
        visit(p)
    return order


def all_procs_incl_instrs(publics):
    out, seen = [], set()

    def visit(p):
        if p in seen:
            return
        seen.add(p)
        out.append(p)
        for c in calls_in(p):
            visit(c.f)

    for p in publics:
        visit(p)
    return out


def configs_used(procs):
    """Configs read or written anywhere in ``procs`` (declaration order kept)."""
    found = {}
    for p in procs:
        nodes = list(p.preds) + list(p.body)
        for root in nodes:
            for n in walk(root):
                if isinstance(n, (IR.ReadConfig, IR.WriteConfig)):
                    found.setdefault(n.config, None)
    return list(found)


def is_pointer_arg(a) -> bool:
    return is_tensor_or_window(a.type) or is_real_scalar(a.type)


def aliased_params(procs):
    """{proc: set of arg syms that some call site passes a shared buffer to}."""
    out = {}
    for p in procs:
        alias = {}
        for s in walk_stmts(p.body):
            if isinstance(s, IR.WindowStmt):
                alias[s.name] = s.rhs.name
            if not isinstance(s, IR.Call) or s.f.instr is not None:
                continue
            roots = {}
            for fa, a in zip(s.f.args, s.args):
                r = arg_root(alias, a)
                if r is not None:
                    roots.setdefault(r, []).append(fa.name)
            for names in roots.values():
                if len(names) > 1:
                    out.setdefault(s.f, set()).update(names)
    return out
