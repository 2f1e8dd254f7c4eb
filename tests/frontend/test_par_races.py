"""docs/api.md §6: a par loop whose iterations may race is rejected when
the procedure is defined (and race-free ones are accepted)."""
from __future__ import annotations

import pytest

from exo_hl import ExoTypeError, f32, par, proc, seq, size


def test_race_free_par_loops_accepted():
    @proc
    def scale(n: size, m: size, x: f32[n, m], y: f32[n, m]):
        for i in par(0, n):
            t: f32
            for j in seq(0, m):
                t = x[i, j]
                y[i, j] = 2.0 * t

    assert "par(0, n)" in str(scale)


@pytest.mark.parametrize("body", ["reduce", "shift", "guard"])
def test_racing_par_loops_rejected(body):
    with pytest.raises(ExoTypeError, match="may race") as ei:
        if body == "reduce":
            @proc
            def bad(n: size, x: f32[n], s: f32[1]):
                for i in par(0, n):  # ERR
                    s[0] += x[i]
        elif body == "shift":
            @proc
            def bad(n: size, x: f32[n + 1]):
                for i in par(0, n):  # ERR
                    x[i + 1] = x[i]
        else:
            @proc
            def bad(n: size, x: f32[n], y: f32[n]):
                for i in par(0, n):  # ERR
                    if i > 0:
                        y[i] = x[i]
                        x[i - 1] = 0.0
    assert "in procedure 'bad'" in str(ei.value)
    assert "# ERR" in str(ei.value)
