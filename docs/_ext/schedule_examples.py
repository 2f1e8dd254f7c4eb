"""One small before/after example per scheduling method, for the reference.

Each entry of ``EXAMPLES`` is ``method name -> (procedure, call)``: ``call``
is the Python text of the scheduling call, evaluated with ``p`` bound to the
procedure (and this module's names in scope). The docs build runs every
call and prints the procedure before and after it, so the reference always
shows what the current code does.
"""
from __future__ import annotations

from exo_hl import DRAM, config, f32, instr, proc, seq, size, stride
from exo_hl import DRAM_STATIC  # noqa: F401  (named in the example calls)
from exo_hl.hw_libs.avx2 import mm_prefetch_t0  # noqa: F401  (idem)


@proc
def vscale(n: size, x: f32[n], y: f32[n]):
    assert n % 4 == 0
    for i in seq(0, n):
        y[i] = 2.0 * x[i]


@proc
def madd(M: size, N: size, A: f32[M, N], C: f32[M, N]):
    for i in seq(0, M):
        for j in seq(0, N):
            C[i, j] += A[i, j]


@proc
def zero4(x: f32[4]):
    for i in seq(0, 4):
        x[i] = 0.0


@proc
def scale_row(n: size, a: [f32][n]):
    for t in seq(0, n):
        a[t] = a[t] * 2.0


@proc
def scale_rows(M: size, N: size, A: f32[M, N]):
    for i in seq(0, M):
        scale_row(N, A[i, 0:N])


#: ``scale_row`` scheduled: ``call_eqv`` may call it instead
scale_row_2 = scale_row.split('t', 2, 'to', 'ti', tail='cut').rename(
    'scale_row_2')


