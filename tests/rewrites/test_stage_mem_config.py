"""stage_mem around a block whose loop bounds read config it writes.

Whether the block overwrites the whole staged window (so the load nest may
be dropped) must be decided with the config values the block itself
establishes, where its loops evaluate their bounds -- not with the values
before the block.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import config, f32, proc, seq, size
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
