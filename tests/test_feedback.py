"""Errors point at the user's code; EXO_HL_LOG=debug times each rewrite
and each of its checks.

A scheduling error's printed traceback is the user's line, one facade line
and the message (statement, its source line, the failed check), plus a note
naming the call; exo_hl's internal frames are hidden unless EXO_HL_DEBUG.
"""
from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import pytest

from exo_hl import (BoundsError, ExoTypeError, SchedulingError, f32, proc,
                    seq, size)

HERE = os.path.abspath(__file__)
REPO = Path(__file__).resolve().parents[1]
PKG = str(REPO / "exo_hl")


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
         C: f32[M, N]):
    assert M % 4 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def _line_of(snippet: str) -> int:
    with open(HERE) as f:
        for n, line in enumerate(f, 1):
            if snippet in line and "_line_of" not in line:
                return n
    raise AssertionError(snippet)


def _exo_frames(tb_text: str):
    return [l for l in tb_text.splitlines()
            if l.strip().startswith("File ") and PKG in l]


def test_scheduling_error_traceback_is_short_and_points_here():
    with pytest.raises(SchedulingError) as ei:
        gemm.split('j', 4, 'jo', 'ji', tail='perfect')  # N % 4 unknown
    e = ei.value
    text = "".join(traceback.format_exception(e))
    lines = text.splitlines()
    assert len(lines) <= 15, text
    call = _line_of("gemm.split('j', 4, 'jo', 'ji', tail='perfect')")
    assert f'File "{HERE}", line {call}' in text
    # at most the one facade line of exo_hl, and none of its internals
    frames = _exo_frames(text)
    assert len(frames) <= 1, text
    for internal in ("rewrites", "cursors.py", "effects", "core_ir"):
        assert internal not in text.split("SchedulingError:")[0], text
    # the message is the rewrite's own: statement line, check, statement
    msg = str(e)
    head = msg.splitlines()[0]
    assert head.startswith(f"{HERE}:{_line_of('for j in seq(0, N):')}: ")
    assert "in procedure 'gemm'" in head and "divisible" in head
    assert msg.splitlines()[1].strip() == "for j in seq(0, N):"
    # ... and the user's call is named, with its file:line
    notes = getattr(e, "__notes__", [])
    assert any(f"{HERE}:{call}" in n and "gemm.split('j', 4" in n
               for n in notes), notes
    assert f"{HERE}:{call}" in lines[-1]


def test_pattern_error_from_find_points_here():
    with pytest.raises(SchedulingError) as ei:
        gemm.find_loop('nope')
    text = "".join(traceback.format_exception(ei.value))
    assert len(text.splitlines()) <= 15, text
    assert f'File "{HERE}", line {_line_of("gemm.find_loop(" + chr(39))}' \
        in text
    assert len(_exo_frames(text)) <= 1
    assert "'nope'" in str(ei.value)


def test_exception_object_and_message_unchanged():
    """What the rewrite raised is what the user catches, message intact."""
    import exo_hl.rewrites.reorder as R
    seen = []
    orig = R.reorder

    def spy(*a, **k):
        try:
            return orig(*a, **k)
        except SchedulingError as e:
            seen.append((e, str(e), e.args))
            raise
    R.reorder = spy
    try:
        with pytest.raises(SchedulingError) as ei:
            gemm.reorder('i', 'k')
    finally:
        R.reorder = orig
    (e, msg, args), = seen
    assert ei.value is e
    assert str(ei.value) == msg and ei.value.args == args
    assert type(ei.value) is SchedulingError


def test_nested_errors_note_only_the_outer_call():
    p = gemm.split('i', 4, 'io', 'ii', tail='perfect')
    with pytest.raises(SchedulingError) as ei:
        p.stage_mem(p.find_loop('k'), 'C[4*io:4*io+4, 0:1]', 'C_reg')
    notes = getattr(ei.value, "__notes__", [])
    assert len(notes) == 1 and "p.stage_mem(" in notes[0], notes


def test_bounds_error_at_decoration_points_at_the_decorator():
    with pytest.raises(BoundsError) as ei:
        @proc
        def shifted(n: size, x: f32[n]):
            for i in seq(0, n):
                x[i + 1] = 0.0
    text = "".join(traceback.format_exception(ei.value))
    assert len(text.splitlines()) <= 15, text
    # the frame shown is this test's (the decorated definition)
    assert f'File "{HERE}", line ' in text.split("BoundsError:")[0]
    assert len(_exo_frames(text)) <= 1, text
    assert f"{HERE}:{_line_of('x[i + 1] = 0.0')}:" in str(ei.value)


