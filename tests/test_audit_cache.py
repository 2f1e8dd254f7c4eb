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


@pytest.mark.no_c_audit("makes C with an unused variable on purpose")
def test_clean_verdicts_are_kept_across_sessions(audit, fresh_stats,
                                                 monkeypatch, tmp_path):
    """The keys live under the build cache: a later session (an empty
    memory, the same directory) compiles nothing already compiled clean;
    keys not used for ``AUDIT_CACHE_DAYS`` are pruned when a session
    starts; rejected C is never kept (the test above, which runs with the
    suite's directory, sees it rejected every time)."""
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    d = audit._persistent_audit_dir()
    assert d.startswith(str(tmp_path))
    stale, used = os.path.join(d, "0" * 64), os.path.join(d, "1" * 64)
    for f in (stale, used):
        open(f, "w").close()
    os.utime(stale, (0, 0))
    assert audit._persistent_audit_dir() == d
    assert not os.path.exists(stale) and os.path.exists(used)
    monkeypatch.setattr(audit._AUDIT, "cache_dir", d)
    monkeypatch.setattr(audit._AUDIT, "compiled_ok", set())
    p = _copies(_clean, 1)[0]
    assert audit._audit_procs([(p, "here", None)]) == []
    monkeypatch.setattr(audit._AUDIT, "compiled_ok", set())   # a new session
    assert audit._audit_procs([(p.rename(p.name()), "there", None)]) == []
    for cc in audit._c_compilers():
        assert fresh_stats[f"C checked ({cc})"] == 2
        assert fresh_stats[f"C compiled ({cc})"] == 1
    bad = _copies(_warns, 1)[0]
    for _ in range(2):
        assert any(m.startswith("gcc ") for m in audit._audit_procs(
            [(bad, "here", None)]))
    assert fresh_stats["C compiled (gcc)"] == 3


def test_key_holds_the_compiler_library_and_cpu(audit, monkeypatch):
    """A compiler upgrade (another binary or version), another C library
    or another CPU (-march=native) gives other keys."""
    ident = audit._cc_identity("gcc")
    assert "\0" in ident and ("flags" in ident or "model name" in ident)
    k = audit._compile_key("gcc", ["-O1"], "int x;", "audit00001")
    monkeypatch.setitem(audit._CC_IDENTITY, "gcc", ident + "x")
    assert audit._compile_key("gcc", ["-O1"], "int x;", "audit00001") != k
