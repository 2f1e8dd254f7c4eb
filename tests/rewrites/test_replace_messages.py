"""Issue 34 item 7: ``replace`` refusals speak the user's terms.

Each kind of refusal is checked: the instruction's statement that did not
match (not a path such as "statement 0 of the body of loop 'i' in
statement 0 of sub_proc body"), an operand in the wrong memory (with the
stage_mem/set_memory to do), an access that does not vary with the loop
(a reduction into one element; one value for every lane), and
``vectorize``'s "no instruction matches" naming the nearest instruction
and the first reason it failed.
"""
from __future__ import annotations

import pytest

from exo_hl import DRAM, SchedulingError, f32, proc, seq, size
from exo_hl.hw_libs import avx2, avx512
from exo_hl.stdlib import vectorize

UNIFICATION_SPEAK = ("sub_proc", "statement 0", "Reduce into", "Assign into",
                     "window choice", "lo:hi")


def _msg(fn):
    with pytest.raises(SchedulingError) as e:
        fn()
    msg = str(e.value)
    for word in UNIFICATION_SPEAK:
        assert word not in msg, (word, msg)
    return msg


@proc
def kernels(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM, z: f32[n] @ DRAM,
            c: f32[4] @ DRAM):
    assert n % 16 == 0
    for i in seq(0, n):
        z[i] = x[i] + y[i]
    for i in seq(0, n):
        z[i] += x[i]
    for i in seq(0, n):
        z[i] = x[i] * c[2]


def _split():
    p = kernels
    for k in range(3):
        p = p.split("i", 16, "io", "ii", tail="perfect")
    return p, p.find_loop("ii", many=True)


def test_statement_kind_names_the_instructions_statement():
    p, loops = _split()
    msg = _msg(lambda: p.replace(loops[0], avx512.mm512_fmadd_ps))
    assert "'mm512_fmadd_ps' does not match this code" in msg
    assert "its statement 'dst[i] += a[i] * b[i]'" in msg
    assert ("expected an accumulation 'dst[...] += ...', found an "
            "assignment 'z[...] = ...'") in msg
    # both statements, side by side
    assert "instruction: dst[i] += a[i] * b[i]" in msg
    assert "yours:       z[16 * io + ii] = x[16 * io + ii] + " in msg


def test_operand_in_the_wrong_memory_says_to_stage_it():
    p, loops = _split()
    msg = _msg(lambda: p.replace(loops[1], avx512.mm512_add_ps))
    assert "'mm512_add_ps' matches this code, but not its operands" in msg
    assert "must be in memory AVX512" in msg and "it is in DRAM" in msg
    assert ("stage the operand into AVX512 first, e.g. p = p.stage_mem("
            "p.find_loop('ii'), 'z[16 * io:16 * io + 16]', 'z_reg') then "
            "p = p.set_memory('z_reg', AVX512)") in msg
    # the AVX2 library's memory is named just as well
    p8 = kernels.split("i", 8, "io", "ii", tail="perfect")
    msg = _msg(lambda: p8.replace(p8.find_loop("ii"), avx2.mm256_add_ps))
    assert "stage the operand into AVX2 first" in msg, msg


def test_invariant_read_says_broadcast():
    p, loops = _split()
    msg = _msg(lambda: p.replace(loops[2], avx512.mm512_mul_ps))
    assert "the access 'b[i]' cannot be matched with 'c[2]'" in msg
    assert ("'c[2]' does not vary with loop 'ii' (the instruction's 'b[i]' "
            "does): the same value is used in every lane") in msg
    assert "Broadcast it into a register first" in msg
    assert "set1" in msg


@proc
def matvec(n: size, A: f32[n, n] @ DRAM, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 16 == 0
    for i in seq(0, n):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


def test_invariant_write_is_a_reduction():
    """The issue's example: ``y[i]`` inside loop j."""
    q = matvec.split("j", 16, "jo", "ji", tail="perfect")
    msg = _msg(lambda: q.replace(q.find_loop("ji"), avx512.mm512_fmadd_ps))
    assert "the access 'dst[i]' cannot be matched with 'y[i]'" in msg
    assert ("'y[i]' does not vary with loop 'ji' (the instruction's "
            "'dst[i]' does): every iteration of 'ji' updates the same "
            "element, so the loop is a reduction") in msg
    assert "stdlib.vectorize_reduction" in msg


def test_progress_ranks_a_memory_refusal_above_a_structural_one():
    p, loops = _split()
    with pytest.raises(SchedulingError) as structural:
        p.replace(loops[1], avx512.mm512_loadu_ps)
    with pytest.raises(SchedulingError) as memory:
        p.replace(loops[1], avx512.mm512_add_ps)
    assert memory.value.replace_progress > structural.value.replace_progress
    assert memory.value.replace_reason.startswith("'mm512_add_ps' matches")


@proc
def divide(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM, z: f32[n] @ DRAM):
    assert n % 16 == 0
    for i in seq(0, n):
        z[i] = x[i] / y[i]


def test_no_instruction_matches_names_the_nearest_and_why():
    msg = _msg(lambda: vectorize(divide, "i", 16, avx512.AVX512,
                                 avx512.INSTRS))
    assert "no instruction of the library matches the loop 'for ii'" in msg
    # an instruction computing a[i] <op> b[i] got furthest: its operator
    # is named as the reason, and what to do
    assert "The nearest instruction is 'mm512_" in msg, msg
    assert "vs '/' in 'x_ld[ii] / y_ld[ii]'" in msg, msg
    assert "add one (docs/hardware.md) or leave the loop scalar" in msg
