from __future__ import annotations
from exo_hl import *
import pytest

def test_alias():
    @proc
    def add_vec(n: size, x: [f32][n], y: [f32][n]):
        for i in seq(0, n):
            y[i] += x[i]
    @proc
    def readboth(n: size, x: [f32][n], y: [f32][n], z: f32[n]):
        for i in seq(0, n):
            z[i] = x[i] + y[i]
    @proc
    def ok(n: size, a: f32[n], z: f32[n]):
        readboth(n, a[0:n], a[0:n], z)
    with pytest.raises(ExoTypeError, match="would all view buffer 'a'"):
        @proc
        def bad(n: size, a: f32[n]):
            w = a[0:n]
            add_vec(n, w, a[0:n])
