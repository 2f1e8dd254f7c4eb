"""A tuning record file under this machine's name that cannot be used
(truncated, not a JSON object, ``params`` no object, ``value`` no finite
number; another machine's file that is no record) is never returned and
never makes a lookup fail: the note names the file and why, and the apps
fall back to their model. Found by the session-15 audit: such files made
``lookup`` raise (``AttributeError`` on a JSON list, ``TypeError``
formatting a ``value`` of null, in the note), so ``apps.sgemm.api.sgemm``
failed on every call, and a record without ``params`` was returned (the
documented ``found.record["params"]`` raised ``KeyError``). An unknown
``EXO_HL_SGEMM_PARAMS`` value ran the model, saying "model requested"."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from exo_hl.tune import TuningDB, machine_signature


def _corruptions(good: dict):
    text = json.dumps(good)
    yield "truncated", text[:len(text) // 2]
    yield "empty", ""
    yield "a list", "[1, 2]"
    yield "a string", '"sgemm"'
    for v in (None, "fast", float("nan"), float("inf"), True, [1.0]):
        yield f"value {v!r}", json.dumps(dict(good, value=v))
    for p in (None, "kc=256", [256]):
        yield f"params {p!r}", json.dumps(dict(good, params=p))
    yield "no params", json.dumps({k: v for k, v in good.items()
                                   if k != "params"})
    yield "no value", json.dumps({k: v for k, v in good.items()
                                  if k != "value"})


def test_an_unusable_record_is_reported_not_returned(tmp_path):
    db = TuningDB(str(tmp_path))
    path = db.store("k.v1", {"kc": 256}, 150.0, units="GFLOP/s")
    with open(path) as f:
        good = json.load(f)
    # another machine's file that is no record, beside it
    other = os.path.join(os.path.dirname(path), "elsewhere.json")
    n = 0
    for other_text in ("[1]", json.dumps({"key": "k.v1",
                                          "signature": "garbled"})):
        with open(other, "w") as f:
            f.write(other_text)
        for what, text in _corruptions(good):
            with open(path, "w") as f:
                f.write(text)
            found = db.lookup("k.v1")
            assert found.record is None and found.path is None, what
            assert path in found.note and "not used" in found.note, \
                (what, found.note)
            n += 1
    assert n > 20
    # a good record is used again
    os.remove(other)
    with open(path, "w") as f:
        json.dump(good, f)
    assert db.lookup("k.v1").record["params"] == {"kc": 256}


def test_a_missing_record_is_not_called_unreadable(tmp_path):
    found = TuningDB(str(tmp_path)).lookup("k.v1")
    assert found.record is None
    assert found.note == "no tuned record for k.v1 on this machine"


def test_sgemm_falls_back_to_the_model_on_a_corrupted_record(
        tmp_path, monkeypatch):
    from apps.sgemm import tuning
    monkeypatch.setenv("EXO_HL_TUNING_DB", str(tmp_path))
    # (the machine facts of the thread minimums are not what is tested:
    # measuring them into the empty database took 25 s)
    monkeypatch.setattr(tuning, "thread_minimums",
                        lambda isa, threads=None: (1 << 19, 1 << 20, "x"))
    db = TuningDB(str(tmp_path))
    path = db.store(tuning.key("avx2"), {"kc": 128}, 1.0)
    model = tuning.configured("avx2", "model")[0]
    with open(path, "w") as f:
        json.dump({"key": tuning.key("avx2"), "params": {"kc": 128},
                   "signature": machine_signature(), "value": None}, f)
    isa, note = tuning.configured("avx2")
    assert isa == model and "value None" in note
    with open(path, "w") as f:
        f.write("[")
    isa, note = tuning.configured("avx2")
    assert isa == model and "unreadable" in note


def test_fork_cost_remeasures_over_a_corrupted_record(tmp_path):
    from apps.common.fork_cost import stored
    db = TuningDB(str(tmp_path))
    path = db.store("probe.v1", {}, 3.0, units="us")
    assert stored("probe.v1", lambda: 7.0, "us", db) == 3.0
    with open(path) as f:
        rec = json.load(f)
    with open(path, "w") as f:
        json.dump(dict(rec, value=None), f)
    assert stored("probe.v1", lambda: 7.0, "us", db) == 7.0
    assert db.lookup("probe.v1").record["value"] == 7.0


@pytest.mark.parametrize("app", ["sgemm", "conv"])
def test_an_unknown_params_source_is_refused(app):
    if app == "sgemm":
        from apps.sgemm import tuning
        args = ("avx2",)
    else:
        from apps.conv import tuning
        args = ("avx2", (1, 7, 7, 16, 16))
    for bad in ("Model", "fixd", "", "record"):
        with pytest.raises(ValueError, match="auto, model, fixed"):
            tuning.configured(*args, bad)
    assert tuning.configured(*args, "fixed")


def test_a_record_is_used_only_for_its_key(tmp_path):
    """A file copied under another key's directory (same machine) is not
    that key's record."""
    db = TuningDB(str(tmp_path))
    src = db.store("sgemm.avx2.v1", {"kc": 96}, 1.0)
    dst = db.path("sgemm.avx2.v2")
    os.makedirs(os.path.dirname(dst))
    with open(src) as f, open(dst, "w") as g:
        g.write(f.read())
    found = db.lookup("sgemm.avx2.v2")
    assert found.record is None and "another key" in found.note
    assert np.isfinite(db.lookup("sgemm.avx2.v1").record["value"])


