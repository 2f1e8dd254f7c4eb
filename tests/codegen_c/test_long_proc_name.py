"""A valid procedure name of any length compiles (issue 33, item 15): the
build wrote ``<name>.h``/``<name>.c`` and a 300-character name failed with a
raw ``OSError: File name too long`` while ``c_code_str()`` worked. Build
files are named by a short stem (a prefix and a hash of the name)."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import f32, proc, seq, size
from exo_hl.codegen_c.build_cache import build_stem

import cg_kernels as K


@proc
def ones(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0


@pytest.mark.parametrize("sanitize", [False, True])
def test_300_character_name_compiles_and_runs(sanitize):
    p = ones.rename("a" * 300)
    assert "a" * 300 in p.c_code_str()
    f = p.compile(sanitize=True) if sanitize else p.compile()
    x = np.zeros(5, np.float32)
    f(5, x)
    np.testing.assert_array_equal(x, np.ones(5, np.float32))


def test_long_name_with_config_state():
    p = K.scale_by_cfg.rename("s" * 260)
    f = p.compile()
    x = np.ones(4, np.float32)
    f(4, x, np.float32(2.0))
    assert f.get_config(K.Cfg, "count") == 1
    np.testing.assert_array_equal(x, np.full(4, 2.0, np.float32))


def test_stems_are_short_and_tell_names_apart():
    a, b = "x" * 40 + "a" * 300, "x" * 40 + "b" * 300
    assert build_stem("gemm") == "gemm"
    assert len(build_stem(a)) <= 48 and build_stem(a) != build_stem(b)
    assert build_stem(a).isidentifier()
