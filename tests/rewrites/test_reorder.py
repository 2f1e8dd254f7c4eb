"""reorder: loop interchange, accepted when iterations commute."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from kernels import gemm  # the suite's shared GEMM


@proc
def wave(n: size, A: f32[n + 1, n + 1]):
    for i in seq(1, n + 1):
        for j in seq(0, n):
            A[i, j] = A[i - 1, j + 1]


@proc
def down(n: size, A: f32[n + 1, n]):
    for i in seq(1, n + 1):
        for j in seq(0, n):
            A[i, j] = A[i - 1, j] + 1.0


@proc
def total(n: size, m: size, x: f32[n, m], s: f32):
    for i in seq(0, n):
        for j in seq(0, m):
            s += x[i, j]


@proc
def tri(n: size, x: f32[n, n]):
    for i in seq(0, n):
        for j in seq(i, n):
            x[i, j] = 1.0


@proc
def not_nested(n: size, x: f32[n, n], y: f32[n]):
    for i in seq(0, n):
        y[i] = 0.0
        for j in seq(0, n):
            x[i, j] = 1.0


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = gemm.reorder("j", "k")
    assert str(p) == """\
def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
         C: f32[M, N] @ DRAM):
    for i in seq(0, M):
        for k in seq(0, K):
            for j in seq(0, N):
                C[i, j] += A[i, k] * B[k, j]"""
    assert_roundtrip(p)
    q = p.reorder("i")
    equiv(gemm, q, [{"M": 2, "N": 3, "K": 1}, {"M": 1, "N": 1, "K": 4}])


def test_default_inner_and_cursor():
    p = gemm.reorder(gemm.find_loop("i"))
    assert str(p).splitlines()[2:4] == ["    for j in seq(0, N):",
                                        "        for i in seq(0, M):"]


def test_carried_dependence_still_legal(equiv):
    equiv(down, down.reorder("i"), [{"n": 1}, {"n": 3}])


def test_reduction_reorders(equiv):
    equiv(total, total.reorder("i"), [{"n": 2, "m": 3}])


def test_reject_wavefront():
    with pytest.raises(SchedulingError) as e:
        wave.reorder("i")
    msg = str(e.value)
    assert "do not commute" in msg and "wave" in msg and "for i in" in msg


def test_reject_dependent_bounds():
    with pytest.raises(SchedulingError, match="depend on the outer"):
        tri.reorder("i")


def test_reject_not_perfectly_nested():
    with pytest.raises(SchedulingError, match="not perfectly nested"):
        not_nested.reorder("i")


def test_reject_wrong_inner():
    with pytest.raises(SchedulingError, match="directly nested"):
        gemm.reorder("i", "k")


def test_cursors_follow_their_loops():
    i, j = gemm.find_loop("i"), gemm.find_loop("j")
    k = gemm.find_loop("k")
    p = gemm.reorder(i)
    assert p.forward(i).path() == (("body", 0), ("body", 0))
    assert p.forward(j).path() == (("body", 0), )
    assert p.forward(k).path() == (("body", 0), ("body", 0), ("body", 0))
    # the forwarded cursor can drive the next rewrite
    q = p.reorder(p.forward(i))
    assert str(q).splitlines()[2:5] == str(p.reorder("i")).splitlines()[2:5]


# ----------------------------------------------------------------------
# named loops: the outer loop that directly holds the inner one
@proc
def init_mm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
            C: f32[M, N]):
    for i in seq(0, M):
        for j in seq(0, N):
            C[i, j] = 0.0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def test_named_pair_after_cut_split(equiv):
    # the first 'i' is the zero-init nest; the 'i' holding 'j' that holds
    # 'k' is the second one
    p = init_mm.split("i #1", 4, "io", "ii", tail="cut")
    q = p.reorder("ii", "j")
    assert str(q).splitlines()[5:8] == [
        "    for io in seq(0, M / 4):", "        for j in seq(0, N):",
        "            for ii in seq(0, 4):"]
    # the inner 'k' is the one inside 'j', not the first 'k' of the proc
    r = init_mm.reorder("j", "k")
    assert str(r).splitlines()[5:8] == [
        "    for i in seq(0, M):", "        for k in seq(0, K):",
        "            for j in seq(0, N):"]
    s = init_mm.split("j #1", 4, "jo", "ji", tail="cut").reorder("ji", "k")
    assert "            for k in seq(0, K):\n                for ji in seq(0, 4):" \
        in str(s)
    sizes = [{"M": 5, "N": 6, "K": 3}, {"M": 8, "N": 4, "K": 1}]
    for x in (q, r, s):
        equiv(init_mm, x, sizes)


@proc
def init_in_nest(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
                 C: f32[M, N]):
    for i in seq(0, M):
        for j in seq(0, N):
            C[i, j] = 0.0
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def test_named_pair_after_fission(equiv):
    p = init_in_nest.fission_after("C[_] = 0.0")
    # fission_after gives two 'j' loops in the same 'i': reorder the one
    # that holds 'k'
    q = p.reorder("j", "k")
    assert str(q).splitlines()[2:] == [
        "    for i in seq(0, M):", "        for j in seq(0, N):",
        "            C[i, j] = 0.0", "        for k in seq(0, K):",
        "            for j in seq(0, N):",
        "                C[i, j] += A[i, k] * B[k, j]"]
    equiv(init_in_nest, q, [{"M": 3, "N": 4, "K": 2}])


def test_named_pair_cursor_and_name():
    # a cursor fixes its loop; the name ranges over its matches
    p = init_mm.reorder(init_mm.find_loop("j #1"), "k")
    assert "for k in seq(0, K):\n            for j in seq(0, N):" in str(p)
    with pytest.raises(SchedulingError, match="directly nested"):
        init_mm.reorder(init_mm.find_loop("j"), "k")


def test_reorder_random_nests_after_cut_and_fission(equiv):
    """Random splits (cut tails) and fissions of a zero-init + gemm, then
    every pair of directly nested loop names is reordered by name: the pair
    picked is always a directly nested one, and the result is equivalent
    whenever reorder accepts."""
    import random
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir.traversal import walk_stmts
    rng = random.Random(11)
    sizes = [{"M": 5, "N": 6, "K": 3}]
    tried = 0
    for _ in range(6):
        p = init_mm
        names = {"i": 0, "j": 0, "k": 0}
        for _step in range(rng.randint(1, 3)):
            loops = [s for s in walk_stmts(p.ir().body)
                     if isinstance(s, IR.For)]
            which = rng.randrange(len(loops))
            name = loops[which].iter.name
            k = [s.iter.name for s in loops[:which]].count(name)
            if rng.random() < 0.6 and name in names:
                names[name] += 1
                o, i = f"{name}o{names[name]}", f"{name}i{names[name]}"
                try:
                    p = p.split(f"{name} #{k}", rng.choice([2, 4]), o, i,
                                tail="cut")
                except SchedulingError:
                    pass
            else:
                try:
                    p = p.fission_after(p.find(rng.choice(
                        ["C[_] = 0.0", "C[_] += _"])), n_lifts=1)
                except SchedulingError:
                    pass
        pairs = set()
        for s in walk_stmts(p.ir().body):
            if isinstance(s, IR.For) and isinstance(s.body[0], IR.For):
                pairs.add((s.iter.name, s.body[0].iter.name))
        for outer, inner in sorted(pairs):
            try:
                q = p.reorder(outer, inner)
            except SchedulingError as e:
                assert "directly nested" not in str(e), (outer, inner, str(p))
                continue
            tried += 1
            equiv(init_mm, q, sizes, compiled=False)
    assert tried >= 10


def test_reorder_refuses_saturating_reduction_into_integer():
    """``x += f`` of a float into an i8 truncates and saturates at each
    step, so the order of the additions matters (200 then -100 gives 27,
    -100 then 200 gives 100): not a reduction reorder may permute. Integer
    reductions into i8 wrap modulo 2^8 and still reorder exactly."""
    import numpy as np
    from exo_hl import i8

    @proc
    def sat(n: size, F: f32[n, 2], x: i8[1]):
        for i in seq(0, n):
            for j in seq(0, 2):
                x[0] += F[i, j]
    with pytest.raises(SchedulingError, match="(?s)do not commute.*'x\\[0\\] "
                       "\\+= F\\[i, j\\]' adds a floating-point value "
                       "into an integer location"):
        sat.reorder("i", "j")

    @proc
    def wrap(n: size, A: i8[n, 2], x: i8[1]):
        for i in seq(0, n):
            for j in seq(0, 2):
                x[0] += A[i, j] * A[i, j]
    q = wrap.reorder("i", "j")
    A = np.array([[127, -128], [-127, 100], [99, -1]], dtype=np.int8)
    outs = []
    for p in (wrap, q):
        x = np.array([120], dtype=np.int8)
        p.interpret(3, A, x)
        outs.append(x[0])
    assert outs[0] == outs[1]
