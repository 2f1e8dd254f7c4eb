"""Rewrites that move the evaluation point of control expressions.

Each control expression is evaluated once, where it stands
(docs/semantics.md): an allocation's sizes (and so its strides) at the
allocation, a loop's bounds on entry, a condition before its branch. A
rewrite that evaluates one elsewhere must know that nothing in between
writes what it reads. Two ways are checked here:

* rewrites that move whole statements prove it with the effect analysis,
  in which an allocation reads what its sizes read (``reorder_stmts``,
  ``fission_after``/``fission``, ``configwrite_at``/``write_config``);
* rewrites that move expressions declare them (``rewrites._check.MOVES``,
  ``check_moved``): ``lift_alloc``/``autolift_alloc``, ``sink_alloc``...

and ``stage_mem`` may not change a stride the block reads. Every case
below was accepted, with another result, before the fix.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size, stride
from exo_hl.rewrites import _check

ROOT = pathlib.Path(__file__).resolve().parents[2]


@config
class MovCfg:
    k: size
    m: size


def _run(p):
    y = np.zeros(2, np.float32)
    p.interpret(y)
    return y


# ----------------------------------------------------------------------
# allocation sizes reading config, moved across a write of it
@proc
def sink_into_writer(y: f32[2]):
    MovCfg.k = 4
    t: f32[2, MovCfg.k]
    for i in seq(0, 2):
        if stride(t, 0) == 4:
            y[i] = 1.0
        MovCfg.k = 8


def test_sink_alloc_refuses_sizes_the_loop_writes():
    # sunk, the second iteration would allocate t: f32[2, 8]
    with pytest.raises(SchedulingError, match=r"sizes of 't'.*MovCfg\.k"):
        sink_into_writer.sink_alloc("t : _")


@proc
def sink_into_other_writer(y: f32[2]):
    MovCfg.k = 4
    t: f32[2, MovCfg.k]
    for i in seq(0, 2):
        if stride(t, 0) == 4:
            y[i] = 1.0
        MovCfg.m = 8


def test_sink_alloc_accepts_sizes_the_loop_does_not_write(equiv):
    q = sink_into_other_writer.sink_alloc("t : _")
    assert "    for i in seq(0, 2):\n        t: f32[2, MovCfg.k]" in str(q)
    assert _run(q).tolist() == [1.0, 1.0]
    equiv(sink_into_other_writer, q, [{}])


@proc
def alloc_then_write(y: f32[2]):
    MovCfg.k = 4
    t: f32[2, MovCfg.k]
    MovCfg.k = 8
    if stride(t, 0) == 4:
        y[0] = 1.0


def test_reorder_stmts_refuses_an_alloc_and_a_write_of_its_size():
    assert _run(alloc_then_write).tolist() == [1.0, 0.0]
    with pytest.raises(SchedulingError, match="do not commute"):
        alloc_then_write.reorder_stmts("t : _")


@proc
def alloc_in_writer(y: f32[2]):
    MovCfg.k = 4
    for i in seq(0, 2):
        t: f32[2, MovCfg.k]
        if stride(t, 0) == 4:
            y[i] = 1.0
        MovCfg.k = 8


def test_lift_alloc_refuses_sizes_the_loop_writes():
    assert _run(alloc_in_writer).tolist() == [1.0, 0.0]
    with pytest.raises(SchedulingError, match=r"lift_alloc.*MovCfg\.k"):
        alloc_in_writer.lift_alloc("t : _")
    with pytest.raises(SchedulingError, match=r"lift_alloc.*MovCfg\.k"):
        alloc_in_writer.autolift_alloc("t : _")


@proc
def alloc_after_write_in_if(n: size, y: f32[2]):
    MovCfg.k = 4
    if n > 1:
        MovCfg.k = 8
        t: f32[2, MovCfg.k]
        if stride(t, 0) == 4:
            y[0] = 1.0


def test_lift_alloc_refuses_sizes_written_before_it_in_an_if():
    with pytest.raises(SchedulingError, match=r"statements before it"):
        alloc_after_write_in_if.lift_alloc("t : _")


@proc
def alloc_in_other_writer(y: f32[2]):
    MovCfg.k = 4
    for i in seq(0, 2):
        t: f32[2, MovCfg.k]
        if stride(t, 0) == 4:
            y[i] = 1.0
        MovCfg.m = 8


def test_lift_alloc_accepts_sizes_the_loop_does_not_write(equiv):
    q = alloc_in_other_writer.lift_alloc("t : _")
    assert "    t: f32[2, MovCfg.k] @ DRAM\n    for i in seq(0, 2):" in str(q)
    equiv(alloc_in_other_writer, q, [{}])


def test_fission_refuses_moving_a_write_out_of_the_allocating_iteration():
    # split after the if, every t would be allocated with k = 4
    with pytest.raises(SchedulingError, match="cannot be split"):
        alloc_in_writer.fission_after("if _: _")
    with pytest.raises(SchedulingError, match="cannot be split"):
        alloc_in_writer.fission(alloc_in_writer.find("if _: _").after())


@proc
def alloc_reads(y: f32[2]):
    MovCfg.k = 4
    t: f32[2, MovCfg.k]
    if stride(t, 0) == 4:
        y[0] = 1.0


def test_configwrite_refuses_a_write_before_an_alloc_reading_it():
    with pytest.raises(SchedulingError, match=r"MovCfg\.k is read later"):
        alloc_reads.configwrite_at("t : _", MovCfg, "k", "8", before=True)
    with pytest.raises(SchedulingError, match=r"MovCfg\.k is read later"):
        alloc_reads.write_config(alloc_reads.find("t : _").before(), MovCfg,
                                 "k", "8")
    # after the allocation nothing reads it: equivalent modulo MovCfg.k
    q = alloc_reads.configwrite_at("t : _", MovCfg, "k", "8")
    assert "t: f32[2, MovCfg.k] @ DRAM\n    MovCfg.k = 8" in str(q)
    assert _run(q).tolist() == [1.0, 0.0]


# ----------------------------------------------------------------------
# stage_mem and the strides the block reads
@proc
def branch_on_a(A: f32[4, 4], o: f32[2]):
    for i in seq(0, 2):
        if stride(A, 0) == 4:
            o[i] = A[i, 0] + A[0, i]


def test_stage_mem_refuses_a_changed_stride_read():
    assert "stride(A, 0)" in str(branch_on_a)
    with pytest.raises(SchedulingError,
                       match=r"'stride\(A, 0\)' reads the stride of "
                       r"dimension 0 of 'A', which differs"):
        branch_on_a.stage_mem(branch_on_a.find_loop("i"), "A[0:2, 0:2]",
                              "As")


@proc
def branch_on_v(v: [f32][2], o: [f32][1]):
    if stride(v, 0) == 4:
        o[0] = v[0]


@proc
def calls_branch_on_v(A: f32[4, 4], o: f32[2]):
    for i in seq(0, 2):
        branch_on_v(A[0:2, i], o[i:i + 1])


def test_stage_mem_refuses_a_callee_reading_changed_strides():
    with pytest.raises(SchedulingError,
                       match=r"'branch_on_v' reads strides of its argument"):
        calls_branch_on_v.stage_mem(calls_branch_on_v.find_loop("i"),
                                    "A[0:2, 0:2]", "As")


@proc
def window_name_stride(A: f32[4, 4], o: f32[2]):
    for i in seq(0, 2):
        w = A[0:2, 0:2]
        if stride(w, 0) == 4:
            o[i] = w[i, 0]


def test_stage_mem_refuses_a_stride_read_through_a_window_name():
    with pytest.raises(SchedulingError, match=r"stride\(w, 0\)"):
        window_name_stride.stage_mem(window_name_stride.find_loop("i"),
                                     "A[0:2, 0:2]", "As")


@proc
def branch_on_rows(A: f32[4, 4], o: f32[2]):
    for i in seq(0, 2):
        if stride(A, 0) == 4:
            o[i] = A[i, 0] + A[0, i]
        branch_on_v(A[0:2, i], o[i:i + 1])


def test_stage_mem_keeps_strides_it_does_not_change(equiv):
    # whole rows: the staged buffer's row stride is A's (4)
    q = branch_on_rows.stage_mem(branch_on_rows.find_loop("i"),
                                 "A[0:2, 0:4]", "As")
    text = str(q)
    assert "if stride(As, 0) == 4:" in text
    assert "branch_on_v(As[0:2, i], o[i:i + 1])" in text
    equiv(branch_on_rows, q, [{}])


# ----------------------------------------------------------------------
# the declared lists
def test_every_declared_kind_is_known_and_documented():
    sem = (ROOT / "docs" / "semantics.md").read_text()
    para = sem[sem.index("### Each control expression is evaluated once"):]
    para = para[:para.index("\n## ")]
    for op, kinds in _check.MOVES.items():
        assert f"`{op}`" in para, f"docs/semantics.md omits {op}"
        assert kinds and set(kinds) <= set(_check.KINDS), op
    for kind in _check.KINDS:
        assert kind in para, f"docs/semantics.md omits the kind {kind!r}"


def test_every_rewrite_checking_moved_expressions_is_declared():
    rw = ROOT / "exo_hl" / "rewrites"
    callers = set()
    for f in rw.glob("*.py"):
        text = f.read_text()
        if "check_unchanged_by(" in text and f.name != "_check.py":
            pytest.fail(f"{f.name} checks moved expressions around "
                        f"check_moved (declare them in MOVES)")
        if "C.check_moved(" in text:
            callers.add(f.stem)
    assert callers == set(_check.MOVES), callers ^ set(_check.MOVES)
    # each declared op names its check with its own op
    for op in _check.MOVES:
        text = (rw / f"{op}.py").read_text()
        assert re.search(r"check_moved\(proc, (OP|\"%s\")" % op, text), op
