"""Two rules of register-like memories the IR does not model, checked at C
generation (docs/api.md §2, ``Memory.exclusive`` / ``Memory.clobbered_by``).

- An *exclusive* memory is one register: two of its buffers live at once
  (an allocation, or a called procedure's, in the scope of another, or of
  an argument in it) would be the same storage.
- An exclusive memory is a register *of each thread*: a buffer in it
  allocated outside a ``par`` loop may not be used in the loop's body
  (the other threads' registers do not hold it), nor may a window of it
  made outside the loop (a window names the same register).
- A memory *clobbered by* a config loses its contents when the config
  changes (AMX: a real ``ldtilecfg`` zeroes every tile). While such a
  buffer is live, a write to the config is refused unless it provably
  writes the value the config already holds.

A buffer is live from its ``Alloc`` to the end of its block. "Provably the
same" is tracked conservatively: a field's value is known after an
instruction wrote a constant to it (an instruction loads the device, so
the device then holds what the IR holds), forgotten after a plain write of
another value, a write in a loop or a called procedure, and at the start
of a procedure or of a parallel loop's body (another thread's device).
"""
from __future__ import annotations

from ..core_ir.buffers import buffer_root, window_aliases
from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.traversal import used_syms, walk_stmts
from ..errors import MemGenError, located


def _ruled(mem):
    return mem is not None and (mem.exclusive() or bool(mem.clobbered_by()))


class _Summary:
    """What a procedure does, callees included: config fields it writes,
    exclusive memories it allocates in (memoized per procedure)."""

    def __init__(self):
        self.memo = {}

    def of(self, p):
        if p not in self.memo:
            self.memo[p] = (frozenset(), frozenset())   # no recursion
            self.memo[p] = self.block(p.body, p.instr is None)
        return self.memo[p]

    def block(self, stmts, emitted):
        """(config fields written, exclusive memories allocated) by
        ``stmts``; allocations count only in emitted code (an instruction's
        body is its meaning, not C)."""
        writes, allocs = set(), set()
        for s in walk_stmts(stmts):
            if isinstance(s, IR.WriteConfig):
                writes.add((s.config, s.field))
            elif isinstance(s, IR.Call):
                w, a = self.of(s.f)
                writes |= w
                allocs |= a if emitted else set()
            elif emitted and isinstance(s, IR.Alloc) and \
                    s.mem is not None and s.mem.exclusive():
                allocs.add(s.mem)
        return writes, allocs


def _const(e, env=None):
    """The constant value of ``e`` (a literal, or an instruction parameter
    bound to one in ``env``), else None."""
    if isinstance(e, IR.Const):
        return e.val
    if env is not None and isinstance(e, IR.Read) and not e.idx:
        return _const(env.get(e.name))
    return None


