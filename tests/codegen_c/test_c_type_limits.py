"""Comparisons of narrow integers with literals at and beyond their range
(``select(u[i], 0, 0, u[i])`` on ``ui8``, ``fmin(u[i], 0)``,
``select(x[i], 200, ...)`` on ``i8``) compile warning-free: gcc -Wextra
(-Wtype-limits) and clang warned about the always-true or always-false
comparisons. Exhaustive over the narrow types, literals around both ends of
each range, both operand orders and every comparing extern; the compiled
results equal interpret()'s on every value of the 8-bit types and the
edges of the 16-bit ones."""
from __future__ import annotations

import numpy as np
import pytest

import exo_hl
from exo_hl.frontend.decorators import parse_proc_source

_SCOPE = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
_NP = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16, "ui16": np.uint16,
       "i32": np.int32}


def _literals(t):
    info = np.iinfo(_NP[t])
    lo, hi = int(info.min), int(info.max)
    vals = {lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 0, -1, 1}
    return sorted(vals), [f"{lo - 0.5}", f"{hi + 0.5}"]


def _source(t):
    ints, floats = _literals(t)
    exprs = []
    for v in ints + floats:
        lit = str(v) if not isinstance(v, int) or v >= 0 else f"({v})"
        exprs += [f"select(x[i], {lit}, x[i], y[i])",
                  f"select({lit}, x[i], x[i], y[i])",
                  f"select(x[i], {lit}, 1, 2)",
                  f"fmin(x[i], {lit})", f"fmax({lit}, x[i])"]
    exprs += ["relu(x[i])", "select(x[i], 0, 0, x[i])"]
    outs = ", ".join(f"o{k}: i32[n]" for k in range(len(exprs)))
    body = "\n".join(f"        o{k}[i] = {e}" for k, e in enumerate(exprs))
    return (f"def lim_{t}(n: size, x: {t}[n], y: {t}[n], {outs}):\n"
            f"    for i in seq(0, n):\n{body}\n"), len(exprs)


@pytest.mark.parametrize("t", ["ui8", "i8", "ui16", "i16", "i32"])
def test_narrow_comparisons_with_literals_compile_warning_free(
        t, tmp_path, warn_compile):
    src, n_out = _source(t)
    p = parse_proc_source(src, _SCOPE)
    exo_hl.compile_procs([p], tmp_path, "lim")
    warn_compile("lim")
    info = np.iinfo(_NP[t])
    if info.bits == 8:
        x = np.arange(info.min, int(info.max) + 1).astype(_NP[t])
    else:
        x = np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1,
                      info.max]).astype(_NP[t])
    y = x[::-1].copy()
    n = x.size
    want = [np.zeros(n, np.int32) for _ in range(n_out)]
    got = [w.copy() for w in want]
    p.interpret(n, x, y, *want)
    p.compile(cc="gcc")(n, x, y, *got)
    for k in range(n_out):
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"o{k}")


def test_decided_select_prints_the_branch_it_takes():
    """Folded to values: no comparison left in the C (each statement
    folds to an assignment of the location to itself: a comment)."""
    p = parse_proc_source(
        "def relu_u8(n: size, u: ui8[n], x: i8[n]):\n"
        "    for i in seq(0, n):\n"
        "        u[i] = select(u[i], 0, 0, u[i])\n"
        "        x[i] = select(x[i], 200, x[i], 1)\n", _SCOPE)
    c = p.c_code_str()
    assert "(void)u[i];  /* = itself" in c and "(void)x[i];  /* = itself" in c
    assert "<" not in c.split("relu_u8(")[-1].split("for (")[1].split("\n", 1)[1]
