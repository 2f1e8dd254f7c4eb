"""The per-machine tuning database: one JSON file per (key, machine).

A record is what a search found for one kernel (``key``, e.g.
``"sgemm.avx512.v2"``: the app, its instruction set and its schedule
version) on one machine (``machine_signature()``). Files live under
``<cache>/tuning/<key>/<label>.json`` (``$EXO_HL_TUNING_DB`` replaces
``<cache>/tuning`` when set; the cache directory of compiled
kernels: ``$EXO_HL_CACHE``, else ``$XDG_CACHE_HOME/exo_hl``, else
``~/.cache/exo_hl``); ``<label>`` names the CPU model, the core count and
the signature's hash, so records of several machines (a shared home
directory) sit side by side.

``lookup`` reads only the file of this machine's signature: a record
measured on another CPU, with other caches, another compiler or an older
schedule version is never returned. Every lookup says what it did
(``Lookup.note``, also logged on the ``exo_hl.tune`` logger): which record
is used, or that there is none and which other machines' records were
left alone.

>>> import tempfile
>>> db = TuningDB(tempfile.mkdtemp())
>>> db.lookup("demo.v1").record is None
True
>>> _ = db.store("demo.v1", {"kc": 256}, 150.0, units="GFLOP/s")
>>> db.lookup("demo.v1").record["params"]
{'kc': 256}
"""
from __future__ import annotations

import json
import logging
import math
import numbers
import os
import re
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from .machine import (differences, machine_signature, signature_id,
                      signature_label)

log = logging.getLogger("exo_hl.tune")


def _safe(key: str) -> str:
    if not key or not re.fullmatch(r"[A-Za-z0-9_.+-]+", key):
        raise ValueError(f"tuning key {key!r}: use letters, digits and "
                         f"'_.+-' only")
    return key


@dataclass(frozen=True)
class Lookup:
    """What ``TuningDB.lookup`` found: the record (a dict, or None), the
    file it came from, and a one-line note saying which record is used
    or why none is (print it: a record is never used silently).

    >>> Lookup(None, None, "no record").note
    'no record'
    """

    record: dict | None
    path: str | None
    note: str


class TuningDB:
    """Tuning records in ``directory`` (default: ``$EXO_HL_TUNING_DB``,
    else ``<cache>/tuning``: the variable keeps the records of a test run
    or an experiment apart from the machine's own).

    >>> TuningDB("/tmp/records").directory
    '/tmp/records'
    """

    def __init__(self, directory: str | None = None):
        if directory is None:
            directory = os.environ.get("EXO_HL_TUNING_DB")
        if not directory:
            from ..codegen_c.runner import cache_dir
            directory = os.path.join(cache_dir(), "tuning")
        self.directory = str(directory)

    def _dir(self, key):
        return os.path.join(self.directory, _safe(key))

    def path(self, key: str, signature: dict | None = None) -> str:
        """The file of ``key``'s record for ``signature`` (default: this
        machine's)."""
        sig = machine_signature() if signature is None else signature
        return os.path.join(self._dir(key), signature_label(sig) + ".json")

    def store(self, key: str, params: dict, value: float, *,
              units: str = "", signature: dict | None = None,
              extra: dict | None = None) -> str:
        """Write (or replace) the record of ``key`` on this machine (or
        ``signature``); returns its path. The write is atomic (a
        temporary file renamed), so a reader never sees half a record.
        ``value`` must be a finite number and ``extra`` may not replace
        the record's own fields (``ValueError``): ``lookup`` would not use
        such a record."""
        sig = machine_signature() if signature is None else signature
        if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"tuning record of {key}: value {value!r} is "
                             f"not a finite number (lookup would refuse "
                             f"it)")
        value = value if isinstance(value, int) else float(value)
        rec = {"key": key, "params": dict(params), "value": value,
               "units": units, "signature": sig,
               "signature_id": signature_id(sig),
               "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        clash = sorted(set(extra or {}) & set(rec))
        if clash:          # (a record whose signature, key or value
            raise ValueError(  # another field replaced is never found)
                f"tuning record extra fields {clash} would replace the "
                f"record's own")
        rec.update(extra or {})
        path = self.path(key, sig)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path),
                                   suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(rec, f, indent=1, sort_keys=True,
                          allow_nan=False)
            os.replace(tmp, path)
        except BaseException:    # (params not JSON: no stray temporary)
            os.unlink(tmp)
            raise
        log.info("tuning record for %s stored in %s", key, path)
        return path

    def records(self, key: str) -> list:
        """Every stored record of ``key``, this machine's and others'
        ([(path, record)]; unreadable files are skipped)."""
        d = self._dir(key)
        out = []
        try:
            names = sorted(os.listdir(d))
        except OSError:
            return out
        for n in names:
            if not n.endswith(".json"):
                continue
            try:
                with open(os.path.join(d, n)) as f:
                    rec = json.load(f)
            except (OSError, ValueError):
                continue
            if isinstance(rec, dict):     # (a JSON list, a string: skipped)
                out.append((os.path.join(d, n), rec))
        return out

    def lookup(self, key: str, signature: dict | None = None) -> Lookup:
        """This machine's record of ``key`` (or ``signature``'s), never
        another's; the note says which file is used, or that there is
        none and how the other machines' records differ. A file under this
        machine's name that cannot be used (truncated, not a record, a
        ``params`` that is no dict, a ``value`` that is no number: a
        hand edit, a disk filled mid-write by another tool) is reported in
        the note and not returned, so a caller falls back to its default
        instead of failing or reading half a record."""
        sig = machine_signature() if signature is None else signature
        path = self.path(key, sig)
        rec, why = None, None
        try:
            with open(path) as f:
                rec = json.load(f)
        except FileNotFoundError:
            rec = None
        except (OSError, ValueError) as e:
            why = f"unreadable ({type(e).__name__}: {e})"
        if rec is not None:
            why = unusable(rec, key, sig)
            if why is None:
                note = (f"tuned record for {key} ({rec['value']:.4g} "
                        f"{rec.get('units', '')}, {rec.get('time', '?')}) "
                        f"from {path}")
                log.info("%s", note)
                return Lookup(rec, path, note)
        others = [(p, r) for p, r in self.records(key) if p != path]
        note = f"no tuned record for {key} on this machine"
        if why is not None:
            note += f" (its file {path} is {why}: not used)"
        if others:
            diffs = sorted({d for _, r in others
                            for d in differences(r.get("signature"), sig)})
            note += (f"; {len(others)} record(s) of other machines not used "
                     f"(they differ in {', '.join(diffs) or 'signature'})")
        log.info("%s", note)
        return Lookup(None, None, note)


def unusable(rec, key: str, signature: dict) -> str | None:
    """Why a record read from ``key``'s file for ``signature`` must not be
    used (None when it may): not a JSON object, another key or machine
    (a file copied from elsewhere under this machine's name), ``params``
    not an object, ``value`` not a finite number.

    >>> unusable({"key": "k", "signature": {}, "params": {}, "value": 1.0},
    ...          "k", {})
    >>> unusable({"key": "k", "signature": {}, "params": [], "value": 1},
    ...          "k", {})
    'not a record (params is not an object)'
    """
    if not isinstance(rec, dict):
        return f"not a record (a JSON {type(rec).__name__})"
    if rec.get("key") != key or rec.get("signature") != signature:
        return "a record of another key or machine"
    if not isinstance(rec.get("params"), dict):
        return "not a record (params is not an object)"
    v = rec.get("value")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or \
            not math.isfinite(v):
        return f"not a record (value {v!r} is not a finite number)"
    return None