class _Checker:
    def __init__(self, summary):
        self.summary = summary

    def proc(self, p):
        self.p = p
        self.alias = window_aliases(p.body)    # window -> what it views
        live = [(a.name, a.mem, a.srcinfo) for a in p.args if _ruled(a.mem)]
        self.block(p.body, live, {})

    def fail(self, msg, s):
        raise MemGenError(located(msg, s.srcinfo, self.p.name))

    def block(self, stmts, live, known):
        """Check ``stmts`` with buffers ``live`` around them; ``known``:
        the config values known loaded, updated in place."""
        live = list(live)
        for s in stmts:
            step = getattr(self, "s_" + type(s).__name__, None)
            if step is not None:
                step(s, live, known)

    # one method per statement kind that matters; ``live`` grows in place
    def s_Alloc(self, s, live, known):
        if _ruled(s.mem):
            self.check_alloc(s.mem, s, live, f"allocates '{s.name}'")
            live.append((s.name, s.mem, s.srcinfo))

    def s_WriteConfig(self, s, live, known):
        v, key = _const(s.rhs), (s.config, s.field)
        if v is None or known.get(key, _UNKNOWN) != v:
            self.check_write(s.config, s, live)
            known.pop(key, None)

    def s_If(self, s, live, known):
        k1, k2 = dict(known), dict(known)
        self.block(s.body, live, k1)
        self.block(s.orelse, live, k2)
        known.clear()
        known.update({k: v for k, v in k1.items()
                      if k2.get(k, _UNKNOWN) == v})

    def s_For(self, s, live, known):
        # a later iteration sees the writes of an earlier one
        for key in self.summary.block(s.body, False)[0]:
            known.pop(key, None)
        if is_parallel(s.mode):
            self.check_par_body(s, live)
        inner = {} if is_parallel(s.mode) else dict(known)
        self.block(s.body, live, inner)

    def s_Call(self, s, live, known):
        f = s.f
        writes, allocs = self.summary.of(f)
        for mem in allocs:
            self.check_alloc(mem, s, live, f"calls '{f.name}', which "
                             f"allocates in {mem.name()}")
        if not writes:
            return
        if f.instr is None:
            for cfg in {c for c, _ in writes}:
                self.check_write(cfg, s, live, f"calls '{f.name}', which ")
            for key in writes:
                known.pop(key, None)
            return
        # an instruction: the values it writes at its top level, in order
        env = {a.name: e for a, e in zip(f.args, s.args)}
        new, changed = dict(known), set()
        for b in f.body:
            if isinstance(b, IR.WriteConfig):
                key, v = (b.config, b.field), _const(b.rhs, env)
                if v is None or new.get(key, _UNKNOWN) != v:
                    changed.add(b.config)
                if v is None:
                    new.pop(key, None)
                else:
                    new[key] = v
            else:
                for key in self.summary.block([b], False)[0]:
                    changed.add(key[0])
                    new.pop(key, None)
        for cfg in changed:
            self.check_write(cfg, s, live, f"calls '{f.name}', which ")
        known.clear()
        known.update(new)

    def check_par_body(self, s, live):
        """An exclusive memory is one register of the thread that runs the
        code (an AMX tile): a buffer in it allocated outside a par loop is
        not in the registers of the other threads that run its body, nor
        is a window of it made outside the loop."""
        used = used_syms(tuple(s.body))
        via = {buffer_root(self.alias, v): v for v in used
               if v in self.alias}
        for name, m, _ in live:
            if m.exclusive() and (name in used or name in via):
                how = (f"buffer '{name}'" if name in used else
                       f"window '{via[name]}' of buffer '{name}'")
                self.fail(f"the par loop's body uses {how} in "
                          f"{m.name()}, allocated outside the loop: "
                          f"{m.name()} is a register of each thread, and "
                          f"the other threads' iterations would not see "
                          f"'{name}' (allocate it inside the loop body)", s)

    def check_alloc(self, mem, s, live, what):
        for name, m, _ in live:
            if m is mem and mem.exclusive():
                self.fail(f"it {what} while buffer '{name}' in "
                          f"{mem.name()} is live: {mem.name()} is one "
                          f"register, so the two would be the same storage "
                          f"(end the scope of '{name}' first, or use "
                          f"another register)", s)

    def check_write(self, cfg, s, live, prefix=""):
        for name, m, _ in live:
            if cfg in m.clobbered_by():
                self.fail(f"it {prefix}writes {cfg.name()} (to values not "
                          f"known to be the ones it holds) while buffer "
                          f"'{name}' in {m.name()} is live: a change of "
                          f"{cfg.name()} destroys what {m.name()} holds "
                          f"(configure before allocating '{name}')", s)


_UNKNOWN = object()


def check_memory_rules(procs):
    """Raise a located MemGenError when one of ``procs`` (those emitted)
    breaks an exclusive or config-clobbered memory's rule."""
    checker = _Checker(_Summary())
    for p in procs:
        if p.instr is None:
            checker.proc(p)
