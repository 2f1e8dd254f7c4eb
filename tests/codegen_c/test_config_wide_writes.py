"""A control config field holds a 32-bit value: every procedure bounds its
reads of one so (``core_ir/control_ranges``), whoever wrote it. A write of
a wider value fails the call with ``ValueError``: ``interpret()`` checks
every write, the C the writes whose value may not fit (status 4,
``wide_config_writes``). Before, ``Cfg.k = n * 4`` was taken and
``Cfg.k * 2**31`` after it overflowed in C (the branch went the other way
than in ``interpret()``, with a UBSan report). The sanitized build now
reads a failing function's status too (it dropped it, and copied back)."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import DRAM, config, f32, index, proc, seq, size


@config
class WCfg:
    k: index
    on: bool


@proc
def wide(n: size, x: f32[2] @ DRAM):
    WCfg.k = n * 4
    if WCfg.k * 2147483648 > n:
        x[0] = 1.0
    x[1] = 1.0


@proc
def counter(n: size, x: f32[2] @ DRAM):
    for i in seq(0, n):
        WCfg.k = WCfg.k + 1
    x[0] = 2.0


@proc
def narrow(n: size, k: index, x: f32[2] @ DRAM):
    WCfg.k = k
    WCfg.k = n - 1
    WCfg.k = 5
    WCfg.on = n > 3
    WCfg.k = WCfg.k / 2
    x[0] = 3.0


@proc
def calls_wide(n: size, x: f32[2] @ DRAM):
    wide(n, x)


@proc
def huge_heap(n: size, x: f32[2] @ DRAM):
    t: f32[n, n, n, n] @ DRAM
    t[0, 0, 0, 0] = 1.0
    x[0] = t[0, 0, 0, 0]


def test_printed_check_only_where_the_value_may_not_fit():
    c = wide.c_code_str()
    assert "int wide(" in c
    assert "if (n * 4 < INT32_MIN || n * 4 > INT32_MAX) exo_hl_status = 4;" \
        in c
    assert "WCfg_k + 1 > INT32_MAX" in counter.c_code_str()
    n = narrow.c_code_str()
    assert "void narrow(" in n and "INT32_MAX" not in n
    assert "int calls_wide(" in calls_wide.c_code_str()


@pytest.mark.parametrize("p", ["wide", "calls_wide"])
def test_wide_write_fails_the_call_everywhere(p):
    p = {"wide": wide, "calls_wide": calls_wide}[p]
    runs = (p.interpret, p.compile(), p.compile(sanitize=True))
    for n in (1, 3, (1 << 29) - 1):         # n * 4 fits: the same branches
        outs = []
        for g in runs:
            x = np.zeros(2, np.float32)
            g(n, x)
            outs.append(x)
        assert all(np.array_equal(o, outs[0]) for o in outs), (n, outs)
        assert outs[0][1] == 1.0
    for n in (1 << 29, (1 << 31) - 1):
        for g in runs:
            with pytest.raises(ValueError, match="config field was written"):
                g(n, np.zeros(2, np.float32))


def test_counter_fails_only_past_32_bits():
    f = counter.compile()
    f.set_config(WCfg, "k", (1 << 31) - 3)
    x = np.zeros(2, np.float32)
    f(2, x)
    assert f.get_config(WCfg, "k") == (1 << 31) - 1 and x[0] == 2.0
    with pytest.raises(ValueError, match="config field was written"):
        f(1, np.zeros(2, np.float32))
    assert f.get_config(WCfg, "k") == (1 << 31) - 1   # left unchanged


def test_sanitized_build_reports_a_heap_failure_status():
    """The class the config check exposed: the sanitized driver dropped a
    failing function's status (an allocation too large to address came
    back as a successful run)."""
    for g in (huge_heap.compile(), huge_heap.compile(sanitize=True)):
        with pytest.raises(ValueError, match="overflows the address space"):
            g((1 << 31) - 1, np.zeros(2, np.float32))
