"""The machine's parallel-region cost and the SGEMM thread minimums made
from it (``apps/common/fork_cost``, ``tuning.par_min_model``)."""
from __future__ import annotations

import pytest

from apps.common import fork_cost
from apps.sgemm import tuning
from exo_hl.tune import TuningDB, machine_signature


def test_par_min_model_scales_with_the_region_and_the_rate():
    """Zen 5's region (0.65 us, 261 GFLOP/s) puts two threads between
    64^3 and 96^3 for the packing kernels, between 64^3 and 72^3 for the
    in-place ones; a region of 20 us (what the Xeon's calls behaved like) keeps
    everything below 2^23 on one thread."""
    zen5 = tuning.par_min_model(0.65, 261.0)
    assert 64 ** 3 < zen5 < 96 ** 3
    # the in-place ones: three quarters of that, 64^3 kept on one thread
    narrow = tuning.par_min_model(0.65, 261.0, tuning.NARROW_B_PAR_REGIONS)
    assert narrow == zen5 * 3 // 4 and 64 ** 3 < narrow < 72 ** 3
    assert tuning.par_min_model(20.0, 242.0) >= 1 << 23
    assert tuning.par_min_model(1.3, 261.0) > zen5
    assert tuning.par_min_model(0.65, 130.0) < zen5


def test_fork_cost_is_measured_once_and_kept(tmp_path, monkeypatch):
    """The first call measures (a real probe: a positive cost in us) and
    stores it; later calls read the record (the probe is not run again);
    one thread has no cost; ``remeasure`` replaces it."""
    db = TuningDB(str(tmp_path))
    us = fork_cost.fork_cost_us(2, db)
    assert us is not None and 0 < us < 10_000
    monkeypatch.setattr(fork_cost, "measure",
                        lambda t: pytest.fail("measured again"))
    assert fork_cost.fork_cost_us(2, db) == us
    assert fork_cost.fork_cost_us(1, db) is None
    monkeypatch.setattr(fork_cost, "measure", lambda t: 123.0)
    assert fork_cost.fork_cost_us(2, db, remeasure=True) == 123.0
    assert fork_cost.fork_cost_us(2, db) == 123.0


def test_another_machines_fork_cost_is_not_used(tmp_path, monkeypatch):
    """A record stored under another signature is left alone: this
    machine measures its own."""
    db = TuningDB(str(tmp_path))
    other = dict(machine_signature(), cpu_model="Some Other CPU")
    db.store(fork_cost.key(2), {}, 999.0, units="us", signature=other)
    monkeypatch.setattr(fork_cost, "measure", lambda t: 0.5)
    assert fork_cost.fork_cost_us(2, db) == 0.5


def test_thread_minimums_fall_back_without_a_measurement(monkeypatch):
    """No OpenMP (or one thread): the constants, said in the note; with a
    measured region, the model's figures."""
    monkeypatch.setattr(fork_cost, "fork_cost_us", lambda t=None: None)
    assert tuning.thread_minimums("avx512") == (
        tuning.PAR_MIN, tuning.NARROW_B_PAR_MIN, "fixed thread minimums")
    monkeypatch.setattr(fork_cost, "fork_cost_us", lambda t=None: 0.65)
    monkeypatch.setattr(fork_cost, "fma_peak_gflops", lambda isa: 261.0)
    p, nb, note = tuning.thread_minimums("avx512")
    assert (p, nb) == (tuning.par_min_model(0.65, 261.0),
                       tuning.par_min_model(0.65, 261.0, 6))
    assert "0.65 us" in note
