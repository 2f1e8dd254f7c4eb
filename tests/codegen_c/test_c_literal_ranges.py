"""Data literals outside their element type's range are converted as
docs/semantics.md says (integers wrap on the store, float -> integer
saturates, out-of-range floats become infinities): warning-free C (also
-pedantic) that computes what interpret() computes."""
from __future__ import annotations

import numpy as np

from exo_hl import compile_procs, f32, i32, i8, proc, ui8


@proc
def out_of_range(a: i8[4], b: f32[3], c: i32[3], e: ui8[2]):
    a[0] = 1000
    a[1] = -1000.5
    a[2] += 1000
    a[3] = 2147483648 * 0.5
    b[0] = 1e300
    b[1] = -1e300
    b[2] += 1e40 * 1e-40
    c[0] = 1.5
    c[1] = 99999999999999999999999
    c[2] += 1.5
    e[0] = 300
    e[1] = -1


def test_out_of_range_literals(tmp_path, warn_compile):
    compile_procs([out_of_range], tmp_path, "lits")
    warn_compile("lits")
    outs = []
    for run in (out_of_range.interpret, out_of_range.compile()):
        a = np.array([0, 0, 5, 0], np.int8)
        b = np.zeros(3, np.float32)
        c = np.array([0, 0, 7], np.int32)
        e = np.zeros(2, np.uint8)
        run(a, b, c, e)
        outs.append((a, b, c, e))
    for x, y in zip(*outs):
        np.testing.assert_array_equal(x, y)
    a, b, c, e = outs[0]
    assert list(a) == [1000 - 1024, -1000 + 1024, 5 + 1000 - 1024, 0]
    assert b[0] == np.inf and b[1] == -np.inf and b[2] == np.inf
    assert list(c) == [1, 2**31 - 1, 8] and list(e) == [300 - 256, 255]
