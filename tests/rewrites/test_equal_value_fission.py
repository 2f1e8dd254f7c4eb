"""Fission / fusion across writes that store equal values: a later
iteration of the first part may overwrite what an earlier iteration of the
second part read, when it stores the value already there (Exo's AVX2
"hoist the broadcast" step, a producer recomputed in overlapping blocks).
Every condition of the proof has a rejected case here."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def rank_k_reduce_6x16(K: size, A: f32[6, K], B: f32[K, 16], C: f32[6, 16]):
    for i in seq(0, 6):
        for j in seq(0, 16):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def _staged_a(p=rank_k_reduce_6x16):
    """Exo's x86 schedule up to the A broadcast (before the fission)."""
    p = p.reorder("j", "k").reorder("i", "k")
    p = p.split("j", 8, "jo", "ji", tail="perfect")
    p = p.bind_expr("A[i, k]", "A_reg")
    p = p.expand_dim("A_reg", 8, "ji")
    return p.lift_alloc("A_reg", n_lifts=2)


def test_avx2_hoist_the_broadcast(equiv, assert_roundtrip):
    p = _staged_a()
    p = p.fission_after(p.find("A_reg[ji] = _"), n_lifts=2)
    p = p.remove_loop("jo")
    assert str(p) == """\
def rank_k_reduce_6x16(K: size, A: f32[6, K] @ DRAM, B: f32[K, 16] @ DRAM,
                       C: f32[6, 16] @ DRAM):
    for k in seq(0, K):
        for i in seq(0, 6):
            A_reg: f32[8] @ DRAM
            for ji in seq(0, 8):
                A_reg[ji] = A[i, k]
            for jo in seq(0, 2):
                for ji in seq(0, 8):
                    C[i, 8 * jo + ji] += A_reg[ji] * B[k, 8 * jo + ji]"""
    assert_roundtrip(p)
    equiv(rank_k_reduce_6x16, p, [{"K": 1}, {"K": 5}])


@proc
def scalar_hoist(n: size, x: f32[4], y: f32[n]):
    t: f32
    for i in seq(0, n):
        t = x[1] * 2.0
        y[i] = y[i] + t


def test_scalar_invariant_hoist(equiv):
    p = scalar_hoist.fission_after("t = _").remove_loop("i")
    assert str(p).count("for i") == 1
    equiv(scalar_hoist, p, [{"n": 1}, {"n": 4}])


@proc
def variant_value(n: size, x: f32[n], y: f32[n]):
    t: f32
    for i in seq(0, n):
        t = x[i]
        y[i] = t


@proc
def variant_row(n: size, A: f32[n, 4], y: f32[n, 4]):
    t: f32[4]
    for i in seq(0, n):
        for j in seq(0, 4):
            t[j] = A[i, j]
        for j in seq(0, 4):
            y[i, j] = t[j]


def test_reject_values_depending_on_the_iteration():
    with pytest.raises(SchedulingError, match="values written may differ"):
        variant_value.fission_after("t = _")
    # the staged row depends on i: not loop-invariant
    with pytest.raises(SchedulingError, match="values written may differ"):
        variant_row.fission_after("j")


@proc
def two_values(n: size, x: f32[4], y: f32[n]):
    t: f32
    for i in seq(0, n):
        t = x[0]
        t = x[1]
        y[i] = t


def test_reject_two_statements_storing_different_values():
    with pytest.raises(SchedulingError, match="values written may differ"):
        two_values.fission_after("t = x[1]")


@proc
def reads_own(n: size, x: f32[4], y: f32[n]):
    t: f32
    t = 0.0
    for i in seq(0, n):
        t = t + x[0]
        y[i] = t


def test_reject_first_part_reading_what_it_writes():
    with pytest.raises(SchedulingError, match="reads what it writes"):
        reads_own.fission_after("t = t + _")


@proc
def second_writes_input(n: size, x: f32[4], y: f32[n]):
    t: f32
    for i in seq(0, n):
        t = x[0]
        x[0] = t + 1.0
        y[i] = t


@proc
def second_writes_output(n: size, x: f32[4], y: f32[n]):
    t: f32
    for i in seq(0, n):
        t = x[0]
        y[i] = t
        t = 2.0


def test_reject_second_part_modifying_inputs_or_outputs():
    with pytest.raises(SchedulingError, match="second part modifies x"):
        second_writes_input.fission_after("t = _")
    with pytest.raises(SchedulingError, match="second part modifies t"):
        second_writes_output.fission_after("t = _")


@proc
def late_first_write(n: size, x: f32[4], y: f32[n]):
    t: f32
    t = 5.0
    for i in seq(0, n):
        if i > 0:
            t = x[0]
        y[i] = t


@proc
def read_ahead(n: size, inp: f32[n + 1], bx: f32[n + 1], out: f32[n]):
    for y in seq(0, n):
        bx[y] = inp[y] * 2.0
    for y in seq(0, n):
        out[y] = bx[y + 1]


