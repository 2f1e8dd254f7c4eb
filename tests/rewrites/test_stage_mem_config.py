"""stage_mem around a block whose loop bounds read config it writes.

Whether the block overwrites the whole staged window (so the load nest may
be dropped) must be decided with the config values the block itself
establishes, where its loops evaluate their bounds -- not with the values
before the block.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, config, f32, index, proc, seq, size
from exo_hl.core_ir.interpret import ConfigState


@config
class StageCfg:
    n: size


@proc
def partial_overwrite(A: f32[8]):
    StageCfg.n = 2
    for x in seq(0, StageCfg.n):
        A[x] = 1.0


@proc
def partial_overwrite_after_full(A: f32[8]):
    StageCfg.n = 8
    StageCfg.n = 2
    for x in seq(0, StageCfg.n):
        A[x] = 1.0


def _run(p, A):
    A = A.copy()
    p.interpret(A, config_state=ConfigState())
    return A


@pytest.mark.parametrize("p", [
    pytest.param(partial_overwrite, id="unknown_before"),
    pytest.param(partial_overwrite_after_full, id="full_before")])
def test_stage_mem_block_setting_its_own_loop_bound(p):
    """The block writes only A[0:2] of the staged A[0:8]: the other six
    values must be loaded before it, or the store writes garbage back."""
    k = 1 if p is partial_overwrite_after_full else 0
    block = (p.find(f"StageCfg.n = _ #{k}"), p.find_loop("x"))
    q = p.stage_mem(block, "A[0:8]", "A_s")
    A = np.arange(8, dtype=np.float32) + 10
    np.testing.assert_array_equal(_run(q, A), _run(p, A))


# ----------------------------------------------------------------------
# a window whose offsets read a config field (audit 15a: the window text
# could not name a config, 'name ... is not defined'); the block may not
# write the field, also through a callee
@config
class OffCfg:
    a: index


@proc
def set_a(v: index):
    OffCfg.a = v


@proc
def offsets(k: index, A: f32[12], B: f32[4]):
    assert k >= 0
    assert k <= 4
    OffCfg.a = k
    for i in seq(0, 4):
        A[OffCfg.a + i + 1] += B[i]
        B[i] = A[OffCfg.a + i]


@proc
def offsets_rewritten(k: index, A: f32[12], B: f32[4]):
    assert k >= 0
    assert k <= 4
    OffCfg.a = k
    for i in seq(0, 4):
        A[OffCfg.a + i] = B[i]
        set_a(0)


def _run_k(p, k):
    A = np.arange(12, dtype=np.float32) + 10
    B = np.arange(4, dtype=np.float32) - 2
    st = ConfigState()
    p.interpret(k, A, B, config_state=st)
    return A.tolist(), B.tolist(), st.get((OffCfg, "a"))


def test_window_offsets_reading_a_config_field():
    q = offsets.stage_mem(offsets.find_loop("i"),
                          "A[OffCfg.a:OffCfg.a + 5]", "A_s")
    assert "A[i0 + OffCfg.a] = A_s[i0]" in str(q)
    for k in range(5):
        assert _run_k(q, k) == _run_k(offsets, k)


@pytest.mark.parametrize("block", ["i", "set_a(_)"])
def test_window_offsets_reading_a_field_the_block_writes(block):
    p = offsets_rewritten
    blk = p.find_loop("i") if block == "i" else p.find(block).parent()
    with pytest.raises(SchedulingError, match="may be written by the block"):
        p.stage_mem(blk, "A[OffCfg.a:OffCfg.a + 4]", "A_s")