@proc
def with_temp(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32[16] @ DRAM
        for k in seq(0, 16):
            t[k] = x[i]
        y[i] = t[0] + t[15]


@proc
def dot(n: size, x: f32[n], y: f32[n], out: f32):
    acc: f32
    acc = 0.0
    for i in seq(0, n):
        acc += x[i] * y[i]
    out = acc


@proc
def poly(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * x[i] + 3.0 * x[i]


@proc
def gemv(M: size, K: size, A: f32[M, K], x: f32[K], y: f32[M]):
    assert M % 4 == 0
    for io in seq(0, M / 4):
        for k in seq(0, K):
            for ii in seq(0, 4):
                y[4 * io + ii] += A[4 * io + ii, k] * x[k]


@config
class Cfg:
    scale: f32
    src_stride: stride


@proc
def axpy(n: size, a: f32, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += a * x[i]


@proc
def copy_rows(n: size, src: f32[n, 8], dst: f32[n, 8]):
    for i in seq(0, n):
        for j in seq(0, 8):
            dst[i, j] = src[i, j]


@proc
def two_loops(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = 0.0
    for i in seq(0, n):
        y[i] = x[i] + 1.0


@proc
def init_both(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = 0.0
        y[i] = 1.0


@proc
def two_writes(x: f32[2], y: f32[2]):
    x[0] = 1.0
    y[0] = 2.0


@proc
def maybe_clear(n: size, m: size, x: f32[n]):
    for i in seq(0, n):
        if m > 3:
            x[i] = 0.0


@proc
def clear16(x: f32[16]):
    for i in seq(0, 16):
        x[i] = 0.0


@proc
def set_first(n: size, x: f32[n]):
    for i in seq(0, n):
        x[0] = 1.0


@proc
def messy(n: size, x: f32[n]):
    for i in seq(0, n):
        x[2 * i - i + 0] = 1.0


@instr("exo_hl_zero4(&{dst_data});")
def zero4_instr(dst: [f32][4] @ DRAM):
    assert stride(dst, 0) == 1
    for i in seq(0, 4):
        dst[i] = 0.0


@proc
def clear(n: size, x: f32[n]):
    assert n % 4 == 0
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            x[4 * io + ii] = 0.0


@proc
def pairs(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32[2] @ DRAM
        t[0] = x[i]
        t[1] = 2.0 * x[i]
        y[i] = t[0] + t[1]


@proc
def square(x: f32[16], y: f32[16]):
    for i in seq(0, 16):
        t: f32
        t = x[i] * x[i]
        y[i] = t


@proc
def with_pass(n: size, x: f32[n]):
    pass
    for i in seq(0, n):
        x[i] = 1.0
        pass


@proc
def one_based(n: size, x: f32[n]):
    for i in seq(1, n + 1):
        x[i - 1] = 0.0


@proc
def row16(x: f32[16, 16], y: f32[16]):
    for i in seq(0, 16):
        t: f32[16] @ DRAM
        for j in seq(0, 16):
            t[j] = x[i, j]
        y[i] = t[0] + t[15]


@proc
def halves(x: f32[16]):
    for i in seq(0, 8):
        x[i] = 0.0
    for i in seq(8, 16):
        x[i] = 0.0


@proc
def blur_rows(n: size, inp: f32[4 * n + 2], t: f32[4 * n + 2],
              out: f32[4 * n]):
    for y in seq(0, 4 * n + 2):
        t[y] = 0.5 * inp[y]
    for y in seq(0, 4 * n):
        out[y] = t[y] + t[y + 1] + t[y + 2]


@proc
def copy_ahead(n: size, x: f32[n + 8], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i]


EXAMPLES = {
    "split": (vscale, "p.split('i', 4, 'io', 'ii', tail='perfect')"),
    "reorder": (madd, "p.reorder('i', 'j')"),
    "unroll": (zero4, "p.unroll('i')"),
    "inline": (scale_rows, "p.inline('scale_row(_)')"),
    "set_memory": (with_temp, "p.set_memory('t', DRAM_STATIC)"),
    "set_precision": (dot, "p.set_precision('acc', 'f64')"),
    "call_eqv": (scale_rows, "p.call_eqv('scale_row(_)', scale_row_2)"),
    "bind_expr": (poly, "p.bind_expr('x[i]', 'xi', cse=True)"),
    "stage_mem": (gemv, "p.stage_mem(p.find_loop('k'), "
                        "'y[4*io:4*io+4]', 'y_reg')"),
    "bind_config": (axpy, "p.bind_config('a', Cfg, 'scale')"),
    "lift_alloc": (with_temp, "p.lift_alloc('t : _')"),
    "fission_after": (init_both, "p.fission_after('x[_] = _')"),
    "reorder_stmts": (two_writes, "p.reorder_stmts('x[_] = _', 'y[_] = _')"),
    "configwrite_at": (copy_rows, "p.configwrite_at('for i in _: _', Cfg, "
                                  "'src_stride', 'stride(src, 0)', "
                                  "before=True)"),
    "replace": (clear, "p.replace(p.find_loop('ii'), zero4_instr)"),
    "add_guard": (init_both, "p.add_guard('y[_] = _', 'i == 0')"),
    "insert_noop_call": (copy_ahead, "p.insert_noop_call(p.find('y[_] = _')"
                                     ".before(), mm_prefetch_t0, "
                                     "['x[i + 8:i + 9]'])"),
    "fuse_loop": (two_loops, "p.fuse_loop('i', 'i #1')"),
    "lift_if": (maybe_clear, "p.lift_if('if _: _')"),
    "partition_loop": (clear16, "p.partition_loop('i', 4)"),
    "remove_loop": (set_first, "p.remove_loop('i')"),
    "parallelize": (vscale, "p.parallelize('i')"),
    "rename": (vscale, "p.rename('vscale_fast')"),
    "simplify": (messy, "p.simplify()"),
    "partial_eval": (vscale, "p.partial_eval(n=16)"),
    "make_instr": (zero4, "p.make_instr('exo_hl_zero4(&{x_data});')"),
    "expand_dim": (square, "p.expand_dim('t', 16, 'i')"),
    "divide_dim": (row16, "p.divide_dim('t', 0, 4)"),
    "unroll_buffer": (pairs, "p.unroll_buffer('t', 0)"),
    "delete_pass": (with_pass, "p.delete_pass()"),
    "shift_loop": (one_based, "p.shift_loop('i', 0)"),
    # loop primitives under Exo's names
    "cut_loop": (clear16, "p.cut_loop('i', 4)"),
    "unroll_loop": (vscale, "p.unroll_loop('i', 4)"),
    "lift_scope": (madd, "p.lift_scope(p.find_loop('j'))"),
    "specialize": (vscale, "p.specialize(p.find_loop('i'), ['n == 16'])"),
    "join_loops": (halves, "p.join_loops('i', 'i #1')"),
    "mult_loops": (copy_rows, "p.mult_loops('i', 'j', 'ij')"),
    "divide_with_recompute": (
        blur_rows, "p.divide_with_recompute('y', 'n', 4, ['yo', 'yi'])"),
}


# -- buffer and expression rewrites ---------------------------------------
@proc
def rows_tmp(n: size, x: f32[n, 4], y: f32[n, 4]):
    t: f32[4]
    for i in seq(0, n):
        for j in seq(0, 4):
            t[j] = x[i, j] * 2.0
        for j in seq(0, 4):
            y[i, j] = t[j] + 1.0


@proc
def two_tmps(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        a: f32
        a = x[i] * 2.0
        y[i] = a
        b: f32
        b = y[i] + x[i]
        x[i] = b


@proc
def unused_tmp(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32[4]
        y[i] = x[i]


@proc
def guarded_copy(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if i < n:
            y[i] = x[i]


@proc
def sum_twice(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0
        y[i] += x[i]


@proc
def quad_rows(n: size, x: f32[n], y: f32[n]):
    assert n % 4 == 0
    for i in seq(0, n):
        y[i] = x[i] * 3.0


@proc
def window3(H: size, x: f32[H + 2], y: f32[H]):
    t: f32[H + 2]
    for r in seq(0, H):
        if r == 0:
            t[0] = x[0]
            t[1] = x[1]
        t[r + 2] = x[r + 2] * 2.0
        y[r] = t[r] + t[r + 1] + t[r + 2]


EXAMPLES.update({
    "sink_alloc": (rows_tmp, "p.sink_alloc('t : _')"),
    "delete_buffer": (unused_tmp, "p.delete_buffer('t')"),
    "eliminate_dead_code": (guarded_copy, "p.eliminate_dead_code('if _: _')"),
    "inline_assign": (two_tmps, "p.inline_assign('a = _')"),
    "commute_expr": (quad_rows, "p.commute_expr('x[_] * 3.0')"),
    "merge_writes": (sum_twice, "p.merge_writes(('y[_] = _', "
                                "'y[_] += _'))"),
    "rewrite_expr": (quad_rows, "p.rewrite_expr(p.find_loop('i').hi(), "
                                "'4 * (n / 4)')"),
    "reuse_buffer": (two_tmps, "p.reuse_buffer('b', 'a')"),
    "resize_dim": (window3, "p.resize_dim('t', 0, 3, 0, fold=True)"),
})

def run(name):
    """(before text, call text, after text) of the example for ``name``."""
    before, call = EXAMPLES[name]
    scope = dict(globals(), p=before)
    after = eval(call, scope)  # noqa: S307 - our own example text
    return str(before), call, str(after)


__all__ = ["EXAMPLES", "run"]
