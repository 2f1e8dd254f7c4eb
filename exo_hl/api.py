"""``Procedure``: the user-facing handle on an IR procedure.

This module is a thin facade. Each scheduling method forwards to exactly one
rewrite module under ``exo_hl.rewrites`` (``p.split`` -> ``rewrites/split.py``),
and seeing/running/compiling forward to ``core_ir`` and ``codegen_c``.
A ``Procedure`` is immutable: every method returns a new one that records the
procedure and operation it was derived from (its provenance).

Why one module of this size: one short, documented method per scheduling
primitive (docstrings with examples make up most of it); each forwards
to its rewrite module.
"""
from __future__ import annotations

from typing import Optional

from .errors import SchedulingError
from .feedback import user_facing
from .provenance import Derived, derive, is_eq


def _records_step(method):
    """Remember the user's call on the procedure it returns, for
    ``history()`` (internal derivation steps stay unrecorded). Errors are
    re-raised at the user's call, and each call is logged with its time
    (``feedback.user_facing``)."""
    import functools

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        if isinstance(result, Procedure) and result is not self:
            from .display import StepText, named_objects
            object.__setattr__(result, "_step",
                               (self, StepText(method.__name__, args,
                                               kwargs),
                                named_objects(args, kwargs)))
        return result
    return user_facing(wrapper)


