"""Where ``TuningDB()`` keeps records: ``$EXO_HL_TUNING_DB`` when set,
else ``<cache>/tuning``; the suite runs with the variable set, so no test
reads or writes the user's records."""
from __future__ import annotations

import os

from exo_hl.tune import TuningDB


def test_the_variable_names_the_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("EXO_HL_TUNING_DB", str(tmp_path / "db"))
    db = TuningDB()
    assert db.directory == str(tmp_path / "db")
    path = db.store("demo.v1", {"kc": 64}, 1.0)
    assert path.startswith(str(tmp_path / "db") + os.sep)
    assert TuningDB().lookup("demo.v1").record["params"] == {"kc": 64}


def test_without_it_the_cache_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("EXO_HL_TUNING_DB")
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    assert TuningDB().directory == str(tmp_path / "tuning")
    monkeypatch.setenv("EXO_HL_TUNING_DB", "")      # empty: unset
    assert TuningDB().directory == str(tmp_path / "tuning")


def test_the_suite_keeps_its_records_apart():
    """conftest points the variable at a directory of this run's own,
    outside the user's cache."""
    from exo_hl.codegen_c.runner import cache_dir
    d = os.environ["EXO_HL_TUNING_DB"]
    assert os.path.isdir(d)
    assert not d.startswith(os.path.join(cache_dir(), ""))
