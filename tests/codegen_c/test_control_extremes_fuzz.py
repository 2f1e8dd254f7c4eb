"""Fuzzer of control arithmetic at the limits of its values: random
control expressions (``+ - *`` by constants, ``/ %`` by positive
constants, negation, comparisons) over a size, an index and the strides
of a window argument, with constants near 2**31, 2**32, 2**62, run on
arguments at their extremes (sizes 1 and 2**31 - 1, indices -2**31 and
2**31 - 1, window strides 1, 2**31 - 1, 2**31 and 2**38: a view with one
row over a 16-byte buffer, so no memory is needed).

The verdict per expression: refused (a ``BoundsError`` / ``ExoTypeError``
at decoration: it may leave the 64 bits of the C; or a ``ValueError`` at
the call: an argument the walk's ranges do not cover), or the compiled C
takes the branch ``interpret()`` takes and its sanitized build
(``-fsanitize=undefined,address``) runs clean. Accepted expressions are
batched, one ``if`` each, in one procedure per seed, so a seed costs two
C builds.

Found: a window stride of 2**31 or more was taken by the call while the
walk bounds ``stride(A, d)`` below 2**31 (``stride(A, 0) * 2**31``
overflowed in C; fixed in ``core_ir/call_args.reads_strides``); an
expression of literals only (``1024 * 2147483647``, seeds 62 and 97) was
computed by C in ``int`` and overflowed (gcc folded it wrapped, so no
sanitizer report: only the branch differed; fixed in
``codegen_c/expr_emit._folded``, which prints it folded); a call passing
a value past 32 bits (``n * 4``) to a callee walked alone with 32-bit
arguments (``k * 2**31`` overflowed there; ``run_call_seed``, fixed in
``core_ir/control_ranges._Ranges.callee``).

A config field read is taken to be 32-bit too, and a write of a wider
value (``Cfg.k = n * 4``) was not refused: ``Cfg.k * 2**31`` after it
overflowed in C (``run_config_seed``; fixed: the write fails the call,
``ValueError``, in ``interpret()`` always and in C where the value may
not fit, ``core_ir/control_ranges.wide_config_writes``)."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest

import exo_hl
from exo_hl import BoundsError, ExoTypeError, config, index
from exo_hl.errors import SanitizerError
from exo_hl.frontend.decorators import parse_proc_source

_SCOPE = {n: getattr(exo_hl, n) for n in exo_hl.__all__}

CONSTS = (0, 1, 3, 7, 1024, 2147483647, 2147483648, 4294967296,
          1099511627776, 4611686018427387904, 3074457345618258603)
DIVISORS = (1, 2, 3, 7, 1024, 2147483648, 4294967297)
LEAVES = ("n", "k", "stride(A, 0)", "stride(A, 1)")
SIZES = (1, 2**31 - 1)
INDICES = (-2**31, -1, 0, 2**31 - 1)
STRIDES = (1, 2**31 - 1, 2**31, 2**38)
SIG = "n: size, k: index, A: [f32][1, 4] @ DRAM, x: f32[{m}] @ DRAM"


def draw_expr(rng, depth=3, leaves=LEAVES) -> str:
    """A random control expression (text) over ``leaves``."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(leaves) if rng.random() < 0.8 else \
            str(rng.choice(CONSTS))
    r = rng.random()
    a = draw_expr(rng, depth - 1, leaves)
    if r < 0.3:
        return f"({a} {rng.choice('+-')} {draw_expr(rng, depth - 1, leaves)})"
    if r < 0.6:
        return f"({a} * {rng.choice(CONSTS)})"
    if r < 0.85:
        return f"({a} {rng.choice('/%')} {rng.choice(DIVISORS)})"
    return f"(-{a})"


def draw_cond(rng, leaves=LEAVES) -> str:
    return f"{draw_expr(rng, 3, leaves)} {rng.choice(['>', '==', '<='])} " \
           f"{draw_expr(rng, 2, leaves)}"


def _source(conds):
    body = "".join(f"    if {c}:\n        x[{i}] = 1.0\n"
                   for i, c in enumerate(conds))
    return f"def ctl(" + SIG.format(m=max(1, len(conds))) + "):\n" + \
        (body or "    x[0] = 0.0\n")


