"""Limits of the generated C: its size is linear in the expression (a
nested ``fmax`` repeated its first argument: a 3x3 max pool was 2 MB of
C), the stack a procedure's ``DRAM_STATIC`` arrays take together, and heap
allocation sizes that overflow ``size_t``."""
from __future__ import annotations

import random
import time

import numpy as np
import pytest

import exo_hl
from exo_hl.frontend.decorators import parse_proc_source

from cg_helpers import sanitized_run
from test_c_bits import assert_bits_equal

_SCOPE = {n: getattr(exo_hl, n) for n in exo_hl.__all__}


def _nested(fn, leaves, rng):
    """``fn`` applied to the leaves as one random binary tree."""
    if len(leaves) == 1:
        return leaves[0]
    k = rng.randint(1, len(leaves) - 1)
    return f"{fn}({_nested(fn, leaves[:k], rng)}, " \
           f"{_nested(fn, leaves[k:], rng)})"


def _pool_source(fn, t, k, rng, wrap=""):
    leaves = [f"a[i + {d}]" for d in range(k)]
    if rng is None:     # the left-deep chain max(max(max(a0, a1), a2), ..)
        e = leaves[0]
        for x in leaves[1:]:
            e = f"{fn}({e}, {x})"
    else:
        e = _nested(fn, leaves, rng)
    if wrap:
        e = f"{wrap}({e})"
    return (f"def pool(n: size, a: {t}[n + {k}], o: {t}[n]):\n"
            f"    for i in seq(0, n):\n        o[i] = {e}\n")


def _c_size(src):
    p = parse_proc_source(src, _SCOPE)
    return len(p.c_code_str()), p


@pytest.mark.parametrize("fn,t", [("fmax", "f32"), ("fmin", "ui8")])
def test_c_size_is_linear_in_nested_min_max(fn, t):
    """Left-deep and random trees of 3, 6, 9, 12 values: each step adds
    about as much C as the one before (the text doubled per level). (The
    sizes stay small: the printer, which the test suite's audit runs on
    every procedure, is slow on one line of a dozen nested calls.)"""
    rng = random.Random(7)
    for shape in (None, rng):
        sizes = [_c_size(_pool_source(fn, t, k, shape))[0]
                 for k in (3, 6, 9, 12)]
        steps = [b - a for a, b in zip(sizes, sizes[1:])]
        assert max(steps) <= 1.5 * min(steps), (shape, sizes)
        assert sizes[-1] < 4_000, sizes


def test_relu_of_nested_relu_is_linear():
    e = "a[i]"
    sizes = []
    for depth in range(1, 10):
        e = f"relu({e} + a[i + 1])"
        sizes.append(len(parse_proc_source(
            f"def r(n: size, a: f32[n + 1], o: f32[n]):\n"
            f"    for i in seq(0, n):\n        o[i] = {e}\n",
            _SCOPE).c_code_str()))
    assert sizes[-1] - sizes[4] <= 1.5 * (sizes[4] - sizes[0]), sizes


POOL_VALUES = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf,
                        1e-45, -1e-45, 3.5, -3.5, 2.0])


@pytest.mark.parametrize("t,dt", [("f32", np.float32), ("f64", np.float64)])
def test_3x3_max_pool_compiles_fast_and_keeps_nan_and_zero_rules(t, dt):
    """A max of 9 values (a 3x3 max pool, rows flattened): 2 MB of C and
    gcc did not finish in 300 s. Inputs full of NaN, +-0 and infinities:
    fmax ignores a NaN and prefers +0 to -0 (docs/semantics.md)."""
    rows = [f"a[i + {r * 4 + c}]" for r in range(3) for c in range(3)]
    e = rows[0]
    for x in rows[1:]:
        e = f"fmax({e}, {x})"
    src = (f"def maxpool(n: size, a: {t}[n + 11], o: {t}[n]):\n"
           f"    for i in seq(0, n):\n        o[i] = {e}\n")
    p = parse_proc_source(src, _SCOPE)
    assert len(p.c_code_str()) < 5000
    t0 = time.monotonic()
    f = p.compile(cc="gcc")
    assert time.monotonic() - t0 < 30
    rng = np.random.default_rng(3)
    n = 4096
    a = rng.choice(POOL_VALUES, n + 11).astype(dt)
    want, got = np.zeros(n, dt), np.zeros(n, dt)
    p.interpret(n, a, want)
    f(n, a, got)
    assert_bits_equal(got, want)
    # the rule itself, on one window: NaN ignored, +0 above -0
    a = np.full(n + 11, np.nan, dt)
    a[[0, 4]] = [-0.0, 0.0]
    p.interpret(n, a, want)
    f(n, a, got)
    assert want[0] == 0 and not np.signbit(want[0])
    assert_bits_equal(got, want)


