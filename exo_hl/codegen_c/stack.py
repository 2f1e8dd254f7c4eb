"""The stack a procedure's ``DRAM_STATIC`` arrays take, checked against
one budget for the whole call (docs/semantics.md, "Stack budget").

Each array alone is limited by ``DRAM_STATIC.alloc``; here the arrays
live at once count together: in a block, those allocated so far stay live
to its end, and a call adds what the callee needs at its deepest. Past
the budget a thread's stack may overflow, and the process dies with no
message, so C generation refuses the procedure with a located error.
"""
from __future__ import annotations

from ..core_ir.memory import DRAM_STATIC, STACK_TOTAL_BUDGET
from ..core_ir.nodes import IR
from ..core_ir.types import C_TYPES, basetype, shape
from ..errors import MemGenError, located

_C_SIZES = {"float": 4, "double": 8, "_Float16": 2, "int8_t": 1,
            "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4}


def _array_bytes(s):
    """Bytes of the ``DRAM_STATIC`` array ``s`` allocates (0 for another
    memory, a scalar, or sizes that are not constants: alloc refuses
    those)."""
    mem = s.mem
    if mem is None or not issubclass(mem, DRAM_STATIC):
        return 0
    sizes = [_const(h) for h in shape(s.type)]
    if not sizes or None in sizes:
        return 0
    n = _C_SIZES.get(C_TYPES[basetype(s.type)], 8)
    for v in sizes:
        n *= v
    return n


def _const(e):
    """The value of a size made of integer literals, else None."""
    if isinstance(e, IR.Const) and type(e.val) is int:
        return e.val
    if isinstance(e, IR.BinOp) and e.op in ("+", "-", "*"):
        a, b = _const(e.lhs), _const(e.rhs)
        if a is not None and b is not None:
            return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


class _Need:
    def __init__(self, budget):
        self.memo = {}
        self.budget = budget
        self.top = None         # the public procedure checked
        self.first = None       # (bytes, stmt) where its need first passes

    def proc(self, p):
        """(bytes, statement where the most is live, procedure) of ``p``."""
        if p not in self.memo:
            self.memo[p] = (0, None, p)     # recursion cannot happen
            self.memo[p] = self.block(p.body, 0, p)
        return self.memo[p]

    def block(self, stmts, base, p):
        """(bytes, stmt, proc): the most live at once in ``stmts`` of
        ``p``, with ``base`` bytes live around them."""
        live, best = base, (base, None, p)
        for s in stmts:
            step = getattr(self, "s_" + type(s).__name__, None)
            if step is None:
                continue
            live, here = step(s, live, p)
            if p is self.top and self.first is None \
                    and here[0] > self.budget:
                self.first = here
            if here[0] > best[0]:
                best = here
        return best

    # one method per statement kind that allocates or holds statements:
    # (bytes live after it, its (bytes, stmt, proc) at its deepest)
    def s_Alloc(self, s, live, p):
        live += _array_bytes(s)
        return live, (live, s, p)

    def s_Call(self, s, live, p):
        if s.f.instr is not None:
            return live, (live, s, p)
        return live, (live + self.proc(s.f)[0], s, p)

    def s_If(self, s, live, p):
        return live, max(self.block(s.body, live, p),
                         self.block(s.orelse, live, p), key=lambda x: x[0])

    def s_For(self, s, live, p):
        return live, self.block(s.body, live, p)


def check_stack(publics, budget=None):
    """Raise a located MemGenError when a public procedure's call may
    need more than ``budget`` (default ``STACK_TOTAL_BUDGET``) bytes of
    ``DRAM_STATIC`` arrays at once."""
    budget = STACK_TOTAL_BUDGET if budget is None else budget
    need = _Need(budget)
    for p in publics:
        need.top, need.first = p, None
        need.memo.pop(p, None)
        n, at, q = need.proc(p)
        if n > budget:
            n, at, q = need.first or (n, at, q)
            where = getattr(at, "srcinfo", None) or p.srcinfo
            raise MemGenError(located(
                f"its DRAM_STATIC arrays live at once take {n} bytes of "
                f"stack (counting the procedures it calls), more than the "
                f"{budget} a procedure's call may (a thread's stack is a "
                f"few MiB, and overflowing it kills the process): use DRAM "
                f"for some of them", where, q.name))
