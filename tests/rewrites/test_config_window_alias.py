"""A window statement whose offsets read a config field fixes them when it
runs; the effect analysis read the field's value at each *use* of the
window instead, so after ``Cf.k = 1`` a write to ``w[0]`` (``x[0]``, the
window made with ``Cf.k = 0``) looked like a write to ``x[1]``: ``bind_expr``
(cse) carried ``x[0] * 2.0`` across it and the second use read the stale
value (interpret and C). Now the analysis evaluates a window's offsets
where its statement stands (``effects.context.at_point``; audit 14a found
the same class through reorder_stmts and remove_loop,
``test_window_config_offsets.py``). The repros, and a generator of random
statements around config-offset windows under bind_expr (cse),
inline_assign and merge_writes."""
from __future__ import annotations

import random

import numpy as np

from exo_hl import SchedulingError, config, f32, index, proc
from exo_hl.cursors import BlockCursor, ExprCursor, StmtCursor
from exo_hl.core_ir.nodes import IR
from source_modules import load_source


@config
class Cw:
    k: index


@proc
def cse_across_window_write(x: f32[4], y: f32[4]):
    Cw.k = 0
    w = x[Cw.k:Cw.k + 2]
    y[0] = x[0] * 2.0
    Cw.k = 1
    w[0] = 5.0
    y[1] = x[0] * 2.0


@proc
def cse_of_window_read(x: f32[4], y: f32[4]):
    Cw.k = 0
    w = x[Cw.k:Cw.k + 2]
    Cw.k = 1
    y[0] = w[0] * 2.0
    x[0] = 5.0
    y[1] = w[0] * 2.0


def _outputs(p):
    x, y = np.arange(4, dtype=np.float32) + 1, np.zeros(4, np.float32)
    p.interpret(x, y)
    return np.concatenate([x, y])


def test_cse_stops_at_a_write_through_a_config_offset_window():
    for p, pat in ((cse_across_window_write, "x[_] * 2.0"),
                   (cse_of_window_read, "w[_] * 2.0")):
        q = p.bind_expr(p.find(pat), "t", cse=True)
        assert str(q).count(" * 2.0") == 2, str(q)   # the second kept
        np.testing.assert_array_equal(_outputs(p), _outputs(q))
        np.testing.assert_array_equal(_outputs(p)[5], 10.0)


def _text(r, name):
    """A read, a config write, a write through a window or the buffer, the
    same read again (or a use of what the first one stored), with random
    statements around them."""
    j, j2, m, v = (r.randrange(2), r.randrange(2), r.randrange(4),
                   r.randint(1, 9))
    src = r.choice(["x", "w"])
    read = r.choice([f"y[{m}] = {src}[{j}] * 2.0", f"t = {src}[{j}]"])
    again = read if read[0] == "y" else f"y[{(m + 1) % 4}] = t"
    if read[0] == "y" and r.random() < 0.5:
        again = f"y[{(m + 1) % 4}] = {src}[{j}] * 2.0"
    write = r.choice([f"w[{j2}] = {v}.0", f"x[{j2}] = {v}.0",
                      f"w[{j2}] += {v}.0", f"v = x[Cw.k:Cw.k + 2]",
                      f"x[{j2} + Cw.k] = {v}.0"])
    if write.startswith("v = "):
        write += f"\nv[{j2}] = {v}.0"
    lines = [f"Cw.k = {r.randrange(2)}", "w = x[Cw.k:Cw.k + 2]", read,
             f"Cw.k = {r.randrange(2)}", *write.split("\n"), again]
    for _ in range(r.randint(0, 2)):
        k = r.randrange(2, len(lines) + 1)
        lines.insert(k, r.choice([f"Cw.k = {r.randrange(2)}",
                                  f"y[{r.randrange(4)}] += w[{j}]",
                                  f"w[{j}] = {v + 1}.0"]))
    body = "\n".join("    " + ln for ln in ["t: f32"] + lines)
    return (f"from __future__ import annotations\nfrom exo_hl import *\n"
            f"from test_config_window_alias import Cw\n\n"
            f"@proc\ndef {name}(x: f32[4], y: f32[4]):\n{body}\n")


def test_config_offset_window_generator(tmp_path):
    accepted = 0
    for seed in range(150):
        r = random.Random(seed)
        text = _text(r, f"w{seed}")
        try:
            p = getattr(load_source(tmp_path, f"cw{seed}", text), f"w{seed}")
        except Exception:
            continue                       # out of bounds: skip
        base = _outputs(p)
        body = p.ir().body
        tries = []
        for i, s in enumerate(body):
            if isinstance(s, (IR.Assign, IR.Reduce)) and isinstance(
                    s.rhs, IR.BinOp):
                tries.append(lambda i=i: p.bind_expr(ExprCursor(
                    p, (("body", i), ), (("rhs", None), )), "b", cse=True))
            if isinstance(s, IR.Assign):
                tries.append(lambda i=i: p.inline_assign(
                    StmtCursor(p, (("body", i), ))))
            if i + 1 < len(body):
                tries.append(lambda i=i: p.merge_writes(
                    BlockCursor(p, (), "body", i, i + 2)))
        for t in tries:
            try:
                q = t()
            except SchedulingError:
                continue
            accepted += 1
            np.testing.assert_array_equal(
                _outputs(q), base, err_msg=f"seed {seed}\n{text}\n{q}")
    assert accepted >= 60, accepted
