"""vectorize and replace_all with the AVX2 library."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.hw_libs.avx2 import AVX2, INSTRS, mm256_add_ps
from exo_hl.stdlib import replace_all, vectorize


@proc
def axpy(n: size, a: f32[1], x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += a[0] * x[i]


@proc
def add8(n: size, x: f32[n], y: f32[n], z: f32[n]):
    assert n % 8 == 0
    for i in seq(0, n):
        z[i] = x[i] + y[i]


def test_vectorize_cut_prints_and_agrees(equiv, same_text):
    p = vectorize(axpy, 'i', 8, AVX2, INSTRS, tail='cut')
    same_text(p, """
def axpy(n: size, a: f32[1] @ DRAM, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for io in seq(0, n / 8):
        y_vec: f32[8] @ AVX2
        mm256_loadu_ps(y_vec[0:8], y[8 * io:8 * io + 8])
        x_vec: f32[8] @ AVX2
        mm256_loadu_ps(x_vec[0:8], x[8 * io:8 * io + 8])
        mm256_fmadd_bcst_ps(y_vec[0:8], a[0:1], x_vec[0:8])
        mm256_storeu_ps(y[8 * io:8 * io + 8], y_vec[0:8])
    for ii in seq(0, n % 8):
        y[ii + 8 * (n / 8)] += a[0] * x[ii + 8 * (n / 8)]""")
    equiv(axpy, p, [{"n": 3}, {"n": 8}, {"n": 21}])


def test_vectorize_perfect(equiv):
    p = vectorize(add8, 'i', 8, AVX2, INSTRS, tail='perfect')
    assert "mm256_add_ps(" in str(p)
    assert str(p).count("mm256_loadu_ps(") == 2
    assert "mm256_storeu_ps(" in str(p)
    equiv(add8, p, [{"n": 8}, {"n": 32}])


def test_vectorize_perfect_rejects_an_unproven_tail():
    with pytest.raises(SchedulingError):
        vectorize(axpy, 'i', 8, AVX2, INSTRS, tail='perfect')


def test_vectorize_mask_is_refused_with_a_reason():
    with pytest.raises(SchedulingError, match="mask"):
        vectorize(axpy, 'i', 8, AVX2, INSTRS, tail='mask')


def test_vectorize_rejects_a_body_no_instruction_matches():
    with pytest.raises(SchedulingError, match="no instruction"):
        vectorize(add8, 'i', 8, AVX2, [mm256_add_ps], tail='perfect')


@proc
def rev(n: size, x: f32[n], y: f32[n]):
    assert n % 8 == 0
    for i in seq(0, n):
        y[i] = x[n - 1 - i]


def test_vectorize_rejects_a_reversed_access():
    with pytest.raises(SchedulingError):
        vectorize(rev, 'i', 8, AVX2, INSTRS, tail='perfect')


@proc
def add8_plain(x: f32[8], y: f32[8], z: f32[8]):
    for i in seq(0, 8):
        z[i] = x[i] + y[i]


@proc
def add8_staged(x: f32[8], y: f32[8], z: f32[8]):
    xr: f32[8] @ AVX2
    yr: f32[8] @ AVX2
    zr: f32[8] @ AVX2
    for i in seq(0, 8):
        xr[i] = x[i]
    for i in seq(0, 8):
        yr[i] = y[i]
    for i in seq(0, 8):
        zr[i] = xr[i] + yr[i]
    for i in seq(0, 8):
        z[i] = zr[i]


def test_replace_all_selects_every_loop(equiv, same_text):
    p = replace_all(add8_staged, INSTRS)
    same_text(p, """
def add8_staged(x: f32[8] @ DRAM, y: f32[8] @ DRAM, z: f32[8] @ DRAM):
    xr: f32[8] @ AVX2
    yr: f32[8] @ AVX2
    zr: f32[8] @ AVX2
    mm256_loadu_ps(xr[0:8], x[0:8])
    mm256_loadu_ps(yr[0:8], y[0:8])
    mm256_add_ps(zr[0:8], xr[0:8], yr[0:8])
    mm256_storeu_ps(z[0:8], zr[0:8])""")
    equiv(add8_plain, p, [{}])
    equiv(add8_plain, add8_staged, [{}], compiled=False)


def test_replace_all_leaves_unmatched_loops():
    p = replace_all(add8_staged, [mm256_add_ps])
    assert str(p).count("for i in seq(0, 8)") == 3
    assert "mm256_add_ps(zr[0:8], xr[0:8], yr[0:8])" in str(p)


def test_replace_all_takes_one_instr_as_exo_does():
    one = replace_all(add8_staged, mm256_add_ps)
    assert str(one) == str(replace_all(add8_staged, [mm256_add_ps]))
    assert "mm256_add_ps(zr[0:8], xr[0:8], yr[0:8])" in str(one)
