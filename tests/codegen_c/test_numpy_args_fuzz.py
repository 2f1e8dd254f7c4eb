"""Random numpy arguments: ``interpret()`` and the compiled callable take
and refuse the same ones, and compute the same values (``call_args`` is
their one checker; this checks that the C side sees what was checked).

Each case takes a procedure with a dense and a window parameter (read or
written), and a mutated argument: a slice (non-contiguous, negative
stride, one element of a row), Fortran order, a transposed view, another
dtype, byte-swapped, read-only, 0-d, misaligned, zero strides
(``broadcast_to``), an extra dimension, a view overlapping another
argument. The outcome must be the same in both (the same exception type
and message, or equal outputs bit for bit), and an independent rule says
which mutations must be refused: a dense parameter needs a C-contiguous
array; a written one a writable array not overlapping another argument;
every one its dtype, native byte order, element alignment, shape and
positive strides.
"""
from __future__ import annotations

import random

import numpy as np

from exo_hl import f32, i16, proc, seq, size

N, M = 3, 4


@proc
def dense_win_f32(n: size, m: size, a: f32[n, m], w: [f32][n, m],
                  o: f32[n, m], ow: [f32][n, m]):
    for i in seq(0, n):
        for j in seq(0, m):
            o[i, j] = a[i, j] * 2.0 + w[i, j]
            ow[i, j] = w[i, j] - a[i, j]


@proc
def dense_win_i16(n: size, m: size, a: i16[n, m], w: [i16][n, m],
                  o: i16[n, m], ow: [i16][n, m]):
    for i in seq(0, n):
        for j in seq(0, m):
            o[i, j] = a[i, j] * 3 + w[i, j]
            ow[i, j] = w[i, j] - a[i, j]


def _base(dt, rng):
    return [(rng.integers(-50, 50, (N, M))).astype(dt) for _ in range(4)]


def _misaligned(x):
    raw = np.zeros(x.nbytes + x.itemsize, np.uint8)
    v = raw[1:1 + x.nbytes].view(x.dtype).reshape(x.shape)
    v[...] = x
    return v


def _mutate(kind, args, k, dt):
    """(new args, must be refused?) with argument ``k`` mutated."""
    x = args[k]
    dense, written = k in (0, 2), k in (2, 3)
    big = np.zeros((2 * N, 2 * M), dt)
    if kind == "strided":
        big[::2, ::2] = x
        v, bad = big[::2, ::2], dense
    elif kind == "negative":
        v, bad = x[::-1].copy()[::-1], True
    elif kind == "fortran":
        v, bad = np.asfortranarray(x), dense
    elif kind == "transposed":
        v, bad = np.ascontiguousarray(x.T).T, dense
    elif kind == "dtype":
        v, bad = x.astype(np.float64), True
    elif kind == "byteswapped":
        v, bad = x.astype(x.dtype.newbyteorder()), True
    elif kind == "readonly":
        v = x.copy()
        v.flags.writeable = False
        bad = written
    elif kind == "zero_d":
        v, bad = np.array(x[0, 0]), True
    elif kind == "misaligned":
        v, bad = _misaligned(x), True
    elif kind == "broadcast":
        v, bad = np.broadcast_to(x[:1], x.shape), True
    elif kind == "extra_dim":
        v, bad = x[None], True
    elif kind == "overlap":     # a view of another argument
        other = args[(k + 1) % 4] if k != 3 else args[2]
        v = other
        bad = written or (k + 1) % 4 in (2, 3) or k == 3
    else:
        v, bad = x.copy(), False
    out = list(args)
    out[k] = v
    return out, bad


KINDS = ["strided", "negative", "fortran", "transposed", "dtype",
         "byteswapped", "readonly", "zero_d", "misaligned", "broadcast",
         "extra_dim", "overlap", "none"]


def _outcome(fn, args):
    try:
        fn(N, M, *args)
    except (TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"
    return b"".join(np.ascontiguousarray(a).tobytes() for a in args)


def test_numpy_arguments_checked_alike_and_computed_alike():
    rng = random.Random(2026)
    nrng = np.random.default_rng(0)
    procs = [(dense_win_f32, np.float32), (dense_win_i16, np.int16)]
    fast = {p: p.compile() for p, _ in procs}
    refused = accepted = 0
    for _ in range(260):
        p, dt = rng.choice(procs)
        kind, k = rng.choice(KINDS), rng.randrange(4)
        base = _base(dt, nrng)
        args_i, bad = _mutate(kind, [a.copy() for a in base], k, dt)
        args_c, _ = _mutate(kind, [a.copy() for a in base], k, dt)
        got_i = _outcome(p.interpret, args_i)
        got_c = _outcome(fast[p], args_c)
        assert got_i == got_c, (p.name(), kind, k, got_i, got_c)
        assert isinstance(got_i, str) == bad, (p.name(), kind, k, got_i)
        refused += bad
        accepted += not bad
    assert refused > 50 and accepted > 50