def test_store_refuses_what_lookup_would_not_use(tmp_path):
    """``store`` writes only records ``lookup`` uses: a finite number
    (numpy's too, stored as a float), no ``extra`` field replacing the
    record's own; a failed write leaves no temporary file."""
    db = TuningDB(str(tmp_path))
    for bad in (float("nan"), float("inf"), None, "fast", True,
                np.bool_(True), np.float32("-inf")):
        with pytest.raises(ValueError, match="finite"):
            db.store("k.v1", {"kc": 1}, bad)
    for field in ("signature", "key", "params", "value"):
        with pytest.raises(ValueError, match="replace"):
            db.store("k.v1", {"kc": 1}, 1.0, extra={field: {}})
    with pytest.raises(TypeError):
        db.store("k.v1", {"kc": object()}, 1.0)
    assert os.listdir(os.path.join(str(tmp_path), "k.v1")) == []
    db.store("k.v1", {"kc": 1}, np.float32(2.5), extra={"seed": 3})
    rec = db.lookup("k.v1").record
    assert rec["value"] == 2.5 and rec["seed"] == 3


@pytest.mark.parametrize("app", ["sgemm", "conv"])
def test_a_record_naming_an_unknown_parameter_is_not_used(
        app, tmp_path, monkeypatch):
    """A record with a parameter the schedule does not read (renamed
    without a new schedule version: ``variant`` would run its default in
    its place) is not used; ``PARAMS`` is every name ``variant`` and
    ``build`` read, and holds the search space and the model."""
    import importlib
    import inspect
    import re
    tuning = importlib.import_module(f"apps.{app}.tuning")
    src = "".join(inspect.getsource(getattr(tuning, f))
                  for f in ("variant", "build", "template")
                  if hasattr(tuning, f))
    read = set(re.findall(r'params(?:\.get\(|\[)\s*"(\w+)"', src))
    assert read and read <= tuning.PARAMS, read - tuning.PARAMS
    monkeypatch.setenv("EXO_HL_TUNING_DB", str(tmp_path))
    if app == "sgemm":                   # (as above)
        monkeypatch.setattr(tuning, "thread_minimums",
                            lambda isa, threads=None: (1 << 19, 1 << 20,
                                                       "x"))
    sizes = (1, 7, 7, 16, 16)
    args = ("avx2",) if app == "sgemm" else ("avx2", sizes)
    model = (tuning.model_params("avx2", (1 << 19, 1 << 20, "x"))
             if app == "sgemm" else tuning.model_params("avx2", sizes))
    assert set(tuning.space("avx2")) | set(model) <= tuning.PARAMS
    key = tuning.key(*args)
    TuningDB(str(tmp_path)).store(key, dict(model, kc_blocks=64), 1.0)
    out = tuning.configured(*args)
    note = out[-1]
    assert "does not know: kc_blocks" in note and "model" in note, note
    TuningDB(str(tmp_path)).store(key, dict(model), 1.0)
    assert "tuned record" in tuning.configured(*args)[-1]
