"""A gap at an end of a loop body, forwarded through ``split``.

``split`` makes ``for i: B`` ``for io: for ii: B`` (or ``for io: for ii:
if guard: B``); ``B`` runs once per ``(io, ii)`` as it ran once per ``i``,
so the start (end) of ``i``'s body is the start (end) of ``ii``'s body, or
of the guard's: the split states that list (``forward_lists``). The start
of ``io``'s body, before ``for ii``, runs once per block: never the image.
With ``tail='cut'`` the gap is in the main copy, as are the body's
statements and the gaps between them (docs/api.md §4).
"""
from __future__ import annotations

import pytest

from exo_hl import config, f32, proc, seq, size


@config
class GapCfg:
    s: f32


@proc
def two_writes(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = 2.0 * y[i]
        y[i] = 1.0 + x[i]


def _split(p, tail):
    return p.split("i", 4 if tail != "perfect" else 1, "io", "ii", tail=tail)


@pytest.mark.parametrize("tail", ["guard", "cut", "perfect"])
def test_gap_at_either_end_of_a_split_body_is_at_that_end_of_ii(tail):
    p = two_writes
    q = _split(p, tail)
    body = p.find_loop("i").body()
    start, end = q.forward(body.before()), q.forward(body.after())
    inner = q.find_loop("ii").path()
    if tail == "guard":
        inner += (("body", 0), )  # the guard's body
    assert start.location() == (inner, "body", 0)
    assert end.location() == (inner, "body", 2)


def test_write_at_the_forwarded_gap_is_the_write_before_the_split(equiv):
    """Writing the config at the forwarded start of the body gives the
    program that writing it before the split gives (guard: inside the
    guard, so it runs for the original iterations only: before it,
    ``x[4 * io + ii]`` would be read out of bounds)."""
    p = two_writes
    g = p.find_loop("i").body().before()
    early = _split(p.write_config(g, GapCfg, "s", "x[i] - 1.0"), "guard")
    q = _split(p, "guard")
    late = q.write_config(q.forward(g), GapCfg, "s", "x[4 * io + ii] - 1.0")
    assert str(late) == str(early), f"{late}\n{early}"
    assert "if 4 * io + ii < n:\n                GapCfg.s = " in str(late)
    equiv(p.write_config(g, GapCfg, "s", "x[i] - 1.0"), late,
          [{"n": 1}, {"n": 7}, {"n": 8}])
    end = q.forward(p.find_loop("i").body().after())
    late_end = q.write_config(end, GapCfg, "s", "y[4 * io + ii]")
    early_end = _split(p.write_config(p.find_loop("i").body().after(),
                                      GapCfg, "s", "y[i]"), "guard")
    assert str(late_end) == str(early_end)


def test_split_of_the_outer_loop_states_its_body_too():
    """Splitting ``io`` again: the start of ``io``'s body (before ``for
    ii``, once per ``io``) is the start of ``ioi``'s body; ``i``'s body
    start stays the start of ``ii``'s guard body."""
    p = two_writes
    q = _split(p, "guard")
    r = q.split("io", 2, "ioo", "ioi", tail="guard")
    g = r.forward(p.find_loop("i").body().before())
    assert g.location() == (r.find_loop("ii").path() + (("body", 0), ),
                            "body", 0)
    gi = r.forward(q.find_loop("ii").before())
    ioi = r.find_loop("ioi").path() + (("body", 0), )  # its guard
    assert gi.location() == (ioi, "body", 0)


@proc
def rows(n: size, x: f32[n, 4], y: f32[n, 4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            x[i, j] = 1.0
            y[i, j] = x[i, j]


def test_gap_at_an_end_of_a_recomputed_body_stays_invalid():
    """``divide_with_recompute`` runs some iterations twice: the start of
    the new inner loop's body is not the start of ``j``'s, and the error
    says how to find a place again."""
    from exo_hl.cursors import InvalidCursorError
    q = rows.divide_with_recompute(rows.find_loop("j"), "2", 2, ["d", "r"])
    for g in (rows.find_loop("j").body().before(),
              rows.find_loop("j").body().after()):
        with pytest.raises(InvalidCursorError,
                           match=r"find the place again.*find_loop"):
            q.forward(g)
