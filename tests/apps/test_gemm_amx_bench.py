"""apps/gemm_amx/bench.py: the % of the same-run tile peak, for exo_hl and
MKL alike, is taken against the higher of the probes around a cell (never
overstated when the VM's tile unit changes speed mid-cell), times the
thread count, and flagged when the probes disagree."""
from __future__ import annotations

import pytest

from apps.gemm_amx.bench import STEADY, share_of_peak


def test_share_of_peak_uses_the_higher_probe_and_the_thread_count():
    pct, steady = share_of_peak(1000.0, [2000.0, 4000.0], 1)
    assert pct == pytest.approx(25.0)       # of 4000, not of 2000 or 3000
    assert not steady                       # 2x apart: the unit changed
    pct, steady = share_of_peak(4000.0, [4000.0, 4000.0 / STEADY], 2)
    assert pct == pytest.approx(50.0)       # two threads: two cores' peak
    assert steady                           # exactly STEADY apart
    pct, steady = share_of_peak(4000.0, [4000.0, 3990.0 / STEADY], 2)
    assert not steady


def test_share_of_peak_ignores_missing_probes_and_refuses_none():
    assert share_of_peak(500.0, [None, 1000.0], 1) == (50.0, True)
    with pytest.raises(ValueError):
        share_of_peak(500.0, [None, 0.0], 1)
    with pytest.raises(ValueError):
        share_of_peak(500.0, [1000.0], 0)