def test_type_error_at_decoration_is_short():
    with pytest.raises(ExoTypeError) as ei:
        @proc
        def mixed(n: size, x: f32[n]):
            for i in seq(0, n):
                x[i] = n
    text = "".join(traceback.format_exception(ei.value))
    assert len(text.splitlines()) <= 15, text
    assert len(_exo_frames(text)) <= 1, text
    assert f"{HERE}:{_line_of('x[i] = n')}" in str(ei.value)


def _run(code: str, env_extra, tmp_path):
    f = tmp_path / "user.py"
    f.write_text(textwrap.dedent(code))
    env = {k: v for k, v in os.environ.items()
           if k not in ("EXO_HL_DEBUG", "EXO_HL_LOG")}
    env.update(PYTHONPATH=str(REPO), **env_extra)
    return subprocess.run([sys.executable, str(f)], cwd=tmp_path, env=env,
                          capture_output=True, text=True)


USER_SCRIPT = '''\
    from __future__ import annotations
    from exo_hl import f32, proc, seq, size


    @proc
    def scale(n: size, x: f32[n]):
        for i in seq(0, n):
            x[i] = x[i] * 2.0


    p = scale.split('i', 4, 'io', 'ii')
    p = p.unroll('io')
    '''


def test_uncaught_error_in_a_script(tmp_path):
    """What a user running a script sees (Python's own hook prints it)."""
    r = _run(USER_SCRIPT, {}, tmp_path)
    assert r.returncode == 1
    err = r.stderr
    assert err.startswith("Traceback (most recent call last):")
    assert len(err.splitlines()) <= 15, err
    assert 'user.py", line 12, in <module>' in err
    assert "p = p.unroll('io')" in err
    # not even the facade's re-raise (issue 34 item 10): the excepthook
    # exo_hl chains drops it before Python prints the traceback
    assert _exo_frames(err) == [], err
    assert "raise for_user" not in err and "feedback.py" not in err, err
    assert "SchedulingError: " in err and "user.py:7" in err
    assert "raised by the call at" in err and "user.py:12" in err


STDLIB_SCRIPT = '''\
    from __future__ import annotations
    from exo_hl import f32, proc, seq, size
    from exo_hl.hw_libs import avx512
    from exo_hl.stdlib import vectorize


    @proc
    def rows(n: size, x: f32[n, n], y: f32[n]):
        for i in seq(0, n):
            for j in seq(0, n):
                y[i] += x[i, j]


    def my_schedule(p):
        return vectorize(p, 'i', 16, avx512.AVX512, avx512.INSTRS)


    my_schedule(rows)
    '''

# refused with ``raise ... from`` the step it tried: the cause's frames
# (all exo_hl's) are hidden too, its message kept
MASK_SCRIPT = '''\
    from __future__ import annotations
    from exo_hl import f32, proc, seq, size
    from exo_hl.hw_libs import avx2
    from exo_hl.stdlib import vectorize


    @proc
    def half(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            y[i] = x[i] * 0.5


    vectorize(half, 'i', 8, avx2.AVX2, avx2.INSTRS, tail='mask')
    '''

DECORATOR_SCRIPT = '''\
    from __future__ import annotations
    from exo_hl import f32, proc, seq, size


    @proc
    def shifted(n: size, x: f32[n]):
        for i in seq(0, n):
            x[i + 1] = 0.0
    '''


@pytest.mark.parametrize("script, user_lines, error", [
    (STDLIB_SCRIPT, ["line 18, in <module>", "my_schedule(rows)",
                     "line 15, in my_schedule",
                     "return vectorize(p, 'i', 16,"], "SchedulingError"),
    (DECORATOR_SCRIPT, ["line 5, in <module>", "@proc"], "BoundsError"),
    (MASK_SCRIPT, ["line 13, in <module>", "vectorize(half, 'i', 8,"],
     "SchedulingError"),
])
def test_script_traceback_shows_only_user_frames(tmp_path, script,
                                                 user_lines, error):
    """Issue 34 item 10: no `raise for_user(e)` line of feedback.py or
    decorators.py, and none of the stdlib's frames: the user's lines (their
    own functions included) and the message."""
    r = _run(script, {}, tmp_path)
    assert r.returncode == 1
    err = r.stderr
    assert _exo_frames(err) == [], err
    for word in ("raise for_user", "feedback.py", "decorators.py",
                 "stdlib", "rewrites"):
        assert word not in err.split(f"{error}: ")[0], (word, err)
    for line in user_lines:
        assert line in err, (line, err)
    assert f"exo_hl.errors.{error}: " in err
    for word in ("stdlib", "rewrites"):
        assert not [ln for ln in err.splitlines()
                    if ln.strip().startswith("File ") and word in ln], err
    frames = [l for l in err.splitlines() if l.strip().startswith("File ")]
    assert len(frames) == len(user_lines) // 2, err


