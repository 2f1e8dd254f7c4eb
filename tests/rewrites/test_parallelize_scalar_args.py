"""Race freedom of ``par`` loops whose calls take data scalars.

A data scalar argument (``a: f32``) is passed by reference: a callee that
writes ``a`` writes the caller's scalar. The coarse footprint of a call
(``effects/footprint.py``) once skipped such parameters, so a loop whose
iterations all write one shared scalar through a call was proven race-free
and ``parallelize`` accepted it: the compiled C then shared ``t`` between
threads and computed wrong values (``y[0] = -3`` where the interpreter
gave 0). These tests pin the refusal, at ``parallelize`` and at parsing,
and that a scalar private to each iteration is still accepted.
"""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, par, proc, seq
from exo_hl.errors import ExoError


@proc
def triple(a: f32, b: [f32][1]):
    a = b[0] * 3.0


@proc
def read_scalar(a: f32, b: [f32][1]):
    b[0] = a


@proc
def shared_written(x: f32[64], y: f32[64]):
    t: f32
    for i in seq(0, 64):
        y[i] = t
        triple(t, x[i:i + 1])


@proc
def shared_written_only(x: f32[64]):
    t: f32
    for i in seq(0, 64):
        triple(t, x[i:i + 1])


@proc
def shared_read_while_written(x: f32[64], y: f32[64]):
    t: f32
    for i in seq(0, 64):
        read_scalar(t, y[i:i + 1])
        t = x[i]


@proc
def private_scalar(x: f32[64], y: f32[64]):
    for i in seq(0, 64):
        t: f32
        triple(t, x[i:i + 1])
        y[i] = t


@proc
def shared_only_read(x: f32[64], y: f32[64]):
    t: f32
    t = x[0]
    for i in seq(0, 64):
        read_scalar(t, y[i:i + 1])


@pytest.mark.parametrize("p", [shared_written, shared_written_only,
                               shared_read_while_written])
def test_shared_scalar_through_call_is_a_race(p):
    with pytest.raises(SchedulingError, match="not race-free"):
        p.parallelize("for i in _: _")


def test_hand_written_par_loop_refused():
    with pytest.raises(ExoError, match="race"):
        @proc
        def hand(x: f32[64], y: f32[64]):
            t: f32
            for i in par(0, 64):
                triple(t, x[i:i + 1])
                y[i] = t


@pytest.mark.parametrize("p", [private_scalar, shared_only_read])
def test_private_or_read_only_scalar_still_parallel(p, equiv):
    q = p.parallelize("for i in _: _")
    assert "par(0, 64)" in str(q)
    equiv(p, q, [{}])


# ----------------------------------------------------------------------
# the class as a generator: loop bodies mixing direct and through-call
# reads and writes of a scalar that is shared
# (allocated before the loop, or a parameter) or private (allocated in
# the body), at any call depth. The oracle: the
# iterations race exactly when the scalar is shared and something writes
# it; parallelize must refuse those and accept the others, and the
# interpreter's race recorder (par loop made by hand) find a race in those
# only.
@proc
def triple_deep(a: f32, b: [f32][1]):
    triple(a, b)


_STMTS = {
    "call_w": ("triple(t, x[i:i + 1])", True),
    "deep_w": ("triple_deep(t, x[i:i + 1])", True),
    "call_r": ("read_scalar(t, y[i:i + 1])", False),
    "direct_w": ("t = x[i]", True),
    "direct_r": ("y[i] = t", False),
}


def _draw(rng):
    kinds = [rng.choice(sorted(_STMTS)) for _ in range(rng.randint(1, 4))]
    where = rng.choice(["alloc", "param", "private"])
    shared = where != "private"
    body = [_STMTS[k][0] for k in kinds]
    sig = "def gen(x: f32[64], y: f32[64]):"
    head, pre = [], []
    if where == "alloc":
        head = ["    t: f32", "    t = x[0]"]
    elif where == "param":          # the caller's scalar, by reference
        sig = "def gen(x: f32[64], y: f32[64], t: f32):"
    else:
        pre = ["        t: f32"]
    src = "\n".join(
        [sig] + head
        + ["    for i in seq(0, 64):"] + pre
        + ["        " + s for s in body]) + "\n"
    race = shared and any(_STMTS[k][1] for k in kinds)
    return src, race


def test_generated_scalar_races():
    import random

    from exo_hl.frontend.decorators import parse_proc_source
    scope = dict(f32=f32, seq=seq, triple=triple, read_scalar=read_scalar,
                 triple_deep=triple_deep)
    rng = random.Random(1129)
    seen = {True: 0, False: 0}
    for _ in range(40):
        src, race = _draw(rng)
        p = parse_proc_source(src, scope)
        try:
            p.parallelize("for i in _: _")
            accepted = True
        except SchedulingError:
            accepted = False
        assert accepted is not race, (race, src)
        assert _recorder_sees_a_race(p) is race, (race, src)
        seen[race] += 1
    assert seen[True] > 5 and seen[False] > 5


def _recorder_sees_a_race(p):
    """Does the interpreter's race recorder (``ConfigState.race_check``)
    find a race when ``p``'s loop is made par by hand (below the checks)?
    The generator's rule, the analysis and the recorder must agree."""
    import numpy as np

    from exo_hl.core_ir.interpret import (ConfigState, RaceError,
                                          run_interpreter)
    from exo_hl.core_ir.nodes import IR
    ir = p.ir()
    body = tuple(s.update(mode=IR.Par) if isinstance(s, IR.For) else s
                 for s in ir.body)
    st = ConfigState()
    st.race_check = True
    args = [np.arange(64, dtype=np.float32), np.zeros(64, np.float32),
            np.zeros((), np.float32)][:len(ir.args)]
    try:
        run_interpreter(ir.update(body=body), args, config_state=st)
    except RaceError:
        return True
    return False