def accepted(conds):
    """The conditions the frontend takes (each alone), and how many it
    refused."""
    out = []
    for c in conds:
        try:
            parse_proc_source(_source([c]), _SCOPE)
        except (BoundsError, ExoTypeError):
            continue
        out.append(c)
    return out, len(conds) - len(out)


def _window(stride):
    base = np.zeros(4, np.float32)
    return np.lib.stride_tricks.as_strided(base, (1, 4), (4 * stride, 4))


def run_seed(seed, n_conds=24, n_args=6):
    """(accepted, refused at decoration, argument sets refused at the
    call, argument sets run): raises AssertionError on a difference or a
    sanitizer report."""
    rng = random.Random(seed)
    conds, refused = accepted([draw_cond(rng) for _ in range(n_conds)])
    p = parse_proc_source(_source(conds), _SCOPE)
    f, fs = p.compile(), p.compile(sanitize=True)
    call_refused = ran = 0
    for _ in range(n_args):
        n, k = rng.choice(SIZES), rng.choice(INDICES)
        A = _window(rng.choice(STRIDES))
        want = np.zeros(max(1, len(conds)), np.float32)
        try:
            p.interpret(n, k, A, want)
        except ValueError:
            call_refused += 1
            with pytest.raises(ValueError):
                f(n, k, A, want.copy())
            continue
        for g in (f, fs):
            got = np.zeros_like(want)
            try:
                g(n, k, A, got)
            except SanitizerError as e:
                raise AssertionError(f"seed {seed}, n={n}, k={k}, "
                                     f"strides={A.strides}: {e}") from e
            bad = np.flatnonzero(got != want)
            assert not bad.size, (seed, n, k, A.strides,
                                  [conds[i] for i in bad])
        ran += 1
    return len(conds), refused, call_refused, ran


def _parsed(src, scope):
    """The procedure of ``src``, or None when decoration refuses it."""
    try:
        return parse_proc_source(src, scope)
    except (BoundsError, ExoTypeError):
        return None


def _compare(p, args_list, seed, what):
    """(calls refused, calls run) of ``p`` on each ``(args, m)``: a call
    ``interpret()`` refuses (``ValueError``: an argument, or a config
    write past 32 bits) the C refuses too, plain and sanitized; else both
    take ``interpret()``'s branches (``m`` flags) and the sanitizers stay
    quiet."""
    f, fs = p.compile(), p.compile(sanitize=True)
    refused = ran = 0
    for args, m in args_list:
        want = np.zeros(m, np.float32)
        try:
            p.interpret(*args, want)
        except ValueError as e:
            for g in (f, fs):
                with pytest.raises(ValueError, match=re.escape(
                        str(e).split(": ", 1)[-1][:30])):
                    g(*args, np.zeros(m, np.float32))
            refused += 1
            continue
        for g in (f, fs):
            got = np.zeros_like(want)
            try:
                g(*args, got)
            except SanitizerError as e:
                raise AssertionError(f"seed {seed}, {what}: {e}") from e
            assert np.array_equal(got, want), (seed, what, args[:2])
        ran += 1
    return refused, ran


def run_call_seed(seed, n_conds=8, n_calls=6, n_args=4):
    """A callee with random conditions on its index argument ``k``,
    called with random expressions for ``k``: (calls accepted, refused,
    argument sets run)."""
    rng = random.Random(seed)
    conds, _ = accepted([draw_cond(rng) for _ in range(n_conds)])
    m = max(1, len(conds))
    scope = dict(_SCOPE, ctl=parse_proc_source(_source(conds), _SCOPE))
    ok = refused = ran = 0
    for c in range(n_calls):
        arg = draw_expr(rng, 2)
        src = (f"def caller{c}(" + SIG.format(m=m) + "):\n"
               f"    ctl(n, {arg}, A, x)\n")
        p = _parsed(src, scope)
        if p is None:
            refused += 1
            continue
        ok += 1
        args = [((rng.choice(SIZES), rng.choice(INDICES),
                  _window(rng.choice(STRIDES[:2]))), m)
                for _ in range(n_args)]
        ran += _compare(p, args, seed, f"ctl(n, {arg}, A, x)")[1]
    return ok, refused, ran


