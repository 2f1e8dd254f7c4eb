"""The memory hooks ``exclusive()`` and ``clobbered_by()`` on a user memory
(codegen_c/memory_rules.py): C generation refuses two live buffers of an
exclusive memory and a config write that may change a clobbering config
while a buffer is live; what is provably fine is accepted. Only C text is
generated (no C compiler runs)."""
from __future__ import annotations

import pytest

from exo_hl import (DRAM_STATIC, MemGenError, config, f32, index, instr, par,
                    proc, seq, size)


class REG(DRAM_STATIC):
    """One register, emptied by a change of ``Mode``."""

    @classmethod
    def exclusive(cls):
        return True

    @classmethod
    def clobbered_by(cls):
        return (Mode,)


@config
class Mode:
    m: index


@instr("/* set mode {v} */ {Mode.m} = {v};")
def set_mode(v: index):
    Mode.m = v


@proc
def seq_buffers(x: f32[4]):
    set_mode(1)
    for i in seq(0, 2):
        t: f32[4] @ REG
        for j in seq(0, 4):
            t[j] = x[j]
    u: f32[4] @ REG
    for j in seq(0, 4):
        u[j] = x[j]
    set_mode(1)         # provably the mode loaded: u is kept


@proc
def two_live(n: size, x: f32[4]):
    t: f32[4] @ REG
    for j in seq(0, 4):
        t[j] = x[j]
    if n > 2:
        u: f32[4] @ REG
        for j in seq(0, 4):
            u[j] = x[j]


@proc
def plain_write(x: f32[4]):
    set_mode(1)
    t: f32[4] @ REG
    for j in seq(0, 4):
        t[j] = x[j]
    Mode.m = 2


@proc
def other_value(x: f32[4]):
    set_mode(1)
    t: f32[4] @ REG
    for j in seq(0, 4):
        t[j] = x[j]
    set_mode(2)


@proc
def if_merges(n: size, x: f32[4]):
    if n > 2:
        set_mode(1)
    else:
        set_mode(2)
    t: f32[4] @ REG
    for j in seq(0, 4):
        t[j] = x[j]
    set_mode(1)


def test_buffers_in_sequence_and_same_mode_are_accepted():
    c = seq_buffers.c_code_str()
    assert "set mode 1" in c


@pytest.mark.parametrize("p, msg", [
    (two_live, "allocates 'u' while buffer 't' in REG is live"),
    (plain_write, "writes Mode .* while buffer 't' in REG is live"),
    (other_value, "calls 'set_mode', which writes Mode"),
    (if_merges, "calls 'set_mode', which writes Mode")])
def test_rule_breaks_are_refused(p, msg):
    with pytest.raises(MemGenError, match=msg):
        p.c_code_str()


@proc
def window_across_par(n: size, x: f32[4], y: f32[n, 4]):
    t: f32[4] @ REG
    for j in seq(0, 4):
        t[j] = x[j]
    w = t[0:4]
    ww = w[1:4]
    for i in par(0, n):
        for j in seq(0, 3):
            y[i, j] = ww[j]


@proc
def window_inside_par(n: size, x: f32[4], y: f32[n, 4]):
    for i in par(0, n):
        t: f32[4] @ REG
        for j in seq(0, 4):
            t[j] = x[j]
        w = t[0:4]
        for j in seq(0, 4):
            y[i, j] = w[j]


def test_window_of_a_register_across_a_par_loop_is_refused():
    """A window names the register its buffer is in: a window made
    outside a par loop, of a buffer allocated there, is no more in the
    other threads' registers than the buffer (was accepted: the rule
    looked for the buffer's own name in the loop body). Found by
    tests/codegen_c/test_thread_state_fuzz.py."""
    with pytest.raises(MemGenError, match=r"par loop's body uses window "
                       r"'ww' of buffer 't' in REG, allocated outside"):
        window_across_par.c_code_str()
    window_inside_par.c_code_str()
