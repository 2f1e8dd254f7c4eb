"""A ``par`` loop, outlined by hand into a static function.

Two reasons. OpenMP compilers move the body of ``#pragma omp parallel``
into a function of their own; GCC gives it the enclosing function's
``target`` attribute, clang (up to at least 14) does not, so a parallel
loop that uses AVX intrinsics inside an ``EXO_HL_TARGET("avx2,fma")``
function would not compile there ("AVX vector return ... without 'avx'
enabled changes the ABI"). And a parallel region costs about a
microsecond even when OpenMP gives it one thread, which is most of a
small call's time.

So the loop becomes a static function of its own, with the caller's
target attribute, that runs a block of the iterations: thread ``thread``
of ``threads`` takes the ``thread``-th of ``threads`` nearly equal
consecutive blocks (``exo_hl_share``: OpenMP's static schedule, written
out). The caller runs it in a ``#pragma omp parallel`` region whose body
is only the call, passing ``omp_get_thread_num()`` and
``omp_get_num_threads()`` (pointers and integers: no vector in the
compiler's outlined function), when OpenMP would run more than one thread
(``omp_get_max_threads() > 1``); otherwise, and in a build without
OpenMP, it calls the function once with ``0, 1``: the whole loop, with no
parallel region. No worksharing construct is involved, so the function is
correct however calls nest.

A ``par_dynamic`` loop's function shares the iterations out instead:
the caller zeroes a counter before the region and passes its address
last (``exo_hl_next``), and each thread takes the next iteration from it
(``exo_hl_claim``, an OpenMP atomic capture) until none is left; the
thread parameters stay, unused.

The loop's free symbols become the function's parameters, with the types
the emitter recorded when it bound them. Buffers that cannot be passed as
pointers (register or accelerator memories), and tensors whose sizes read
config state (they would be re-read at the call), keep the loop inline,
under ``#pragma omp parallel for``. The caller's preconditions over the
control values passed stay optimizer hints (``EXO_ASSUME``) in the
outlined function.
"""
from __future__ import annotations

from ..core_ir.memory import DRAM
from ..core_ir.nodes import IR
from ..core_ir.state import config_reads
from ..core_ir.syms import Sym
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
    expressions, then two index parameters, ``thread`` and ``threads``,
    that the caller passes itself: the procedure runs the share of the
    iterations of thread ``thread`` of ``threads``. ``None`` when some
    free symbol cannot be passed."""
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
    # the share of the iterations to run: thread `thread` of `threads`
    for part in ("thread", "threads"):
        args.append(IR.FnArg(Sym(part), IR.Index, None, si))
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