def test_stdlib_error_caught_in_process_has_one_facade_frame():
    """Caught (no excepthook runs), a stdlib refusal carries the user's
    frames and one frame of exo_hl (the re-raise, which IPython and pytest
    hide by __tracebackhide__), not vectorize's internal frames."""
    from exo_hl.hw_libs import avx512
    from exo_hl.stdlib import vectorize
    with pytest.raises(SchedulingError) as ei:
        vectorize(gemm, 'i', 16, avx512.AVX512, avx512.INSTRS)
    text = "".join(traceback.format_exception(ei.value))
    assert len(_exo_frames(text)) == 1, text
    assert "exo_hl/stdlib" not in text, text
    call = _line_of("vectorize(gemm, 'i', 16, avx512.AVX512")
    assert f"raised by the call at {HERE}:{call}" in text, text


def test_debug_env_keeps_internal_frames(tmp_path):
    r = _run(USER_SCRIPT, {"EXO_HL_DEBUG": "1"}, tmp_path)
    assert r.returncode == 1
    assert "rewrites" in r.stderr and len(_exo_frames(r.stderr)) > 2


def _call_and_check_lines(lines):
    checks = [l for l in lines if l.lstrip().startswith("check ")]
    return [l for l in lines if l not in checks], checks


def test_log_env_times_each_rewrite_and_its_checks(tmp_path):
    script = USER_SCRIPT.replace("p = p.unroll('io')\n", "")
    r = _run(script, {"EXO_HL_LOG": "debug"}, tmp_path)
    assert r.returncode == 0, r.stderr
    lines = [l[len("exo_hl: "):] for l in r.stderr.splitlines()
             if l.startswith("exo_hl: ")]
    calls, checks = _call_and_check_lines(lines)
    assert len(calls) == 1, r.stderr
    assert calls[0].startswith("p.split('i', 4, 'io', 'ii')")
    assert calls[0].endswith(" ms in the SMT solver)")
    total, smt = re.fullmatch(r".*\)  ([\d.]+) ms \(([\d.]+) ms in the SMT "
                              r"solver\)", calls[0]).groups()
    assert float(smt) <= float(total)
    # the checks the split ran (indented under it) and the decorator's
    # bounds check of scale (not indented), each with its SMT time
    assert any(c.startswith("  check ") for c in checks), r.stderr
    assert any(c.startswith("check check_proc: ok") for c in checks)
    for c in checks:
        m = re.search(r": (ok|failed.*) \((\d+) SMT queries, (\d+) solved, "
                      r"([\d.]+) ms in the solver, ([\d.]+) ms in all\)$", c)
        assert m, c
        assert int(m.group(3)) <= int(m.group(2))
        assert float(m.group(4)) <= float(m.group(5)) + 0.1
    # nothing without the variable
    r = _run(script, {}, tmp_path)
    assert r.returncode == 0 and "exo_hl:" not in r.stderr


def test_logger_records_rewrites_and_failures(caplog):
    with caplog.at_level(logging.DEBUG, logger="exo_hl"):
        p = gemm.split('i', 4, 'io', 'ii', tail='perfect')
        p = p.reorder('ii', 'j')
        with pytest.raises(SchedulingError):
            p.unroll('io')
    msgs = [r.getMessage() for r in caplog.records if r.name == "exo_hl"]
    msgs, checks = _call_and_check_lines(msgs)
    assert msgs[0].startswith("p.split('i', 4, 'io', 'ii', tail='perfect')")
    assert msgs[1].startswith("p.reorder('ii', 'j')")
    assert msgs[0].endswith(" ms in the SMT solver)")
    assert msgs[1].endswith(" ms in the SMT solver)")
    assert msgs[-1].startswith("p.unroll('io') failed after ")
    assert any(c.startswith("  check can_reorder_loops: ok") for c in checks)


def test_configure_logging_levels():
    from exo_hl.feedback import configure_logging, log
    before = (log.level, list(log.handlers))
    try:
        configure_logging({"EXO_HL_LOG": "info"})
        configure_logging({"EXO_HL_LOG": "info"})
        assert log.level == logging.INFO
        assert sum(getattr(h, "_exo_hl_env", False)
                   for h in log.handlers) == 1
        configure_logging({"EXO_HL_LOG": "nonsense"})
        assert log.level == logging.INFO
    finally:
        log.setLevel(before[0])
        log.handlers[:] = before[1]
