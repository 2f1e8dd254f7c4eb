"""Hand-built procedure pairs (original, wrong) for the validator's tests:
the wrong procedures that accepted rewrites produced in issue 32 (A1-A4),
and plain schedule mistakes. Each wrong one differs from its original on
some input; the validator must refute it."""
from __future__ import annotations

from exo_hl import config, f32, f64, i32, index, instr, proc, seq, size, \
    stride


@config
class Cf:
    v: f32
    k: index


# -- A1: literal-only expressions take their store's type -------------------
@proc
def lit_assign(y: f32[1]):
    x: i32
    x = 2.5 + 2.5
    y[0] = x


@proc
def lit_assign_inlined(y: f32[1]):       # inline_assign: 5.0, not 4.0
    y[0] = 2.5 + 2.5


@proc
def lit_assign64(y: f64[1]):
    x: f32
    x = 16777217.0 - 1.0
    y[0] = x


@proc
def lit_assign64_inlined(y: f64[1]):
    y[0] = 16777217.0 - 1.0


@proc
def lit_two_stores(a: i32[1], b: f32[1]):
    a[0] = 2.5 + 2.5
    b[0] = 2.5 + 2.5


@proc
def lit_two_stores_cse(a: i32[1], b: f32[1]):   # bind_expr(cse=True)
    t: i32
    t = 2.5 + 2.5
    a[0] = t
    b[0] = t


@proc
def lit_loop(y: f32[4]):
    t: i32[4]
    for i in seq(0, 4):
        t[i] = 2.5 + 2.5
    for j in seq(0, 4):
        y[j] = t[j]


@proc
def lit_loop_inlined(y: f32[4]):                # inline_loop
    for j in seq(0, 4):
        y[j] = 2.5 + 2.5


@proc
def lit_cfg(z: i32[1]):
    z[0] = 2.5 + 2.5


@proc
def lit_cfg_bound(z: i32[1]):                   # bind_config into f32
    Cf.v = 2.5 + 2.5
    z[0] = Cf.v


# -- A2: 0.0 and -0.0 are different values ----------------------------------
@proc
def zeros_if(B: f32[2]):
    P: f32[1]
    for x in seq(0, 2):
        if x == 0:
            P[0] = 0.0
        else:
            P[0] = -0.0
        B[x] = 1.0 / P[0]


@proc
def zeros_if_fissioned(B: f32[2]):              # fission_after the if
    P: f32[1]
    for x in seq(0, 2):
        if x == 0:
            P[0] = 0.0
        else:
            P[0] = -0.0
    for x in seq(0, 2):
        B[x] = 1.0 / P[0]


@proc
def zeros_two_loops(y: f32[8]):
    for i in seq(0, 4):
        y[i] = 0.0
    for i in seq(4, 8):
        y[i] = -0.0


@proc
def zeros_joined(y: f32[8]):                    # join_loops
    for i in seq(0, 8):
        y[i] = 0.0


@instr("for (int i_ = 0; i_ < 4; i_++) (&{dst_data})[i_] = 0.0f;")
def zero4(dst: [f32][4]):
    for i in seq(0, 4):
        dst[i] = 0.0


@proc
def neg_zeros(y: f32[4]):
    for i in seq(0, 4):
        y[i] = -0.0


@proc
def neg_zeros_replaced(y: f32[4]):              # replace by zero4
    zero4(y[0:4])


# -- A3: stage_mem changed a stride the block reads --------------------------
@proc
def branch_on_stride(A: f32[4, 4], o: f32[2]):
    for i in seq(0, 2):
        if stride(A, 0) == 4:
            o[i] = A[i, 0] + A[0, i]


@proc
def branch_on_stride_staged(A: f32[4, 4], o: f32[2]):
    As: f32[2, 2]
    for i0 in seq(0, 2):
        for i1 in seq(0, 2):
            As[i0, i1] = A[i0, i1]
    for i in seq(0, 2):
        if stride(As, 0) == 4:
            o[i] = As[i, 0] + As[0, i]


