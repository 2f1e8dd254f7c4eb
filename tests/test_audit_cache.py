"""The suite's procedure audit compiles each distinct C file once per
compiler: copies are counted, not recompiled, and a copy of C that a
compiler rejects is reported as often as it occurs, every time."""
from __future__ import annotations

import os
import uuid
from collections import Counter

import pytest

from exo_hl import DRAM, DRAM_STATIC, f32, proc


@proc
def _clean(x: f32[4] @ DRAM):
    x[0] = 1.0


class _UNUSED_VAR(DRAM_STATIC):
    """A user memory whose C declares a variable it never uses: C that the
    audit's -Wall -Werror rejects (the backend's own C is warning-free)."""

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        return (super().alloc(new_name, prim_type, shape, srcinfo)
                + f" int {new_name}_unused;")


@proc
def _warns(x: f32[4] @ DRAM):
    t: f32[2] @ _UNUSED_VAR
    t[1] = 2.0
    x[0] = t[1]


@pytest.fixture
def audit(request):
    """The suite's own conftest module (the one pytest loaded: other
    directories' conftest.py files may hold the name ``conftest``)."""
    here = os.path.join(os.path.dirname(__file__), "conftest.py")
    for plugin in request.config.pluginmanager.get_plugins():
        f = getattr(plugin, "__file__", None)
        if f and os.path.samefile(f, here):
            return plugin
    pytest.fail("tests/conftest.py is not loaded")


@pytest.fixture
def fresh_stats(audit, monkeypatch):
    """The audit's counters for this test only (the suite's stay intact)."""
    stats = Counter()
    monkeypatch.setattr(audit._AUDIT, "stats", stats)
    return stats


def _copies(p, n):
    """``n`` procedures with one fresh name: the same C, distinct objects."""
    name = f"audit_{uuid.uuid4().hex[:12]}"
    return [p.rename(name) for _ in range(n)]


def test_identical_c_is_compiled_once_per_compiler(audit, fresh_stats):
    procs = _copies(_clean, 3)
    assert audit._audit_procs([(p, "here", None) for p in procs]) == []
    for cc in audit._c_compilers():
        assert fresh_stats[f"C checked ({cc})"] == 3
        assert fresh_stats[f"C compiled ({cc})"] == 1
    # a later batch with the same C compiles nothing
    again = _copies(_clean, 1)[0].rename(procs[0].name())
    assert audit._audit_procs([(again, "there", None)]) == []
    for cc in audit._c_compilers():
        assert fresh_stats[f"C checked ({cc})"] == 4
        assert fresh_stats[f"C compiled ({cc})"] == 1


@pytest.mark.no_c_audit("its memory declares an unused variable on purpose")
def test_rejected_c_is_reported_for_every_copy_every_time(audit, fresh_stats):
    procs = _copies(_warns, 2)
    ccs = [cc for cc in audit._c_compilers() if cc == "gcc"]
    if not ccs:
        pytest.fail("the audit needs gcc")
    for _ in range(2):
        problems = audit._audit_procs([(p, "here", None) for p in procs])
        gcc = [m for m in problems if m.startswith("gcc ")]
        assert len(gcc) == 2, problems
        assert all("unused" in m for m in gcc)
    assert fresh_stats["C compiled (gcc)"] == 2


def test_key_abstracts_only_the_file_name(audit):
    text = '#include "audit00001.h"\nAUDIT00001_H audit00001_Context x;'
    other = text.replace("audit00001", "audit00002").replace(
        "AUDIT00001", "AUDIT00002")
    k = audit._compile_key("gcc", ["-O1"], text, "audit00001")
    assert k == audit._compile_key("gcc", ["-O1"], other, "audit00002")
    assert k != audit._compile_key("gcc", ["-O2"], text, "audit00001")
    assert k != audit._compile_key("clang", ["-O1"], text, "audit00001")
    assert k != audit._compile_key("gcc", ["-O1"], text + " ", "audit00001")
