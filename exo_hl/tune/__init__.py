"""Autotuning: search a schedule's parameters, remember the best per
machine, and start from an analytical model of the caches.

* ``tune(template, space, bench, ...)`` builds candidates (each a chain
  of checked rewrites) in worker processes, times them one at a time and
  survives refused, crashing and hanging candidates (``search.py``,
  the processes in ``workers.py``), then re-times the best few against
  the initial points (``confirm.py``);
* ``TuningDB`` keeps the best parameters per kernel and machine in the
  cache directory (``database.py``), keyed by ``machine_signature()``
  (``machine.py``);
* ``blis_blocking`` derives KC, MC and NC from the cache sizes, after
  BLIS's analytical model (``blocking.py``).

docs/tuning.md walks through an example.

>>> from exo_hl.tune import blis_blocking
>>> blis_blocking(6, 16).kc > 0
True
"""
from __future__ import annotations

from .blocking import Blocking, blis_blocking
from .database import Lookup, TuningDB
from .machine import (CacheLevel, cache_levels, cpu_family, cpu_id, is_amd,
                      machine_signature, signature_id, signature_label)
from .confirm import Confirmation, Confirmed
from .search import STATUSES, Trial, TuneResult, tune

__all__ = ["tune", "TuneResult", "Trial", "STATUSES", "Confirmation",
           "Confirmed", "TuningDB", "Lookup",
           "machine_signature", "signature_id", "signature_label",
           "cache_levels", "CacheLevel", "cpu_family", "cpu_id", "is_amd",
           "blis_blocking", "Blocking"]
