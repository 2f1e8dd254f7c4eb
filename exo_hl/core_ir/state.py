"""Which mutable state control expressions read and statements write.

Control values (arguments, loop iterators, strides) never change once bound;
the only mutable state a control expression can read is a config field.
The IR evaluates each loop bound, condition, allocation size, window and
call argument *once*, where it stands. Any pass that evaluates such an
expression somewhere else (a rewrite substituting it into other statements,
the C backend re-testing a loop bound on every iteration) must first know
that nothing in between writes what the expression reads: these helpers
answer that question, syntactically and conservatively (a write anywhere in
a block, under any condition, through calls too, counts).
"""
from __future__ import annotations


from ..caches import memo
from .nodes import IR, Node
from .traversal import walk, walk_stmts

__all__ = ["config_reads", "config_writes", "instr_config_fields",
           "per_thread_configs", "reads_written_state"]


def _exprs_of_type(t):
    """Size expressions held by a type (tensors, windows)."""
    if isinstance(t, IR.WindowType):
        return _exprs_of_type(t.as_tensor)
    if isinstance(t, IR.Tensor):
        return tuple(t.hi)
    return ()


def config_reads(nodes) -> frozenset:
    """``(config, field)`` pairs read by the expressions (or statements) in
    ``nodes`` -- one node or an iterable of them -- including the size
    expressions inside their types (allocations, windows)."""
    out = set()
    stack = list(_as_tuple(nodes))
    while stack:
        root = stack.pop()
        for n in walk(root):
            if isinstance(n, IR.ReadConfig):
                out.add((n.config, n.field))
            t = getattr(n, "type", None)
            if isinstance(t, (IR.Tensor, IR.WindowType)):
                stack.extend(_exprs_of_type(t))
    return frozenset(out)


def _as_tuple(nodes):
    if isinstance(nodes, Node):
        return (nodes, )
    return tuple(nodes)


def config_writes(stmts) -> frozenset:
    """``(config, field)`` pairs a block may write, through the procedures it
    calls too (an ``@instr`` counts by its semantic body)."""
    out = set()
    for s in walk_stmts(tuple(stmts)):
        if isinstance(s, IR.WriteConfig):
            out.add((s.config, s.field))
        elif isinstance(s, IR.Call):
            out |= _proc_writes(s.f)
    return frozenset(out)


@memo(maxsize=4096)
def _proc_writes(proc) -> frozenset:
    return config_writes(proc.body)


def per_thread_configs(stmts) -> tuple:
    """The per-thread configs (``Config.thread_entry`` set) a block reads or
    writes, through the procedures it calls too, their preconditions
    included (an instruction asserting its tile shape reads the tile
    configuration); sorted by name, for deterministic C."""
    found = set()
    for s in walk_stmts(tuple(stmts)):
        found |= {c for c, _ in config_reads(s) | config_writes((s, ))}
        if isinstance(s, IR.Call):
            found |= _proc_configs(s.f)
    return tuple(sorted((c for c in found if c.thread_entry is not None),
                        key=lambda c: c.name()))


@memo(maxsize=4096)
def _proc_configs(proc) -> frozenset:
    out = {c for c, _ in config_reads(tuple(proc.preds) + tuple(proc.body))
           | config_writes(proc.body)}
    for s in walk_stmts(tuple(proc.body)):
        if isinstance(s, IR.Call):
            out |= _proc_configs(s.f)
    return frozenset(out)


def reads_written_state(exprs, stmts) -> frozenset:
    """The config fields that ``exprs`` read and ``stmts`` may write: empty
    exactly when evaluating ``exprs`` before, during or after ``stmts``
    always gives the same value."""
    read = config_reads(exprs)
    if not read:
        return frozenset()
    return read & config_writes(stmts)


def instr_config_fields(proc) -> dict:
    """``{"Cfg.field": (config, field)}`` for the config fields an ``@instr``
    states it touches -- read by its preconditions or body, or written by its
    body -- the ones its C template may name as ``{Cfg.field}``. The template
    then acts on the very state the body describes (one copy of the config,
    not a model's private registers). A name two distinct configs share is
    left out (``{Cfg.field}`` would be ambiguous)."""
    touched = config_reads(tuple(proc.preds) + tuple(proc.body)) | \
        config_writes(proc.body)
    out, clash = {}, set()
    for cfg, f in touched:
        key = f"{cfg.name()}.{f}"
        if key in out and out[key][0] is not cfg:
            clash.add(key)
        out[key] = (cfg, f)
    for key in clash:
        del out[key]
    return out
