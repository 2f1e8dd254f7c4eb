"""A ``par`` loop of a function with a CPU target, outlined by hand.

OpenMP compilers move the body of ``#pragma omp parallel`` into a function
of their own. GCC gives it the enclosing function's ``target`` attribute;
clang (up to at least 14) does not, so a parallel loop that uses AVX
intrinsics inside an ``EXO_HL_TARGET("avx2,fma")`` function fails to
compile ("AVX vector return ... without 'avx' enabled changes the ABI").
So such a loop becomes a static function of its own, carrying the same
target attribute and holding an orphaned ``#pragma omp for``, called from
a ``#pragma omp parallel`` region whose body is only the call (pointers and
integers: no vector in the compiler's outlined function). Without OpenMP
both pragmas vanish and the call runs the loop serially, as before.

The loop's free symbols become the function's parameters, with the types
the emitter recorded when it bound them. Buffers that cannot be passed as
pointers (register or accelerator memories), and tensors whose sizes read
config state (they would be re-read at the call), keep the loop inline.
The caller's preconditions over the control values passed stay optimizer
hints (``EXO_ASSUME``) in the outlined function.
"""
from __future__ import annotations

from ..core_ir.memory import DRAM
from ..core_ir.nodes import IR
from ..core_ir.state import config_reads
from ..core_ir.traversal import free_vars, walk
from ..core_ir.types import CONTROL_TYPES, is_tensor_or_window


def _passable(t, mem) -> bool:
    if not is_tensor_or_window(t):
        return True
    if not (isinstance(mem, type) and issubclass(mem, DRAM)):
        return False
    return not any(config_reads(h) for h in t.hi)


def outlined_proc(emitter, loop):
    """``(proc, args)``: a procedure whose body is ``loop`` and whose
    parameters are its free symbols, with the caller's argument
    expressions; ``None`` when some free symbol cannot be passed."""
    todo, seen, order = list(free_vars(loop)), set(), []
    while todo:
        sym = todo.pop()
        if sym in seen:
            continue
        seen.add(sym)
        if sym not in emitter.types:
            return None
        t, mem = emitter.types[sym]
        if not _passable(t, mem):
            return None
        if isinstance(t, IR.Tensor):
            todo.extend(free_vars(tuple(t.hi)))
        order.append(sym)
    # sizes before the buffers whose types mention them, then by name
    order.sort(key=lambda s: (isinstance(emitter.types[s][0], IR.Tensor),
                              s.name, id(s)))
    si = loop.srcinfo
    args, actuals = [], []
    for sym in order:
        t, mem = emitter.types[sym]
        args.append(IR.FnArg(sym, t, mem if is_tensor_or_window(t) else None,
                             si))
        actuals.append(IR.Read(sym, (), type=t, srcinfo=si))
    name = f"{emitter.proc.name}_par"
    preds = tuple(kept_preconditions(emitter.proc, set(order)))
    proc = IR.Proc(name, tuple(args), preds, (loop, ), None, si)
    return proc, actuals


def kept_preconditions(proc, passed):
    """The preconditions of ``proc`` that still hold, as written, in a
    function it calls with the symbols ``passed``: those over control
    arguments only (their values cannot change in the caller; every one
    of them is passed unchanged), reading no config state (a statement
    before the loop may have changed it) and no strides (a passed view
    has its own). They become ``EXO_ASSUME`` hints there, as in the
    caller."""
    control = {a.name for a in proc.args if not is_tensor_or_window(a.type)
               and a.type in CONTROL_TYPES}
    for pred in proc.preds:
        syms = free_vars(pred)
        if syms <= (control & passed) and not config_reads(pred) and \
                not any(isinstance(n, IR.StrideExpr) for n in walk(pred)):
            yield pred


def window_param_type(wtype):
    """The parameter type of a window statement's value (a window)."""
    return IR.Tensor(tuple(wtype.as_tensor.hi), True, wtype.as_tensor.type)

