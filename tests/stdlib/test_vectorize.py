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


MASK_SIZES = [{"n": 1}, {"n": 3}, {"n": 8}, {"n": 13}, {"n": 21}]


def test_vectorize_mask_prints_and_agrees(equiv, same_text):
    p = vectorize(axpy, 'i', 8, AVX2, INSTRS, tail='mask')
    same_text(p, """
def axpy(n: size, a: f32[1] @ DRAM, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for io in seq(0, n / 8):
        y_vec: f32[8] @ AVX2
        mm256_loadu_ps(y_vec[0:8], y[8 * io:8 * io + 8])
        x_vec: f32[8] @ AVX2
        mm256_loadu_ps(x_vec[0:8], x[8 * io:8 * io + 8])
        mm256_fmadd_bcst_ps(y_vec[0:8], a[0:1], x_vec[0:8])
        mm256_storeu_ps(y[8 * io:8 * io + 8], y_vec[0:8])
    for io in seq(n / 8, (n + 7) / 8):
        y_tail: f32[8] @ AVX2
        mm256_maskload_ps(n - 8 * io, y_tail[0:8], y[8 * io:n])
        x_tail: f32[8] @ AVX2
        mm256_maskload_ps(n - 8 * io, x_tail[0:8], x[8 * io:n])
        mm256_prefix_fmadd_bcst_ps(n - 8 * io, y_tail[0:8], a[0:1], x_tail[0:8])
        mm256_prefix_store_ps(n - 8 * io, y[8 * io:n], y_tail[0:8])""")
    equiv(axpy, p, MASK_SIZES)


@proc
def add(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        z[i] = x[i] + y[i]


def test_vectorize_mask_of_a_write_only_output(equiv):
    p = vectorize(add, 'i', 8, AVX2, INSTRS, tail='mask')
    text = str(p)
    assert "mm256_prefix_add_ps(n - 8 * io, z_tail[0:8], x_tail[0:8], " \
        "y_tail[0:8])" in text
    assert "mm256_prefix_store_ps(n - 8 * io, z[8 * io:n], z_tail[0:8])" \
        in text
    assert "for i" not in text.replace("for io", "")   # no scalar loop left
    equiv(add, p, MASK_SIZES)


@proc
def mul(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        z[i] = x[i] * y[i]


def test_vectorize_mask_avx512(equiv):
    from exo_hl.hw_libs.avx512 import AVX512, INSTRS as INSTRS512
    for P, sizes in ((axpy, [{"n": 5}, {"n": 16}, {"n": 37}]),
                     (mul, [{"n": 1}, {"n": 31}])):
        p = vectorize(P, 'i', 16, AVX512, INSTRS512, tail='mask')
        assert "mm512_maskz_loadu_ps(n - 16 * io" in str(p)
        assert "mm512_prefix_storeu_ps(n - 16 * io" in str(p)
        equiv(P, p, sizes)


def test_vectorize_mask_needs_masked_instructions():
    unmasked = [i for i in INSTRS if "prefix" not in i.name()]
    with pytest.raises(SchedulingError, match="no instruction"):
        vectorize(axpy, 'i', 8, AVX2, unmasked, tail='mask')


def test_vectorize_mask_rejects_a_reversed_access():
    with pytest.raises(SchedulingError):
        vectorize(rev, 'i', 8, AVX2, INSTRS, tail='mask')


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


@proc
def add2(m: size, n: size, x: f32[m, n], y: f32[m, n], z: f32[m, n]):
    for i in seq(0, m):
        for j in seq(0, n):
            z[i, j] = x[i, j] + y[i, j]


def test_vectorize_mask_an_inner_loop_of_a_nest(equiv):
    p = vectorize(add2, 'j', 8, AVX2, INSTRS, tail='mask')
    assert "mm256_prefix_store_ps(n - 8 * jo, z[i, 8 * jo:n], z_tail[0:8])" \
        in str(p)
    equiv(add2, p, [{"m": 2, "n": 3}, {"m": 3, "n": 19}])


def test_vectorize_mask_without_a_partial_block_is_perfect():
    # the trip count is a proven multiple of the width: no tail at all
    p = vectorize(add8, 'i', 8, AVX2, INSTRS, tail='mask')
    q = vectorize(add8, 'i', 8, AVX2, INSTRS, tail='perfect')
    assert str(p) == str(q)


def test_prefix_store_needs_its_lane_count_proven():
    # every block guarded (no cut): n - 8 * io may exceed 8 lanes, so the
    # prefix store's precondition m <= 8 fails and replace refuses it
    from exo_hl.hw_libs.avx2 import mm256_maskload_ps, mm256_prefix_store_ps
    p = axpy.split('i', 8, 'io', 'ii', tail='guard')
    p = p.stage_mem(p.find_loop('ii'), 'y[8 * io:8 * io + 8]', 'yv')
    p = p.set_memory('yv', AVX2)
    loads, stores = p.find('for i0 in _: _', many=True)
    with pytest.raises(SchedulingError, match="m <= 8"):
        p.replace(loads, mm256_maskload_ps)
    with pytest.raises(SchedulingError, match="m <= 8"):
        p.replace(stores, mm256_prefix_store_ps)
    # in the cut tail block the same copies are selected
    q = p.cut_loop('io', 'n / 8')
    tail = q.find('for io in _: _', many=True)[1]
    loads, stores = tail.find('for i0 in _: _', many=True)
    q = q.replace(loads, mm256_maskload_ps)
    q = q.replace(q.forward(stores), mm256_prefix_store_ps)
    assert "mm256_prefix_store_ps(n - 8 * io, y[8 * io:n], yv[0:8])" in str(q)


def test_replace_all_takes_one_instr_as_exo_does():
    one = replace_all(add8_staged, mm256_add_ps)
    assert str(one) == str(replace_all(add8_staged, [mm256_add_ps]))
    assert "mm256_add_ps(zr[0:8], xr[0:8], yr[0:8])" in str(one)


@proc
def axpy_from(m: size, n: size, a: f32[1], x: f32[n], y: f32[n]):
    assert m <= n
    for i in seq(m, n):
        y[i] += a[0] * x[i]


def test_vectorize_mask_of_a_loop_not_starting_at_zero(equiv):
    p = vectorize(axpy_from, 'i', 8, AVX2, INSTRS, tail='mask')
    text = str(p)
    assert "for io in seq((n - m) / 8, (n - m + 7) / 8):" in text
    assert "mm256_maskload_ps(n - m - 8 * io, x_tail[0:8], " \
        "x[m + 8 * io:n])" in text
    equiv(axpy_from, p, [{"m": 1, "n": 1}, {"m": 3, "n": 12},
                         {"m": 2, "n": 26}, {"m": 5, "n": 13}])
