"""``lift_alloc(alloc, n_lifts=1)``: hoist an allocation out of loops/ifs.

``for i: (t: f32[n]; s)`` becomes ``t: f32[n]; for i: s`` (likewise out of an
``if``), repeated ``n_lifts`` levels outward. The allocation is placed
directly before the statement it was lifted out of.

Semantics (following Exo): a fresh allocation is *uninitialized*. Lifting it
out of a loop makes every iteration share one buffer, so a value could only
flow from one iteration to the next if an iteration read the buffer before
writing it, which reads an uninitialized value and is already meaningless in
the original. Hence no dataflow check is needed, except for a local scalar:
it starts at zero (docs/semantics.md), so one lifted out of a loop must be
overwritten before it is read in its block (``zero_start_read``). What must
hold:

- the buffer's size may not mention a symbol bound inside what it leaves
  (the iterators of the lifted loops), nor read a configuration field
  that may be written between its old and new point of evaluation (the
  whole body of a loop it leaves, the statements before it in an ``if``):
  its sizes are evaluated once, where the allocation stands;
- it cannot leave a ``par`` loop: the iterations would then share one buffer
  and race (each parallel iteration owned a private copy before).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.types import is_real_scalar
from ..core_ir.traversal import free_vars
from ..core_ir.buffers import zero_start_read, zero_start_refusal
from ..provenance import derive
from . import _common as C


def lift_alloc(proc, alloc, n_lifts=1):
    path, s = C.resolve_stmt(proc, alloc, "lift_alloc")

    def err(msg, st=s):
        return C.scheduling_error(proc, st, "lift_alloc: " + msg)

    if not isinstance(s, IR.Alloc):
        raise err("expected an allocation statement")
    if not C.is_count(n_lifts):
        raise err(f"n_lifts must be a positive int, got {n_lifts!r}")
    size_vars = free_vars(tuple(_sizes(s.type)))

    ir = proc.ir()
    cur = tuple(path)
    fwds = []
    for level in range(n_lifts):
        if len(cur) < 2:
            raise err(f"cannot lift {level + 1} level(s): the allocation is "
                      f"only inside {level} loop(s)/if(s)")
        parent_path = cur[:-1]
        parent = C.get_stmt(ir, parent_path)
        if isinstance(parent, IR.For):
            if parent.iter in size_vars:
                raise err(f"its size depends on the iterator "
                          f"'{parent.iter.name}' of the loop it would leave")
            f, k = cur[-1]
            zero_read = zero_start_read(getattr(parent, f)[k + 1:], s.name) \
                if is_real_scalar(s.type) else None
            if zero_read is not None:
                raise err(zero_start_refusal(
                    s.name.name, "shared by the iterations, it would hold "
                    "the previous iteration's value",
                    f" in each iteration of the loop '{parent.iter.name}'"),
                    zero_read)
            if is_parallel(parent.mode):
                raise err(f"cannot lift out of the parallel loop "
                          f"'{parent.iter.name}': its iterations would share "
                          f"one buffer and race", parent)
        elif not isinstance(parent, IR.If):
            raise err("the allocation is not inside a loop or if")
        field, k = cur[-1]
        block = getattr(parent, field)
        # lifted, the sizes are evaluated once before the statement: not
        # after the statements before the allocation, nor (out of a loop)
        # after the earlier iterations
        C.check_moved(proc, "lift_alloc", [C.Moved(
            "allocation sizes", s, _sizes(s.type),
            parent.body if isinstance(parent, IR.For) else block[:k],
            f"the sizes of '{s.name.name}'",
            f"the loop '{parent.iter.name}'" if isinstance(parent, IR.For)
            else "the statements before it in the if")])
        rest = block[:k] + block[k + 1:]
        if not rest:
            rest = (IR.Pass(srcinfo=s.srcinfo), )
        new_parent = parent.update(**{field: rest})
        ir = C.replace_stmts_at(ir, parent_path, (s, new_parent))
        fwds.append(C.forward_hoist(cur))
        cur = parent_path
    return derive(proc, ir, "lift_alloc", forward=C.forward_compose(*fwds))


def _sizes(t):
    return t.hi if isinstance(t, IR.Tensor) else ()