@config
class FuzzCfg:
    k: index


def run_config_seed(seed, n_conds=8, n_writes=6, n_args=4):
    """A procedure that writes a random control expression to a config
    field, then tests random conditions on the field (``FuzzCfg.k`` as a
    leaf): (writes accepted, refused, argument sets run, calls failed by
    the write). Every verdict: refused at decoration, or ``interpret()``
    and the C (plain and sanitized) both fail the call, or take the same
    branches."""
    rng = random.Random(seed)
    scope = dict(_SCOPE, FuzzCfg=FuzzCfg)
    leaves = LEAVES + ("FuzzCfg.k",) * 2
    ok = refused = ran = failed = 0
    for w in range(n_writes):
        value = draw_expr(rng, 2)
        conds = [draw_cond(rng, leaves) for _ in range(n_conds)]
        kept = []
        for c in conds:
            try:
                parse_proc_source(_source([c]).replace(
                    "    if", "    FuzzCfg.k = k\n    if", 1), scope)
            except (BoundsError, ExoTypeError):
                continue
            kept.append(c)
        # the field starts from k: config state persists between calls,
        # each procedure's own in C, shared by all in interpret()
        src = _source(kept).replace(
            "):\n", f"):\n    FuzzCfg.k = k\n    FuzzCfg.k = {value}\n", 1)
        p = _parsed(src, scope)
        if p is None:
            refused += 1
            continue
        ok += 1
        m = max(1, len(kept))
        args = [((rng.choice(SIZES), rng.choice(INDICES), _window(1)), m)
                for _ in range(n_args)]
        f_, r_ = _compare(p, args, seed, f"FuzzCfg.k = {value}")
        failed += f_
        ran += r_
    return ok, refused, ran, failed


def test_config_writes_of_wide_values():
    totals = [0, 0, 0, 0]
    for seed in (1, 2, 5):
        for i, v in enumerate(run_config_seed(seed)):
            totals[i] += v
    print("writes accepted, refused, runs, calls failed by the write:",
          totals)
    assert totals[0] >= 6 and totals[2] >= 6 and totals[3] >= 2


def test_calls_passing_wide_values():
    totals = [0, 0, 0]
    for seed in (1, 2, 3, 14):       # 14: a wide call, wrong before
        for i, v in enumerate(run_call_seed(seed)):
            totals[i] += v
    print("calls accepted, refused, runs:", totals)
    assert totals[0] >= 4 and totals[1] >= 2 and totals[2] >= 8


def test_literal_only_expressions_are_printed_folded():
    """C computes ``1024 * 2147483647`` in ``int`` (overflow); the IR's
    value is exact: printed folded, ``2199023254528`` is a long. A divisor
    of literals (``k % (7 * 3)``), which the frontend and ``interpret()``
    take, compiles too (was refused at C generation)."""
    p = parse_proc_source(_source([
        "2147483647 < (1024 * 2147483647)", "k % (7 * 3) == (-7) / 2",
        "(-4611686018427387904 - 4611686018427387904) < k",
        "k * (3 - 3) + 1 > 0"]), _SCOPE)
    c = p.c_code_str()
    assert "2147483647 < 2199023254528" in c
    assert "exo_floor_mod(k, 21) == -4" in c
    assert "(-9223372036854775807 - 1) < k" in c
    assert "k * 0 + 1 > 0" in c       # a zero operand (not a divisor)
    A = _window(1)
    for k in (-5, 16, 2**31 - 1):
        want = np.zeros(4, np.float32)
        p.interpret(1, k, A, want)
        got = np.zeros(4, np.float32)
        p.compile()(1, k, A, got)
        assert np.array_equal(got, want) and want[0] == 1, k


def test_control_arithmetic_at_the_limits():
    totals = [0, 0, 0, 0]
    for seed in (1, 2, 3, 62, 97):
        for i, v in enumerate(run_seed(seed)):
            totals[i] += v
    print("accepted, refused, calls refused, calls run:", totals)
    assert totals[0] >= 20 and totals[1] >= 5    # both verdicts met
    assert totals[2] >= 1 and totals[3] >= 6