# -- 10. the stack budget -----------------------------------------------------

from exo_hl import MemGenError  # noqa: E402
from exo_hl.core_ir.memory import STACK_BUDGET, STACK_TOTAL_BUDGET  # noqa

_MiB_F32 = STACK_BUDGET // 4       # f32 elements of a 1 MiB array


def _arrays_src(name, n_arrays, elems=_MiB_F32):
    allocs = "".join(f"    t{k}: f32[{elems}] @ DRAM_STATIC\n"
                     for k in range(n_arrays))
    uses = "".join(f"        t{k}[i] = x[i]\n        x[i] = t{k}[i]\n"
                   for k in range(n_arrays))
    return (f"def {name}(x: f32[8]):\n{allocs}"
            f"    for i in seq(0, 8):\n{uses}")


def test_arrays_live_at_once_share_one_budget():
    """Nine live 1 MiB arrays compiled, and the call died with SIGSEGV;
    each array alone was under the limit."""
    ok = parse_proc_source(_arrays_src("two", 2), _SCOPE)
    ok.c_code_str()
    bad = parse_proc_source(_arrays_src("nine", 9), _SCOPE)
    with pytest.raises(MemGenError, match=r"take \d+ bytes of stack") as e:
        bad.c_code_str()
    # located at the first array past the budget
    assert "t2: f32" in str(e.value) and "'nine'" in str(e.value)
    with pytest.raises(MemGenError):
        bad.compile()


def test_arrays_of_disjoint_blocks_do_not_add_up_and_callees_do():
    seq_blocks = parse_proc_source(
        "def blocks(x: f32[8]):\n" + "".join(
            f"    for j{k} in seq(0, 1):\n"
            f"        t{k}: f32[{_MiB_F32}] @ DRAM_STATIC\n"
            f"        for i in seq(0, 8):\n"
            f"            t{k}[i] = x[i]\n            x[i] = t{k}[i]\n"
            for k in range(4)), _SCOPE)
    seq_blocks.c_code_str()      # one live at a time
    x = np.arange(8, dtype=np.float32)
    seq_blocks.compile()(x)
    assert list(x) == list(range(8))
    callee = parse_proc_source(_arrays_src("callee", 2), _SCOPE)
    scope = dict(_SCOPE, callee=callee)
    caller = parse_proc_source(
        f"def caller(x: f32[8]):\n    u: f32[16] @ DRAM_STATIC\n"
        f"    for i in seq(0, 8):\n        u[i] = x[i]\n        x[i] = u[i]\n"
        f"    callee(x)\n", scope)
    with pytest.raises(MemGenError, match="stack") as e:
        caller.c_code_str()
    assert "callee(x)" in str(e.value)


