"""A local data scalar starts at zero (docs/semantics.md): a read before
any write gives 0 in the interpreter and in C, and the C reads no
uninitialised local (-Wuninitialized / -Wmaybe-uninitialized)."""
from __future__ import annotations

import numpy as np

from exo_hl import compile_procs, f32, f64, i8, proc, seq, size


@proc
def read_first(n: size, x: f32[2], k: i8[1], d: f64[1]):
    t: f32
    x[0] = t
    u: f32
    for i in seq(0, n - 1):
        u = 5.0
    x[1] = u
    c: i8
    c += k[0]
    k[0] = c
    e: f64
    d[0] = e + 1.0


def test_scalar_read_before_write_is_zero(tmp_path, warn_compile):
    compile_procs([read_first], tmp_path, "rf")
    warn_compile("rf")   # -Wall -Wextra -Werror -O2, gcc and clang
    src = (tmp_path / "rf.c").read_text()
    assert "    t = 0;" in src
    for run in (read_first.interpret, read_first.compile()):
        x = np.full(2, 7, np.float32)
        k = np.array([3], np.int8)
        d = np.zeros(1, np.float64)
        run(1, x, k, d)
        assert list(x) == [0.0, 0.0] and k[0] == 3 and d[0] == 1.0
        x = np.full(2, 7, np.float32)
        run(3, x, k, d)
        assert list(x) == [0.0, 5.0] and k[0] == 3