def test_reject_location_not_written_in_the_reading_iteration():
    # iteration 0 reads t before any write; split, it would see x[0]
    with pytest.raises(SchedulingError, match="reading iteration"):
        late_first_write.fission_after("if _: _")
    # the consumer reads bx[y + 1], which only the next producer writes
    with pytest.raises(SchedulingError, match="reading iteration"):
        read_ahead.fuse_loop("y", "y #1")


@proc
def copy1(dst: [f32][1], src: [f32][1]):
    dst[0] = src[0]


@proc
def with_call(n: size, x: f32[4], y: f32[n]):
    t: f32[1]
    for i in seq(0, n):
        copy1(t[0:1], x[0:1])
        y[i] = t[0]


def test_reject_calls_in_first_part():
    with pytest.raises(SchedulingError, match="Call statement"):
        with_call.fission_after("copy1(_)")


@config
class ECfg:
    k: size


@proc
def writes_config(n: size, x: f32[4], y: f32[n]):
    t: f32
    for i in seq(0, n):
        t = x[0]
        ECfg.k = 1
        y[i] = t


def test_reject_config_writes_in_the_loop():
    with pytest.raises(SchedulingError, match="configuration state"):
        writes_config.fission_after("t = _")


# ----------------------------------------------------------------------
# every producer/consumer combination of a small grammar: whatever the
# check accepts (fission of the fused loop, fusion of the two loops) must
# compute what the original computes
_PRODUCERS = ["t[i + {a}] = x[i + {b}] * 2.0",      # per-iteration
              "t[{a}] = x[{b}] * 2.0",              # loop-invariant
              "t[{a}] = x[i] * 2.0",                # invariant location
              "t[i + {a}] = x[{b}] + 1.0"]
_GUARDS = ["", "if i > 0:", "if N > 2:"]
_CONSUMERS = ["y[i] = t[i + {d}] + x[i]",
              "y[i] = t[{d}] * 3.0",
              "y[i] += t[i] + t[i + {d}]",
              "x[i + {d}] = t[i] + 1.0",            # writes the input
              "t[i + {d}] = y[i] * 2.0"]            # writes the output


def _variants():
    out = []
    for pi, prod in enumerate(_PRODUCERS):
        for gi, g in enumerate(_GUARDS):
            for ci, cons in enumerate(_CONSUMERS):
                for a, b, d in ((0, 0, 0), (1, 0, 2), (0, 1, 1), (2, 2, 0)):
                    out.append((f"v{pi}_{gi}_{ci}_{a}{b}{d}", g,
                                prod.format(a=a, b=b), cons.format(d=d)))
    return out


def _source(name, g, prod, cons, fused):
    head = (f"@proc\ndef {name}(N: size, x: f32[N + 4], t: f32[N + 4], "
            f"y: f32[N + 4]):\n")
    p = f"            {prod}\n" if g else f"        {prod}\n"
    p = (f"        {g}\n" + p) if g else p
    if fused:
        return (head + "    for i in seq(0, N):\n" + p +
                f"        {cons}\n")
    return (head + "    for i in seq(0, N):\n" + p +
            "    for i in seq(0, N):\n" + f"        {cons}\n")


def test_every_accepted_combination_is_equivalent(tmp_path):
    import numpy as np
    from source_modules import load_source
    lines = ["from __future__ import annotations",
             "from exo_hl import f32, proc, seq, size", ""]
    vs = _variants()
    for name, g, prod, cons in vs:
        lines.append(_source(name + "_f", g, prod, cons, True))
        lines.append(_source(name + "_s", g, prod, cons, False))
    mod = load_source(tmp_path, "ev_variants", "\n".join(lines))
    rng = np.random.default_rng(7)

    def same(p, q):
        for n in (1, 2, 5):
            args = [rng.integers(-4, 5, size=(n + 4, )).astype(np.float32)
                    for _ in range(3)]
            a1 = [n] + [v.copy() for v in args]
            a2 = [n] + [v.copy() for v in args]
            p.interpret(*a1)
            q.interpret(*a2)
            for u, v in zip(a1[1:], a2[1:]):
                np.testing.assert_array_equal(u, v, err_msg=f"{p}\n{q}")

    accepted = 0
    for name, g, prod, cons in vs:
        fused, split = getattr(mod, name + "_f"), getattr(mod, name + "_s")
        first = fused.find_loop("i").body()[0]
        try:
            q = fused.fission_after(first)
        except SchedulingError:
            pass
        else:
            accepted += 1
            same(fused, q)
        try:
            q = split.fuse_loop("i", "i #1")
        except SchedulingError:
            pass
        else:
            accepted += 1
            same(split, q)
    print(f"\n{accepted} of {2 * len(vs)} fissions/fusions accepted")
    # the grammar has safe and unsafe members: both answers occur
    assert 0 < accepted < 2 * len(vs)