class Procedure(Derived):
    """A procedure to inspect, schedule, run and compile; immutable.

    Every scheduling method returns a new ``Procedure`` that records this
    one as its parent (``provenance.Derived``).

    >>> p = gemm.split('i', 4, 'io', 'ii')     # a new Procedure
    >>> print(p)                               # source that @proc reads back
    >>> p.compile()(M, N, K, A, B, C)          # run the generated C
    """
    __slots__ = ()

    # ------------------------------------------------------------------
    # identity and provenance
    def name(self) -> str:
        """The procedure's name (the C function's name).

        >>> gemm.name()
        'gemm'
        """
        return self._ir.name

    def ir(self):
        """The underlying immutable IR (``IR.Proc``).

        >>> len(gemm.ir().args)
        6
        """
        return self._ir

    def is_instr(self) -> bool:
        """True for an ``@instr`` (calls compile to its C template).

        >>> mm256_loadu_ps.is_instr(), gemm.is_instr()
        (True, False)
        """
        return self._ir.instr is not None

    def parent(self) -> Optional["Procedure"]:
        """The procedure this one was derived from, or None.

        >>> gemm.split('i', 4, 'io', 'ii').parent() is gemm
        True
        """
        return self._parent

    def derivation(self):
        """[(op, procedure)] from the root algorithm down to this procedure.

        >>> [op for op, _ in gemm.reorder('j', 'k').derivation()]
        ['', 'reorder']
        """
        chain = []
        p = self
        while p is not None:
            chain.append((p._op, p))
            p = p._parent
        return list(reversed(chain))

    def _derive(self, new_ir, op: str, equiv_mod=frozenset(), forward=None):
        """``provenance.derive(self, ...)``: kept for rewrites written
        against the method."""
        return derive(self, new_ir, op, equiv_mod=equiv_mod, forward=forward)

    # ------------------------------------------------------------------
    # seeing
    def __str__(self):
        from .core_ir.printer import proc_to_str
        return proc_to_str(self._ir)

    def __repr__(self):
        return f"<Procedure {self.name()}>"

    def _repr_pretty_(self, p, cycle):  # IPython / notebooks
        p.text(str(self))

    def _repr_html_(self):
        """Syntax-highlighted source, for notebooks."""
        from .display import highlight_html
        return highlight_html(str(self))

    def diff(self, other: "Procedure"):
        """The lines that changed from this procedure to ``other``: unified
        text when printed, coloured HTML in a notebook.

        >>> print(p.diff(p.split('i', 4, 'io', 'ii')))
        """
        from .display import ProcDiff
        return ProcDiff(str(self), str(other), self.name(), other.name())

    def history(self) -> str:
        """The scheduling calls that produced this procedure from its
        ``@proc``, as a Python snippet that re-runs them: first the imports
        of the procedures, instructions, memories and configs it names, so
        ``exec(p.history())`` rebuilds ``p`` in a fresh namespace.

        >>> print(fast.history())
        from __main__ import sgemm
        p = sgemm
        p = p.split('i', 4, 'io', 'ii', tail='perfect')
        ...
        """
        from .display import import_lines
        steps, named, p = [], [], self
        while p is not None:
            if p._step is not None:
                receiver, text, objs = p._step
                steps.append(str(text))
                named[:0] = objs
                p = receiver
            else:
                if p._parent is None:
                    break
                p = p._parent
        root = p if p is not None else self
        imports = import_lines([(root.name(), root)] + named)
        return "\n".join(imports + [f"p = {root.name()}"] +
                         [f"p = {t}" for t in reversed(steps)])

    # ------------------------------------------------------------------
    # running
    def interpret(self, *args, **kwargs):
        """Run the reference interpreter; numpy arrays are updated in place.

        >>> p.interpret(M=8, N=16, K=4, A=A, B=B, C=C)
        """
        from .core_ir.interpret import run_interpreter
        return run_interpreter(self._ir, args, kwargs)

    @user_facing
    def compile(self, **opts):
        """Build the generated C into a cached shared library and return a
        callable with this procedure's signature.

        Options: ``cc``, ``cflags``, ``openmp``, ``sanitize``, ``emulate``
        (run CPU features the host lacks through the emulation layer),
        ``target`` (the instruction set the .so is built for: ``'host'``,
        the default, or ``'x86-64'``, ``'x86-64-v3'``, ``'avx2'``,
        ``'avx512'``, ``'x86-64-v4'``). Flags: ``cflags``, else
        ``$CFLAGS``, else ``-O3 -march=native`` (``-O3`` if the compiler
        refuses it); a named target adds its ``-march`` to ``cflags`` (or
        ``-O3``). ``EXO_HL_LOG=debug`` logs the compiler command. The
        callable validates arguments and the host CPU (and the target's
        features) before any C runs.

        >>> fast = p.compile(); fast(8, 16, 4, A, B, C)
        """
        from .codegen_c.loading import compile_callable
        return compile_callable(self, **opts)

    @user_facing
    def c_code_str(self) -> str:
        """The generated header and C source, as one string.

        >>> print(gemm.c_code_str())          # what exo-hl compile writes
        """
        from .codegen_c.emit import c_code_str
        return c_code_str([self])

    # ------------------------------------------------------------------
    # scheduling: each method forwards to one rewrite module
    #
    # Every method returns a NEW procedure and leaves the receiver alone; an
    # unsafe or impossible request raises ``SchedulingError`` naming the
    # check that failed and the statement. Targets are patterns or cursors.

    @_records_step
    def split(self, loop, factor, outer, inner, tail="guard"):
        """Split ``loop`` into ``outer`` and ``inner`` loops,
        ``i = factor * outer + inner``.

        ``tail``: ``'guard'`` (an ``if`` guards the remainder), ``'cut'`` (a
        separate remainder loop) or ``'perfect'`` (the trip count is proven
        divisible by ``factor``, else ``SchedulingError``). The loop bounds
        must not read state the body writes.

        >>> p = gemm.split('i', 4, 'io', 'ii', tail='perfect')
        """
        from .rewrites.split import split
        return split(self, loop, factor, outer, inner, tail=tail)

    @_records_step
    def reorder(self, outer_loop, inner_loop=None):
        """Swap two directly nested loops (``inner_loop`` defaults to the
        loop directly inside ``outer_loop``).

        Checked: the inner loop's bounds do not depend on the outer
        iteration variable, and the body's iterations commute.

        >>> p = p.reorder('ii', 'jo')
        """
        from .rewrites.reorder import reorder
        return reorder(self, outer_loop, inner_loop)

    @_records_step
    def unroll(self, loop):
        """Replace a loop with constant bounds by one copy of its body per
        iteration.

        >>> p = p.unroll('ii')
        """
        from .rewrites.unroll import unroll
        return unroll(self, loop)

    @_records_step
    def inline(self, call):
        """Inline a call site: the callee's body with its arguments
        substituted (windows become indexed views of the caller's buffers).

        >>> p = p.inline('foo(_)')
        """
        from .rewrites.inline import inline
        return inline(self, call)

    @_records_step
    def set_memory(self, buffer, mem):
        """Move an allocation (or argument) to the memory class ``mem``.

        Checked by the memory itself (shape, element type) and by every
        call receiving the buffer.

        >>> p = p.set_memory('C_reg', DRAM_STATIC)
        """
        from .rewrites.set_memory import set_memory
        return set_memory(self, buffer, mem)

    @_records_step
    def set_precision(self, buffer, typ):
        """Change a buffer's data type (``'f64'`` or ``f64``). This changes
        what the procedure computes: the result is not ``is_eq`` to it, and
        ``call_eqv`` will not swap one for the other.

        >>> p = p.set_precision('acc', 'f64')
        """
        from .rewrites.set_precision import set_precision
        return set_precision(self, buffer, typ)

    @_records_step
    def call_eqv(self, call, new_proc):
        """Call ``new_proc`` at a call site of a procedure it was derived
        from by scheduling (equivalence known by provenance).

        >>> p = p.call_eqv('kernel(_)', fast_kernel)
        """
        from .rewrites.call_eqv import call_eqv
        return call_eqv(self, call, new_proc)

    @_records_step
    def bind_expr(self, expr, new_name, cse=False, precision=None):
        """``s`` → ``new_name: R; new_name = e; s[e ↦ new_name]``: bind an
        expression to a new scalar (``cse=True``: every equal occurrence in
        the statement block). ``R`` is the narrowest type proven to hold
        the value as the statements use it; ``precision`` (``'f32'``,
        ``f64``, ...) asks for that type instead, refused unless it is
        proven to hold it too.

        >>> p = p.bind_expr('A[i, k]', 'a')
        """
        from .rewrites.bind_expr import bind_expr
        return bind_expr(self, expr, new_name, cse=cse, precision=precision)

    @_records_step
    def stage_mem(self, block, window, new_name, accum=False):
        """Stage ``window`` of a buffer into a new buffer around ``block``.

        Adds the allocation, a load nest before the block (only if the block
        reads the buffer), the block re-indexed, and a store nest after it
        (only if the block writes it); ``accum=True`` zero-initialises and
        adds back with ``+=``. Checked: the window covers every access of
        the block. A window running past the buffer (the last block of a
        split loop) gets guarded copies: only elements inside the buffer
        are loaded (the others are 0) and stored back, and every access of
        the block is proven inside the buffer. The buffer may itself be a
        staged buffer (staging twice).

        >>> p = p.stage_mem(p.find_loop('k'), 'C[4*io:4*io+4, 0:16]', 'C_reg')
        >>> q = p.stage_mem(p.find_loop('ii'), 'x[8*io:8*io+8]', 'xv')
        >>> # for i0 in seq(0, 8): if i0 < n - 8 * io: xv[i0] = x[8 * io + i0]
        >>> #                      else: xv[i0] = 0.0
        """
        from .rewrites.stage_mem import stage_mem
        return stage_mem(self, block, window, new_name, accum=accum)

    @_records_step
    def bind_config(self, expr, config, field):
        """``s`` → ``Config.field = e; s[e ↦ Config.field]``, checked in
        context (no later read of the field sees a different value).

        >>> p = p.bind_config('stride(A, 0)', ConfigLoad, 'src_stride')
        """
        from .rewrites.bind_config import bind_config
        return bind_config(self, expr, config, field)

    @_records_step
    def lift_alloc(self, alloc, n_lifts=1):
        """Move an allocation out of ``n_lifts`` enclosing loops or ifs
        (its size must not depend on what it leaves).

        >>> p = p.lift_alloc('t : _', n_lifts=2)
        """
        from .rewrites.lift_alloc import lift_alloc
        return lift_alloc(self, alloc, n_lifts=n_lifts)

    @_records_step
    def fission_after(self, stmt, n_lifts=1):
        """Split the ``n_lifts`` enclosing loops after ``stmt``, so what
        precedes it runs for all iterations first. Checked: the two parts
        commute across iterations.

        >>> p = p.fission_after('C[_] = 0.0', n_lifts=2)
        """
        from .rewrites.fission_after import fission_after
        return fission_after(self, stmt, n_lifts=n_lifts)

    @_records_step
    def reorder_stmts(self, s1, s2=None):
        """``s1; s2`` → ``s2; s1`` (``s2`` directly follows ``s1``),
        checked: the two statements commute. As in Exo, ``s1`` may also be
        a block of the two statements.

        >>> p = p.reorder_stmts('x = _', 'y = _')
        >>> p = p.reorder_stmts(p.find('x = _').expand(0, 1))   # Exo's
        """
        from .rewrites.exo_aliases import block_pair
        s1, s2 = block_pair(self, s1, s2)
        from .rewrites.reorder_stmts import reorder_stmts
        return reorder_stmts(self, s1, s2)

    @_records_step
    def configwrite_at(self, stmt, config, field, expr, before=False):
        """Insert ``config.field = expr`` after (or before) ``stmt``; the
        result is equivalent modulo that field, checked in context.

        >>> p = p.configwrite_at('ld(_)', ConfigLoad, 'src_stride', 'N')
        """
        from .rewrites.configwrite_at import configwrite_at
        return configwrite_at(self, stmt, config, field, expr, before=before)

    @_records_step
    def replace(self, block, sub_proc):
        """Replace ``block`` by a call to ``sub_proc`` (usually an
        ``@instr``), its arguments found by unification; the callee's
        preconditions must be proven at the call.

        >>> p = p.replace(p.find_loop('ji'), mm256_fmadd_bcst_ps)
        """
        from .rewrites.replace import replace
        return replace(self, block, sub_proc)

    @_records_step
    def add_guard(self, stmt, cond):
        """``s`` → ``if cond: s else: s`` (a no-op that exposes ``cond`` to
        later rewrites).

        >>> p = p.add_guard('C[_] += _', 'k == 0')
        """
        from .rewrites.add_guard import add_guard
        return add_guard(self, stmt, cond)

    @_records_step
    def insert_noop_call(self, gap, callee, args):
        """Insert a call of ``callee`` (with ``args``, expression strings
        parsed at the gap) whose body changes no value: it may only read
        its arguments (e.g. a cache prefetch). Re-checked like a call
        written by hand: types, windows in bounds, preconditions.

        >>> p = p.insert_noop_call(p.find_loop('k').body()[0].before(),
        ...                        mm_prefetch_t0, ['B[k + 8, 16 * j:16 * j + 16]'])
        """
        from .rewrites.insert_noop_call import insert_noop_call
        return insert_noop_call(self, gap, callee, args)

    @_records_step
    def fuse_loop(self, loop1, loop2=None):
        """Fuse two consecutive loops with equal bounds, checked: moving
        the second body into the first commutes.

        >>> p = p.fuse_loop('i', 'i #1')
        """
        from .rewrites.fuse_loop import fuse_loop
        return fuse_loop(self, loop1, loop2)

    @_records_step
    def lift_if(self, if_stmt, n_lifts=1):
        """Move a loop-invariant ``if`` outside ``n_lifts`` enclosing loops.

        >>> p = p.lift_if('if _: _')
        """
        from .rewrites.lift_if import lift_if
        return lift_if(self, if_stmt, n_lifts=n_lifts)

    @_records_step
    def partition_loop(self, loop, cut):
        """``for i in seq(lo, hi)`` → ``seq(lo, cut)`` then ``seq(cut, hi)``;
        ``cut`` (an int or control expression) is proven in ``[lo, hi]``.

        >>> p = p.partition_loop('i', 8)
        """
        from .rewrites.partition_loop import partition_loop
        return partition_loop(self, loop, cut)

    @_records_step
    def remove_loop(self, loop):
        """``for i: s`` → ``s`` when ``i`` is unused, ``s`` is idempotent
        and the loop provably runs at least once.

        >>> p = p.remove_loop('ii')
        """
        from .rewrites.remove_loop import remove_loop
        return remove_loop(self, loop)

    @_records_step
    def parallelize(self, loop, dynamic=False):
        """``seq`` → ``par`` after proving the iterations race-free (no
        iteration touches a location another writes); ``dynamic=True``:
        ``par_dynamic``, whose threads take the iterations one at a time
        in C (for iterations of uneven cost, or threads that another
        process slows down). A parallel loop changes kind without a new
        proof.

        >>> p = p.parallelize('io')
        >>> p = p.parallelize('io', dynamic=True)
        """
        from .rewrites.parallelize import parallelize
        return parallelize(self, loop, dynamic)

    @_records_step
    def rename(self, new_name):
        """The same procedure under a new name.

        >>> fast = p.rename('sgemm_fast')
        """
        from .rewrites.rename import rename
        return rename(self, new_name)

    @_records_step
    def simplify(self):
        """Simplify index and control arithmetic (preconditions only with
        facts that hold before them).

        >>> p = p.simplify()
        """
        from .rewrites.simplify import simplify
        return simplify(self)

    @_records_step
    def partial_eval(self, *args, **sizes):
        """Specialise size arguments to constants (positionally or by
        name); the constants must satisfy the preconditions.

        >>> p64 = p.partial_eval(N=64)
        """
        from .rewrites.partial_eval import partial_eval
        return partial_eval(self, *args, **sizes)

    @_records_step
    def make_instr(self, c_template, c_global="", cpu_features=()):
        """Turn this procedure into an ``@instr`` whose calls compile to
        ``c_template`` (the body stays its meaning).

        >>> ld = load16.make_instr('{dst_data} = _mm512_loadu_ps(&{src_data});',
        ...                        cpu_features={'avx512f'})
        """
        from .rewrites.make_instr import make_instr
        return make_instr(self, c_template, c_global=c_global,
                          cpu_features=cpu_features)

    @user_facing
    def cpu_features(self) -> frozenset:
        """Every CPU feature this procedure needs (GCC names), through the
        instructions it calls and the memories it uses: its compiled code
        runs only on CPUs that have all of them.

        >>> fast.cpu_features()
        frozenset({'avx2', 'fma'})
        """
        from .core_ir.cpu_features import proc_features
        return proc_features(self._ir)

    @_records_step
    def expand_dim(self, buffer, alloc_dim, indexing_expr):
        """Add a leading dimension of size ``alloc_dim`` to a buffer, every
        access indexed by ``indexing_expr`` (proven in range).

        >>> p = p.expand_dim('t', 16, 'j')
        """
        from .rewrites.expand_dim import expand_dim
        return expand_dim(self, buffer, alloc_dim, indexing_expr)

    @_records_step
    def divide_dim(self, buffer, dim, factor):
        """Split dimension ``dim`` of a buffer into ``[n / factor, factor]``
        (the size must be divisible).

        >>> p = p.divide_dim('C_reg', 1, 16)
        """
        from .rewrites.divide_dim import divide_dim
        return divide_dim(self, buffer, dim, factor)

    @_records_step
    def rearrange_dim(self, buffer, permute_vector):
        """Permute the dimensions of an allocated buffer (Exo's
        ``rearrange_dim``): new dimension ``k`` is old dimension
        ``permute_vector[k]``, and every access is re-indexed to match, so
        each reads and writes the element it did before. Rejected: a
        vector that is not a permutation, an argument, the buffer passed
        whole to a call, a window whose slices the permutation reorders.

        >>> p = p.rearrange_dim('B_pack : _', [1, 0])
        >>> # B_pack: f32[K, 16] -> f32[16, K]; B_pack[k, ji] -> B_pack[ji, k]
        """
        from .rewrites.rearrange_dim import rearrange_dim
        return rearrange_dim(self, buffer, permute_vector)

    @_records_step
    def unroll_buffer(self, buffer, dim):
        """Replace a buffer by one buffer per index of constant dimension
        ``dim`` (every access must use a constant index there).

        >>> p = p.unroll_buffer('t', 0)
        """
        from .rewrites.unroll_buffer import unroll_buffer
        return unroll_buffer(self, buffer, dim)

    @_records_step
    def delete_pass(self):
        """Remove every ``pass`` statement.

        >>> p = p.delete_pass()
        """
        from .rewrites.delete_pass import delete_pass
        return delete_pass(self)

    @_records_step
    def shift_loop(self, loop, new_lo):
        """``for i in seq(lo, hi)`` → ``seq(new_lo, hi - lo + new_lo)``,
        the body re-indexed. ``new_lo``: an int or a control expression
        string (config fields allowed), provably non-negative.

        >>> p = p.shift_loop('i', 0)
        >>> p = p.shift_loop('i', 'n - 4')
        """
        from .rewrites.shift_loop import shift_loop
        return shift_loop(self, loop, new_lo)

    # loop primitives under Exo's names (API.md section 9)
    @_records_step
    def cut_loop(self, loop, cut):
        """Exo's name for ``partition_loop``: ``seq(lo, hi)`` →
        ``seq(lo, cut)`` then ``seq(cut, hi)``, ``lo <= cut <= hi`` proven.

        >>> p = p.cut_loop('i', 'n - 4')
        """
        from .rewrites.cut_loop import cut_loop
        return cut_loop(self, loop, cut)

    @_records_step
    def unroll_loop(self, loop, factor=None):
        """Unroll ``factor`` iterations into the body; a remainder loop
        runs the rest unless ``factor`` provably divides the trip count.
        Without ``factor`` (Exo's spelling), unroll the loop completely,
        as ``unroll``.

        >>> p = p.unroll_loop('i', 4)
        >>> p = p.unroll_loop('ii')          # == p.unroll('ii')
        """
        if factor is None:
            from .rewrites.unroll import unroll
            return unroll(self, loop)
        from .rewrites.unroll_loop import unroll_loop
        return unroll_loop(self, loop, factor)

    @_records_step
    def lift_scope(self, stmt):
        """Swap a loop or if with the loop or if directly enclosing it
        (as ``reorder`` / ``lift_if``, or ``if c: for i: s`` →
        ``for i: if c: s``), with those rewrites' checks.

        >>> p = p.lift_scope(p.find_loop('j'))
        """
        from .rewrites.lift_scope import lift_scope
        return lift_scope(self, stmt)

    @_records_step
    def specialize(self, block, conds):
        """``s`` → ``if c1: s elif c2: s ... else: s`` for control
        conditions ``conds`` (a string or a list of strings).

        >>> p = p.specialize(p.find_loop('i'), ['n == 8', 'n == 16'])
        """
        from .rewrites.specialize import specialize
        return specialize(self, block, conds)

    @_records_step
    def join_loops(self, loop1, loop2):
        """``for i in seq(a, b): s; for i in seq(b, c): s`` →
        ``for i in seq(a, c): s`` (equal bodies, ``a <= b <= c`` proven).

        >>> p = p.join_loops('i', 'i #1')
        """
        from .rewrites.join_loops import join_loops
        return join_loops(self, loop1, loop2)

    @_records_step
    def mult_loops(self, outer, inner, new_name=None):
        """Collapse ``for i: for j in seq(c, c + w): s`` (``w`` constant)
        into one loop ``new_name`` over ``(hi - lo) * w`` iterations.
        Exo's spelling ``mult_loops('i j', 'ij')`` names the nest in one
        pattern.

        >>> p = p.mult_loops('i', 'j', 'ij')
        >>> p = p.mult_loops('i j', 'ij')                    # Exo's
        """
        if new_name is None:
            from .rewrites.exo_aliases import split_nest
            outer, inner, new_name = split_nest(self, outer, "mult_loops") \
                + (inner, )
        from .rewrites.mult_loops import mult_loops
        return mult_loops(self, outer, inner, new_name)

    @_records_step
    def divide_with_recompute(self, loop, outer_hi, outer_stride, new_iters):
        """``for i in seq(0, n)`` → ``for o in seq(0, outer_hi): for ii in
        seq(0, n - (outer_hi - 1) * outer_stride)`` with ``i = outer_stride
        * o + ii``: overlapping blocks whose overlap is recomputed (checked:
        every iteration may run again with the same result).

        >>> p = p.divide_with_recompute('y', 'n / 32', 32, ['yo', 'yi'])
        """
        from .rewrites.divide_with_recompute import divide_with_recompute
        return divide_with_recompute(self, loop, outer_hi, outer_stride,
                                     new_iters)
    # -- buffer and expression rewrites (Exo's names) ---------------------
    @_records_step
    def sink_alloc(self, alloc):
        """Move an allocation into the loop or if that directly follows it
        (the inverse of ``lift_alloc``). Checked: the buffer is not used
        after it, and no loop iteration reads a value an earlier one left.

        >>> p = p.sink_alloc('t : _')
        """
        from .rewrites.sink_alloc import sink_alloc
        return sink_alloc(self, alloc)

    @_records_step
    def delete_buffer(self, alloc):
        """Remove an allocation that nothing in its scope uses.

        >>> p = p.delete_buffer('t : _')
        """
        from .rewrites.delete_buffer import delete_buffer
        return delete_buffer(self, alloc)

    @_records_step
    def eliminate_dead_code(self, stmt):
        """Replace an ``if`` whose condition is proven always true (false)
        by its body (else branch); remove a loop proven to run zero times.

        >>> p = p.eliminate_dead_code('if _: _')
        """
        from .rewrites.eliminate_dead_code import eliminate_dead_code
        return eliminate_dead_code(self, stmt)

    @_records_step
    def inline_assign(self, assign):
        """``x = e; s`` → ``s[x ↦ e]``: replace the following reads of the
        assigned location by the assigned expression while both keep their
        values, then drop the write when nothing can read it any more.

        >>> p = p.inline_assign('t = _')
        """
        from .rewrites.inline_assign import inline_assign
        return inline_assign(self, assign)

    @_records_step
    def inline_loop(self, loop):
        """``for i: t[i + r] = e(i)`` followed by reads ``t[f]`` → the reads
        become ``e(f - r)``, each proven to lie in the range the loop nest
        assigns while ``e`` keeps its value (the nest stays, a dead store:
        ``eliminate_dead_code`` removes it).

        >>> p = p.inline_loop('i')
        """
        from .rewrites.inline_loop import inline_loop
        return inline_loop(self, loop)

    @_records_step
    def commute_expr(self, expr):
        """``a op b`` → ``b op a`` for a commutative ``op`` (``+ * ==
        and or``).

        >>> p = p.commute_expr(p.find('x[_] * y[_]'))
        """
        from .rewrites.commute_expr import commute_expr
        return commute_expr(self, expr)

    @_records_step
    def merge_writes(self, block):
        """``x = a; x += b`` → ``x = a + b`` and ``x += a; x += b`` →
        ``x += a + b`` (same location; ``b`` must not read it).

        >>> p = p.merge_writes(('y[_] = _', 'y[_] += _'))
        """
        from .rewrites.merge_writes import merge_writes
        return merge_writes(self, block)

    @_records_step
    def rewrite_expr(self, expr, new_expr):
        """Replace a control expression by ``new_expr`` (a string or int),
        proven equal to it where it is evaluated.

        >>> p = p.rewrite_expr(p.find_loop('i').hi(), '4 * (n / 4)')
        """
        from .rewrites.rewrite_expr import rewrite_expr
        return rewrite_expr(self, expr, new_expr)

    @_records_step
    def reuse_buffer(self, buf, other):
        """Use ``other``'s storage for ``buf``: ``buf``'s allocation goes,
        its uses name ``other``. Checked: same element type, shape and
        memory, and ``other`` is never touched again once ``buf`` exists.

        >>> p = p.reuse_buffer('t2 : _', 't1 : _')
        """
        from .rewrites.reuse_buffer import reuse_buffer
        return reuse_buffer(self, buf, other)

    @_records_step
    def resize_dim(self, alloc, dim, size, offset, fold=False):
        """Give dimension ``dim`` of an allocation the extent ``size``,
        every index ``e`` there becoming ``e - offset`` (proven in
        ``[0, size)``). ``fold=True``: a circular buffer, indices
        ``(e - offset) % size``, proven safe by the reuse distance.

        >>> p = p.resize_dim('t : _', 0, 3, 'y', fold=True)
        """
        from .rewrites.resize_dim import resize_dim
        return resize_dim(self, alloc, dim, size, offset, fold=fold)

    # -- Exo's spellings: thin wrappers over the primitives above --------
    @_records_step
    def divide_loop(self, loop, c, new_iters, tail="guard", perfect=False):
        """Exo's spelling of ``split``: ``divide_loop(loop, c, [outer,
        inner], tail, perfect)``. ``perfect=True`` is ``tail='perfect'``;
        ``tail='guard'`` and ``'cut'`` are ``split``'s; Exo's
        ``'cut_and_guard'`` has no equivalent and is rejected.

        >>> p = gemm.divide_loop('i', 4, ['io', 'ii'], perfect=True)
        >>> # == gemm.split('i', 4, 'io', 'ii', tail='perfect')
        """
        from .rewrites.exo_aliases import divide_loop
        return divide_loop(self, loop, c, new_iters, tail=tail,
                           perfect=perfect)

    @_records_step
    def reorder_loops(self, loop):
        """Exo's spelling of ``reorder``: ``'a b'`` swaps loop ``a`` with
        loop ``b`` directly inside it; a loop (name or cursor) is swapped
        with the loop directly inside it.

        >>> p = gemm.reorder_loops('j k')    # == gemm.reorder('j', 'k')
        """
        from .rewrites.exo_aliases import reorder_loops
        return reorder_loops(self, loop)

    @_records_step
    def fission(self, gap, n_lifts=1):
        """Exo's spelling of ``fission_after``: split the ``n_lifts``
        enclosing loops at a gap cursor (a statement means the gap after
        it).

        >>> p = p.fission(p.find('C[_] = 0.0').after(), n_lifts=2)
        """
        from .rewrites.exo_aliases import fission
        return fission(self, gap, n_lifts=n_lifts)

    @_records_step
    def autofission(self, gap, n_lifts=1):
        """Exo's ``autofission``: as ``fission`` (levels where nothing
        follows the gap are crossed without a split).

        >>> p = p.autofission(p.find('C[_] = 0.0').after(), n_lifts=2)
        """
        from .rewrites.exo_aliases import fission
        return fission(self, gap, n_lifts=n_lifts)

    @_records_step
    def autolift_alloc(self, alloc, n_lifts=1, keep_dims=True):
        """Exo's ``autolift_alloc``: lift an allocation out of ``n_lifts``
        enclosing loops/ifs, each loop left adding a leading dimension of
        its trip count indexed by its iteration variable (``expand_dim``
        then ``lift_alloc`` per level, with their checks). Only
        ``keep_dims=True`` is supported.

        >>> p = p.autolift_alloc('t : _', n_lifts=2)
        >>> # t : f32 inside i, j  ->  t : f32[n, m] before both loops
        """
        from .rewrites.exo_aliases import autolift_alloc
        return autolift_alloc(self, alloc, n_lifts=n_lifts,
                              keep_dims=keep_dims)

    @_records_step
    def fuse(self, loop1, loop2):
        """Exo's spelling of ``fuse_loop`` (two consecutive loops).

        >>> p = p.fuse('i', 'i #1')          # == p.fuse_loop('i', 'i #1')
        """
        from .rewrites.fuse_loop import fuse_loop
        return fuse_loop(self, loop1, loop2)

    @_records_step
    def parallelize_loop(self, loop):
        """Exo's spelling of ``parallelize``.

        >>> p = p.parallelize_loop('io')     # == p.parallelize('io')
        """
        from .rewrites.parallelize import parallelize
        return parallelize(self, loop)

    @_records_step
    def write_config(self, gap, config, field, rhs):
        """Exo's spelling of ``configwrite_at``: write ``config.field =
        rhs`` at a gap cursor (a statement means the gap after it).

        >>> p = p.write_config(p.find('ld(_)').before(), Cfg, 'stride', 'N')
        """
        from .rewrites.exo_aliases import write_config
        return write_config(self, gap, config, field, rhs)

    @user_facing
    def is_eq(self, other: "Procedure") -> bool:
        """True when this procedure and ``other`` are known equivalent by
        provenance (both derived from one procedure by checked rewrites).

        >>> gemm.reorder('j', 'k').is_eq(gemm)
        True
        """
        return is_eq(self, other)

    # ------------------------------------------------------------------
    # pointing (docs/api.md §4)
    @user_facing
    def find(self, pattern, many=False):
        """A cursor on the first statement or expression matching
        ``pattern`` (``many=True``: all of them).

        >>> c = p.find('C[_] += _')
        """
        from .cursors import find
        return find(self, pattern, many=many)

    @user_facing
    def find_loop(self, name, many=False):
        """A cursor on the loop over ``name`` (``'i #1'``: the second one).

        >>> k = p.find_loop('k')
        """
        from .cursors import find_loop
        return find_loop(self, name, many=many)

    def body(self):
        """A block cursor on the procedure's body.

        >>> gemm.body()[0].name()
        'i'
        """
        from .cursors import proc_body
        return proc_body(self)

    def args(self):
        """Cursors on the procedure's arguments.

        >>> [a.name() for a in gemm.args()]
        ['M', 'N', 'K', 'A', 'B', 'C']
        """
        from .cursors import proc_args
        return proc_args(self)

    @user_facing
    def forward(self, cursor):
        """Map a cursor of an ancestor of this procedure onto this one,
        following it through the rewrites in between.

        >>> c2 = p2.forward(c)
        """
        from .cursors import forward
        return forward(self, cursor)


class _ProcDoc:
    """``Procedure.__doc__``: the class's docstring on the class; on a
    procedure, the docstring of its ``def`` when it has one (so
    ``help(mm256_loadu_ps)`` describes that instruction)."""

    def __init__(self, class_doc):
        self.class_doc = class_doc

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.class_doc
        return obj._doc or self.class_doc


Procedure.__doc__ = _ProcDoc(Procedure.__doc__)

__all__ = ["Procedure", "SchedulingError"]
