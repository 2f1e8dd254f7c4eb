"""The checks run.py prints and the tests assert: the NEON (and RVV,
apps/sgemm_rvv) kernels under qemu against ``interpret()`` (bit for bit)
and numpy, on edge and random shapes, all calls in one qemu process."""
from __future__ import annotations

import numpy as np

from exo_hl.codegen_c.cross import CrossProgram

#: edge shapes: single elements, exact tiles, one less and one more than a
#: tile in each dimension, two tiles plus edges
EDGE_SHAPES = [(1, 1, 1), (8, 12, 1), (8, 12, 5), (7, 11, 3), (9, 13, 4),
               (16, 24, 3), (17, 26, 6), (1, 25, 2), (15, 1, 3)]


def shapes(n_random=3, seed=0):
    rng = np.random.default_rng(seed)
    rand = [tuple(int(x) for x in rng.integers(1, 21, 3))
            for _ in range(n_random)]
    return EDGE_SHAPES + rand


def _data(rng, m, n, k, small):
    if small:       # small integers: every product and sum exact
        return [rng.integers(-3, 4, s).astype(np.float32)
                for s in ((m, k), (k, n), (m, n))]
    return [rng.standard_normal(s, dtype=np.float32)
            for s in ((m, k), (k, n), (m, n))]


def bits(a):
    return np.where(np.isnan(a), -1, a.view(np.uint32).astype(np.int64))


def check(exact, fused, target="aarch64", n_random=3, seed=0):
    """Run both kernels on every shape under qemu (one process); returns
    the number of calls, raising AssertionError on any difference.

    ``exact`` (vmla: two roundings) gets random normal data and must equal
    ``interpret()`` bit for bit; ``fused`` (fmla) gets small integers,
    where one rounding and two agree. Both must match numpy."""
    return check_kernels([(exact, False), (fused, True)], target, n_random,
                         seed)


def check_kernels(kernels, target, n_random=3, seed=0):
    """``check`` for any ``[(procedure, small_integer_data)]``."""
    prog = CrossProgram([p for p, _ in kernels], target,
                        stem=f"sgemm_check_{target.replace('-', '_')}")
    rng = np.random.default_rng(seed)
    calls, wants = [], []
    for p, small in kernels:
        for m, n, k in shapes(n_random, seed):
            A, B, C = _data(rng, m, n, k, small)
            if not small and m * n > 4:      # edge values in the data too
                A[0, 0], B[0, 0], C[-1, -1] = np.inf, -0.0, np.nan
            # a kernel of A packed transposed takes At = A^T
            a_arg = ({"At": np.ascontiguousarray(A.T)}
                     if any(x.name.name == "At" for x in p.ir().args)
                     else {"A": A})
            want = C.copy()
            p.interpret(M=m, N=n, K=k, B=B, C=want, **a_arg)
            got = C.copy()
            calls.append((p, dict(M=m, N=n, K=k, B=B, C=got, **a_arg)))
            with np.errstate(all="ignore"):
                ref = C.astype(np.float64) + A.astype(np.float64) @ B
            wants.append((p.name(), (m, n, k), got, want, ref))
    with np.errstate(all="ignore"):
        prog.run_many(calls)
    for name, shape, got, want, ref in wants:
        assert np.array_equal(bits(got), bits(want)), (
            f"{name} {shape}: {target} differs from interpret()")
        fin = np.isfinite(ref)
        assert np.allclose(got[fin], ref[fin], rtol=1e-4, atol=1e-4), (
            f"{name} {shape}: differs from numpy")
    return len(calls)