@pytest.mark.parametrize("seed", range(20))
def test_random_nests_are_refused_exactly_past_the_budget(seed):
    """Random blocks, loops, branches and arrays of random sizes: refused
    exactly when the arrays live at once (a block's so far, plus the
    deepest of a nested block) exceed the budget."""
    rng = random.Random(seed)
    lines, k = [], [0]

    def block(depth, live):
        most = live
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            ind = "    " * depth
            if r < 0.5 or depth >= 4:
                kb = rng.choice([64, 256, 512, 1024]) * 1024
                n = kb // 4
                k[0] += 1
                lines.append(f"{ind}t{k[0]}: f32[{n}] @ DRAM_STATIC")
                lines.append(f"{ind}t{k[0]}[0] = x[0]")
                lines.append(f"{ind}x[0] = t{k[0]}[0]")
                live += kb
                most = max(most, live)
            else:
                k[0] += 1
                head = (f"for j{k[0]} in seq(0, 2):" if r < 0.75
                        else f"if n > {k[0]}:")
                lines.append(ind + head)
                most = max(most, block(depth + 1, live))
        return most
    need = block(1, 0)
    p = parse_proc_source("def nest(n: size, x: f32[1]):\n"
                          + "\n".join(lines) + "\n", _SCOPE)
    if need > STACK_TOTAL_BUDGET:
        with pytest.raises(MemGenError, match="stack"):
            p.c_code_str()
    else:
        p.c_code_str()


# -- 11. heap allocation sizes ------------------------------------------------

_HEAP_SRC = """\
def heap(a: size, b: size, c: size, x: f32[4]):
    assert c >= 4
    t: f32[a, b, c] @ DRAM
    for i in seq(0, 4):
        t[0, 0, i] = x[i]
        x[i] = t[0, 0, i] + 1.0
"""


def test_heap_size_overflow_is_a_value_error_in_c_too():
    """a = b = c = 2**21: the byte count wrapped to 0, malloc(0) succeeded
    and the writes overflowed the heap (glibc aborted the process); the
    interpreter refuses with numpy's ValueError."""
    p = parse_proc_source(_HEAP_SRC, _SCOPE)
    f = p.compile()
    big = (2**21, 2**21, 2**21)
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError):
        p.interpret(*big, x)
    with pytest.raises(ValueError, match="overflows"):
        f(*big, x)
    with pytest.raises(ValueError, match="overflows"):
        f.bind(*big, x)()
    f(4, 4, 4, x)
    assert (x == 1).all()


def test_failed_allocation_frees_what_is_held_and_reaches_the_caller(
        tmp_path):
    """A callee's failure returns through its caller, which frees its own
    buffers first (the sanitized run checks no leak and no bad access)."""
    callee = parse_proc_source(_HEAP_SRC, _SCOPE)
    scope = dict(_SCOPE, heap=callee)
    caller = parse_proc_source(
        "def outer(a: size, x: f32[4]):\n"
        "    u: f32[a + 4] @ DRAM\n"
        "    for i in seq(0, 4):\n"
        "        u[i] = x[i]\n"
        "    for k in seq(0, 2):\n"
        "        v: f32[a + 4] @ DRAM\n"
        "        v[0] = u[0]\n"
        "        heap(a, a, a + 4, x)\n"
        "        x[0] = v[0]\n", scope)
    c = caller.c_code_str()
    assert c.count("if (exo_hl_status) {") == 4     # u, v, the call; heap's t
    f = caller.compile()
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="overflows"):
        f(2**21, x)
    f(2, x)
    assert list(x) == [0, 2, 2, 2]
    # under ASan (leaks detected): the failing run frees u and v
    got = sanitized_run(tmp_path, caller,
                        {"a": 2**21, "x": np.zeros(4, np.float32)})
    assert got["x"] == [0, 0, 0, 0]


@pytest.mark.parametrize("seed", range(6))
def test_random_size_products_fail_exactly_when_they_overflow(seed):
    """Random 1-4 dimensional sizes, some products past 2**64 bytes and
    some just below: C refuses exactly those the interpreter refuses with
    ValueError (past the address space), and runs the rest."""
    rng = random.Random(seed)
    nd = rng.randint(2, 4)
    names = [f"s{k}" for k in range(nd)]
    p = parse_proc_source(
        f"def hp({', '.join(n + ': size' for n in names)}, x: f32[1]):\n"
        f"    t: f32[{', '.join(names)}] @ DRAM\n"
        f"    t[{', '.join('0' for _ in names)}] = x[0]\n"
        f"    x[0] = t[{', '.join('0' for _ in names)}] + 1.0\n", _SCOPE)
    f = p.compile()
    for _ in range(12):
        dims = [rng.choice([1, 2, 3, 1000, 2**20, 2**31 - 1])
                for _ in names]
        nbytes = 4 * int(np.prod(dims, dtype=object))
        x = np.zeros(1, np.float32)
        if nbytes >= 2**63:     # numpy's limit (an intp), C's is 2**64
            with pytest.raises(ValueError):
                p.interpret(*dims, x)
        if nbytes >= 2**64:
            with pytest.raises(ValueError, match="overflows"):
                f(*dims, x)
        elif nbytes <= 2**20:
            f(*dims, x)
            assert x[0] == 1


