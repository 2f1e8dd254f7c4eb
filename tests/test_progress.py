"""Long work shows a progress bar on a terminal, and nothing elsewhere.

``compile()`` of a large procedure and ``exo-hl compile`` on a large file
draw a bar on stderr when it is a terminal (a real pseudo-terminal for the
CLI, a stream that says it is one for ``compile()``); with stderr a pipe or
a file they print nothing.
"""
from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from exo_hl import f32, proc, seq
from exo_hl.progress import LARGE_WORK, Progress, statement_count, wanted

REPO = Path(__file__).resolve().parents[1]


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@proc
def scale(x: f32[512]):
    for i in seq(0, 512):
        x[i] = x[i] * 2.0


big = scale.unroll('i')


def test_the_large_procedure_is_large():
    assert statement_count(big.ir()) == 512 >= LARGE_WORK
    assert statement_count(scale.ir()) == 2


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv("EXO_HL_PROGRESS", raising=False)


def test_wanted_follows_the_terminal_and_the_environment(no_env,
                                                         monkeypatch):
    assert wanted(FakeTerminal())
    assert not wanted(io.StringIO())
    monkeypatch.setenv("EXO_HL_PROGRESS", "0")
    assert not wanted(FakeTerminal())
    monkeypatch.setenv("EXO_HL_PROGRESS", "1")
    assert wanted(io.StringIO())


def test_bar_only_for_large_work_on_a_terminal(no_env):
    tty, pipe = FakeTerminal(), io.StringIO()
    with Progress(1000, "work", stream=tty) as bar:
        assert bar.shown
        bar.advance(1000)
    drawn = tty.getvalue()
    assert "work:" in drawn and "/1000 [" in drawn, drawn
    # erased when done (leave=False): the last thing written is blanks
    assert drawn.rstrip("\r").rsplit("\r", 1)[-1].strip() == "", drawn
    with Progress(1000, "work", stream=pipe) as bar:
        assert not bar.shown
        bar.advance(1000)
    assert pipe.getvalue() == ""
    small = FakeTerminal()
    with Progress(10, "work", stream=small) as bar:
        assert not bar.shown
    assert small.getvalue() == ""


def test_compile_of_a_large_procedure_shows_a_bar(no_env, monkeypatch):
    tty = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", tty)
    fast = big.compile()
    out = tty.getvalue()
    assert "exo_hl: C for scale" in out or "exo_hl: cc scale" in out, out
    assert "%|" in out, out
    x = np.arange(512, dtype=np.float32)
    fast(x)
    assert np.array_equal(x, 2 * np.arange(512, dtype=np.float32))


def test_compile_is_quiet_without_a_terminal(no_env, monkeypatch):
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    big.compile()
    scale.compile()
    assert pipe.getvalue() == ""


def test_compile_of_a_small_procedure_draws_no_bar(no_env, monkeypatch):
    tty = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", tty)
    scale.compile()
    assert tty.getvalue() == ""


BIG_FILE = '''\
    from __future__ import annotations
    from exo_hl import f32, proc, seq


    @proc
    def _scale(x: f32[512]):
        for i in seq(0, 512):
            x[i] = x[i] * 2.0


    scaled = _scale.rename("scaled").unroll('i')
    '''


def _cli_env():
    env = {k: v for k, v in os.environ.items() if k != "EXO_HL_PROGRESS"}
    env["PYTHONPATH"] = str(REPO)
    env["COLUMNS"] = "100"
    return env


def _cli(tmp_path):
    src = tmp_path / "big_kernels.py"
    src.write_text(textwrap.dedent(BIG_FILE))
    return [sys.executable, "-m", "exo_hl", "compile", str(src),
            "-o", str(tmp_path / "out")]


def test_cli_on_a_large_file_shows_a_bar_on_a_terminal(tmp_path):
    master, slave = pty.openpty()
    try:
        proc_ = subprocess.Popen(_cli(tmp_path), stdout=subprocess.DEVNULL,
                                 stderr=slave, env=_cli_env(), cwd=tmp_path)
        os.close(slave)
        chunks = []
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                data = os.read(master, 4096)
            except OSError:          # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert proc_.wait(timeout=120) == 0
    finally:
        os.close(master)
    out = b"".join(chunks).decode(errors="replace")
    assert "exo_hl: C for" in out and "%|" in out, out
    assert (tmp_path / "out" / "big_kernels.c").is_file()


def test_cli_on_a_large_file_is_quiet_in_a_pipe(tmp_path):
    r = subprocess.run(_cli(tmp_path), capture_output=True, text=True,
                       env=_cli_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert (tmp_path / "out" / "big_kernels.c").is_file()
