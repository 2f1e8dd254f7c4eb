"""Windows whose offsets read config fields (audit 14a).

A window statement ``w = x[Cfg.a:...]`` evaluates its offsets once, where it
stands. The effect analysis got both halves wrong:

- a block's effect dropped the window statement's own reads (the config
  fields its offsets read), so ``reorder_stmts`` moved it past a write of
  the field and ``remove_loop`` took a body that binds it, then writes the
  field, for idempotent;
- an access through the window was placed with the config values of the
  point of *use*: after ``Cfg.a = 0``, ``w[0]`` was taken for ``x[0]``,
  not ``x[k]``, so it "commuted" with a read of ``x[3]``.

Each shape below was accepted and computed something else (k = 3, or any
k with ``Cfg.a % 4`` != 1...). The generator puts random config writes,
accesses through config-offset windows and loops together and checks
that whatever ``reorder_stmts``, ``remove_loop`` and ``fission_after``
accept computes the same.
"""
from __future__ import annotations

import random
import time

import numpy as np
import pytest

from exo_hl import SchedulingError, config, f32, index, proc, seq
from exo_hl.core_ir.interpret import ConfigState
from exo_hl.core_ir.nodes import IR
from exo_hl.cursors import StmtCursor
from source_modules import load_source


@config
class Cw:
    a: index
    c: index


@proc
def bind_then_write(k: index, x: f32[8], y: f32[8]):
    Cw.a = k
    w = x[Cw.a % 4:Cw.a % 4 + 4]
    Cw.a = 2
    y[0] = w[0]


@proc
def loop_then_write(k: index, x: f32[8], y: f32[8]):
    Cw.a = k
    for i in seq(0, 2):
        w = x[Cw.a % 4:Cw.a % 4 + 4]
        y[i] = w[0]
    Cw.a = 2


@proc
def rebind_each_iteration(k: index, x: f32[8], y: f32[8]):
    Cw.a = k
    for i in seq(0, 2):
        w = x[Cw.a % 4:Cw.a % 4 + 4]
        Cw.a = 1
        y[0] = w[0]


@proc
def use_after_write(k: index, x: f32[8], y: f32[8]):
    assert k >= 0
    assert k <= 4
    Cw.a = k
    w = x[Cw.a:Cw.a + 4]
    Cw.a = 0
    w[0] = 1.0
    y[0] = x[3]


@proc
def idempotent_after_write(k: index, x: f32[8], y: f32[8]):
    assert k >= 0
    assert k <= 4
    Cw.a = k
    w = x[Cw.a:Cw.a + 4]
    Cw.a = 0
    for i in seq(0, 2):
        y[0] = x[3]
        w[0] = 2.0


def _run(p, k):
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    p.interpret(k, x, y, config_state=ConfigState())
    return x, y


@pytest.mark.parametrize("p, step", [
    (bind_then_write, lambda p: p.reorder_stmts("w = _")),
    (loop_then_write, lambda p: p.reorder_stmts("for i in _: _")),
    (rebind_each_iteration, lambda p: p.remove_loop("i")),
    (use_after_write, lambda p: p.reorder_stmts("w[_] = _")),
    (idempotent_after_write, lambda p: p.remove_loop("i")),
])
def test_config_offset_windows_refused(p, step):
    with pytest.raises(SchedulingError, match="commute|idempotent"):
        step(p)


def test_window_moves_past_a_field_it_does_not_read(equiv):
    @proc
    def other(k: index, x: f32[8], y: f32[8]):
        Cw.a = k
        w = x[Cw.a % 4:Cw.a % 4 + 4]
        Cw.c = 2
        y[0] = w[1]
    q = other.reorder_stmts("w = _")
    assert str(q).splitlines()[2].strip() == "Cw.c = 2"
    for k in (-3, 0, 1, 3, 6):
        for a, b in zip(_run(other, k), _run(q, k)):
            np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------
# generator
_HEADER = '''from __future__ import annotations
from exo_hl import config, f32, index, proc, seq, size


@config
class Cg:
    a: index
    c: index


@proc
def setc(v: index):
    Cg.c = v

'''