# -- A4: an allocation's size read across a config write ---------------------
@proc
def size_then_cfg(o: f32[1]):
    assert Cf.k >= 1
    t: f32[2, Cf.k]
    Cf.k = 8
    if stride(t, 0) == 8:
        o[0] = 1.0
    else:
        o[0] = 2.0


@proc
def size_then_cfg_swapped(o: f32[1]):           # reorder_stmts
    assert Cf.k >= 1
    Cf.k = 8
    t: f32[2, Cf.k]
    if stride(t, 0) == 8:
        o[0] = 1.0
    else:
        o[0] = 2.0


@proc
def size_outside_loop(o: f32[2]):
    assert Cf.k >= 1
    t: f32[2, Cf.k]
    for i in seq(0, 2):
        Cf.k = 8
        if stride(t, 0) == 8:
            o[i] = 1.0
        else:
            o[i] = 2.0


@proc
def size_sunk_into_loop(o: f32[2]):             # sink_alloc
    assert Cf.k >= 1
    for i in seq(0, 2):
        Cf.k = 8
        t: f32[2, Cf.k]
        if stride(t, 0) == 8:
            o[i] = 1.0
        else:
            o[i] = 2.0


ISSUE32 = [
    (lit_assign, lit_assign_inlined),
    (lit_assign64, lit_assign64_inlined),
    (lit_two_stores, lit_two_stores_cse),
    (lit_loop, lit_loop_inlined),
    (lit_cfg, lit_cfg_bound),
    (zeros_if, zeros_if_fissioned),
    (zeros_two_loops, zeros_joined),
    (neg_zeros, neg_zeros_replaced),
    (branch_on_stride, branch_on_stride_staged),
    (size_then_cfg, size_then_cfg_swapped),
    (size_outside_loop, size_sunk_into_loop),
]


# -- plain schedule mistakes on a small blocked kernel ----------------------
@proc
def axpy(n: size, a: f32[1], x: f32[n + 1], y: f32[n]):
    for i in seq(0, n):
        y[i] = a[0] * x[i] - y[i]


@proc
def axpy_split(n: size, a: f32[1], x: f32[n + 1], y: f32[n]):
    for io in seq(0, (n + 3) / 4):
        for ii in seq(0, 4):
            if 4 * io + ii < n:
                y[4 * io + ii] = a[0] * x[4 * io + ii] - y[4 * io + ii]


@proc
def axpy_off_by_one(n: size, a: f32[1], x: f32[n + 1], y: f32[n]):
    for io in seq(0, (n + 3) / 4):
        for ii in seq(0, 4):
            if 4 * io + ii < n:
                y[4 * io + ii] = a[0] * x[4 * io + ii + 1] - y[4 * io + ii]


@proc
def axpy_swapped(n: size, a: f32[1], x: f32[n + 1], y: f32[n]):
    for io in seq(0, (n + 3) / 4):
        for ii in seq(0, 4):
            if 4 * io + ii < n:
                y[4 * io + ii] = y[4 * io + ii] - a[0] * x[4 * io + ii]


@proc
def axpy_wrong_bound(n: size, a: f32[1], x: f32[n + 1], y: f32[n]):
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            if 4 * io + ii < n:
                y[4 * io + ii] = a[0] * x[4 * io + ii] - y[4 * io + ii]


def axpy_dropped_guard():
    """axpy_split without its guard: the frontend's bounds check refuses
    to build it, so it is built on the IR (as a buggy rewrite would)."""
    from exo_hl.validate.mutate import mutate, sites
    p = axpy_split.ir()
    site, = [s for s in sites(p) if s[0] == "guard"]
    return mutate(p, site)


MISTAKES = [axpy_off_by_one, axpy_swapped, axpy_wrong_bound]