def test_failed_allocation_in_a_par_loop_is_reported():
    """Each thread's share returns its status; the caller or's them."""
    p = parse_proc_source(
        "def parheap(n: size, a: size, x: f32[n]):\n"
        "    for i in par(0, n):\n"
        "        t: f32[a, a, a] @ DRAM\n"
        "        t[0, 0, 0] = x[i]\n"
        "        x[i] = t[0, 0, 0] + 1.0\n", _SCOPE)
    c = p.c_code_str()
    assert "reduction(|: exo_hl_status)" in c
    f = p.compile()
    x = np.zeros(64, np.float32)
    with pytest.raises(ValueError, match="overflows"):
        f(64, 2**22, x)
    f(64, 2, x)
    assert (x == 1).all()


@pytest.mark.parametrize("heap_first", [False, True])
def test_par_loops_in_one_region_where_only_one_allocates(heap_first):
    """Two par loops in one parallel region, one with a heap buffer (its
    share returns a status) and one without (its share is void): only
    the first's status is or'ed in. The C used to or the void call's
    value too and failed to compile (the int8 GEMM with A packed per row
    block: its B packing loop next to the row blocks)."""
    heap = ("    for i in par(0, n):\n"
            "        t: f32[a, a, a] @ DRAM\n"
            "        t[0, 0, 0] = x[i]\n"
            "        x[i] = t[0, 0, 0] + 1.0\n")
    plain = ("    for j in par(0, n):\n"
             "        y[j] = y[j] * 2.0\n")
    p = parse_proc_source(
        "def twopar(n: size, a: size, x: f32[n], y: f32[n]):\n"
        + (heap + plain if heap_first else plain + heap), _SCOPE)
    c = p.c_code_str()
    assert "reduction(|: exo_hl_status)" in c
    # in the region, on one thread, without OpenMP
    assert c.count("exo_hl_status |= twopar_par") == 3
    f = p.compile()
    x, y = np.zeros(64, np.float32), np.ones(64, np.float32)
    f(64, 2, x, y)
    assert (x == 1).all() and (y == 2).all()
    with pytest.raises(ValueError, match="overflows"):
        f(64, 2**22, x, y)


def test_heap_buffers_start_on_a_cache_line(tmp_path):
    """A DRAM buffer on the heap comes from aligned_alloc(64, ...) with the
    size rounded up to a multiple of 64 (C11): malloc's 16-byte alignment
    made every AVX-512 load of a conv kernel's packing buffer straddle two
    cache lines (Halide's layer, packed per call: 0.78-0.87x ONNX Runtime
    against 1.08-1.13x aligned, 1 thread). Sizes that are not multiples
    of 64 bytes (4 x 1, 3, 17 floats) run clean under ASan."""
    p = parse_proc_source(_HEAP_SRC, _SCOPE)
    c = p.c_code_str()
    assert "aligned_alloc(64, " in c and " malloc(" not in c
    f = p.compile()
    for dims in ((1, 1, 4), (1, 3, 4), (17, 1, 4)):
        x = np.zeros(4, np.float32)
        f(*dims, x)
        assert (x == 1).all()
    got = sanitized_run(tmp_path, p, {"a": 3, "b": 1, "c": 5,
                                      "x": np.zeros(4, np.float32)})
    assert got["x"] == [1, 1, 1, 1]