def _source(rng):
    win = [f"w{j} = x[Cg.{f} % 4:Cg.{f} % 4 + 4]"
           for j, f in enumerate(rng.choice(["a", "c"]) for _ in range(2))]
    pool = [f"Cg.{rng.choice('ac')} = {rng.choice(['k', '0', '1', 'k + 1'])}",
            f"setc({rng.choice(['k', '2'])})",
            f"w{rng.randint(0, 1)}[{rng.randint(0, 3)}] = {rng.randint(1, 5)}.0",
            f"y[{rng.randint(0, 7)}] = w{rng.randint(0, 1)}[{rng.randint(0, 3)}]",
            f"y[{rng.randint(0, 7)}] = x[{rng.randint(0, 7)}]",
            f"x[{rng.randint(0, 7)}] = {rng.randint(1, 5)}.0"]
    body = ["Cg.a = k", "Cg.c = k + 2"]
    lines = []
    for _ in range(rng.randint(3, 6)):
        c = rng.random()
        if c < 0.25:
            lines.append(rng.choice(win))
        else:
            lines.append(rng.choice(pool))
    # window statements must come before their uses
    seen, out = set(), []
    for ln in lines:
        for j in (0, 1):
            if f"w{j}[" in ln and f"w{j}" not in seen:
                out.append(win[j])
                seen.add(f"w{j}")
        if ln.startswith("w") and " = x[" in ln:
            if ln[:2] in seen:
                continue
            seen.add(ln[:2])
        out.append(ln)
    if rng.random() < 0.6:
        cut = rng.randint(0, len(out) - 1)
        n = rng.randint(1, len(out) - cut)
        inner = out[cut:cut + n]
        out = out[:cut] + ["for i in seq(0, 2):"] + \
            ["    " + s for s in inner] + out[cut + n:]
    return _HEADER + ("@proc\ndef f(k: index, x: f32[8], y: f32[8]):\n"
                      + "".join(f"    {s}\n" for s in body + out))


def _load(tmp_path, text, tag):
    return load_source(tmp_path, f"wcfg_{tag}", text)


def _stmt_cursors(p):
    out = []

    def rec(lst, prefix):
        for k, s in enumerate(lst):
            path = prefix + (("body", k), )
            out.append((StmtCursor(p, path), s))
            if isinstance(s, IR.For):
                rec(s.body, path)
    rec(p.ir().body, ())
    return out


def _state(p, cfg, k):
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    st = ConfigState()
    p.interpret(k, x, y, config_state=st)
    return x.tolist(), y.tolist(), st.get((cfg, "a"), 0), st.get((cfg, "c"), 0)


def test_config_offset_windows_fuzz(tmp_path):
    rng = random.Random(1416)
    t0 = time.process_time()
    seed = accepted = 0
    while seed < 600:       # ~4 s of CPU (1200: ~2,600 accepted, clean)
        seed += 1
        try:
            mod = _load(tmp_path, _source(rng), seed)
        except Exception:       # a window used out of its scope...
            continue
        p = mod.f
        stmts = _stmt_cursors(p)
        loops = [c for c, s in stmts if isinstance(s, IR.For)]
        stmts = [c for c, _ in stmts]
        steps = [("reorder_stmts", s) for s in stmts] + \
            [("fission_after", s) for s in stmts] + \
            [("remove_loop", c) for c in loops]
        for op, c in rng.sample(steps, min(8, len(steps))):
            try:
                q = getattr(p, op)(c)
            except SchedulingError:
                continue
            accepted += 1
            for k in (-3, 0, 1, 2, 3, 5):
                assert _state(p, mod.Cg, k) == _state(q, mod.Cg, k), \
                    f"{op} at {c}, k={k}:\n{p}\n{q}"
    print(f"config-offset windows fuzz: {seed} procedures, {accepted} "
          f"accepted steps, {time.process_time() - t0:.1f} s CPU")
    assert accepted >= 500
