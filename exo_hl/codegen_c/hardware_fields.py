"""Hardware-defined config fields, checked at C generation (docs/api.md,
``@config(hardware_fields=...)``; docs/semantics.md, "Hardware-defined
config").

A hardware-defined field holds a value of the machine (RVV's VLMAX): in C
only the instructions the config names read it from the hardware. What
the checker proved about the field holds on the machine only if no other
code writes it, so in every procedure compiled, a write to such a field
other than a call of one of those instructions is refused: a hand write
(``VL.vlmax = 64``, the algorithm's stand-in left in place of the
instruction), and a call of any other instruction whose body writes it
(its C would not set the machine's value). Writes in called procedures
are refused too: every procedure reached is compiled and checked here.
``interpret()`` does not apply the rule (the stand-in is what an
algorithm runs before ``replace``).

Per-thread config (``@config(thread_entry=...)``, AMX's tile
configuration) is hardware state as well: instructions load it into the
thread's hardware, and par loops re-load it at each iteration's start. A
hand write of one of its fields would change the IR's value but not the
hardware's, which the next instruction reads (AMX: a tile load on an
unconfigured unit faults), so it is refused too; any instruction may
write it (its C is what loads the hardware).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.printer import stmt_to_str
from ..core_ir.traversal import walk_stmts
from ..errors import MemGenError, located


def _hardware_writes(p, memo):
    """The hardware-defined ``(config, field)`` pairs an instruction's
    body writes, callees included (memoized per procedure)."""
    if p not in memo:
        memo[p] = frozenset()        # no recursion
        out = set()
        for s in walk_stmts(p.body):
            if isinstance(s, IR.WriteConfig) and \
                    s.config.hardware_writers(s.field) is not None:
                out.add((s.config, s.field))
            elif isinstance(s, IR.Call):
                out |= _hardware_writes(s.f, memo)
        memo[p] = frozenset(out)
    return memo[p]


def _use(cfg, field):
    names = cfg.hardware_writers(field)
    return " or ".join(f"'{n}'" for n in names)


def _via(p, caller):
    """Where ``p`` is called from, for a message (empty when emitted)."""
    return f" (called from '{caller[p].name}')" if p in caller else ""


def _refuse_per_thread_write(s, p, caller):
    cfg = s.config
    via = _via(p, caller)
    raise MemGenError(located(
        f"it writes {cfg.name()}.{s.field} by hand "
        f"({stmt_to_str(s).strip()}){via}: {cfg.name()} is per-thread "
        f"hardware state (@config(thread_entry=...)), which compiled code "
        f"sets only by calling an instruction that loads it; a hand write "
        f"would change the IR's value but not the hardware's (replace the "
        f"writes with that instruction)", s.srcinfo, p.name))


def check_hardware_fields(procs):
    """Raise a located MemGenError when one of ``procs`` (those emitted)
    writes a hardware-defined config field other than by calling an
    instruction the config names for it."""
    memo, caller = {}, {}
    for p in procs:
        for s in walk_stmts(p.body):
            if isinstance(s, IR.Call) and s.f.instr is None:
                caller.setdefault(s.f, p)
    for p in procs:
        if p.instr is not None:
            continue
        for s in walk_stmts(p.body):
            if isinstance(s, IR.WriteConfig):
                if s.config.hardware_writers(s.field) is None:
                    if s.config.thread_entry is not None:
                        _refuse_per_thread_write(s, p, caller)
                    continue
                what = (f"writes {s.config.name()}.{s.field} by hand "
                        f"({stmt_to_str(s).strip()})")
                pairs = [(s.config, s.field)]
            elif isinstance(s, IR.Call) and s.f.instr is not None:
                pairs = [(c, f) for c, f in sorted(
                    _hardware_writes(s.f, memo),
                    key=lambda cf: (cf[0].name(), cf[1]))
                    if s.f.name not in c.hardware_writers(f)]
                if not pairs:
                    continue
                cfg, f = pairs[0]
                what = (f"calls instruction '{s.f.name}' "
                        f"({stmt_to_str(s).strip()}), whose body writes "
                        f"{cfg.name()}.{f}")
            else:
                continue
            cfg, f = pairs[0]
            raise MemGenError(located(
                f"it {what}{_via(p, caller)}: {cfg.name()}.{f} is hardware-defined (its "
                f"value is the machine's, which the C reads from the "
                f"hardware), so compiled code may write it only by calling "
                f"{_use(cfg, f)} (replace the write with that instruction)",
                s.srcinfo, p.name))
