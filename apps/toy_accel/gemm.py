"""The application: a GEMM scheduled onto the toy accelerator (paper §3.2).

``gemm`` is the algorithm, written once. ``schedule`` turns it, one checked
rewrite at a time, into a kernel where every loop nest is an accelerator
instruction and the load configuration is written exactly once, at the top.
``stages(gemm)`` returns every intermediate procedure, so each step can be
printed (``run.py --steps``).
"""
from __future__ import annotations

from exo_hl import DRAM, f32, proc, seq, size

try:  # imported as apps.toy_accel.gemm (tests) or as a script's module
    from .hw_lib import (ACCUM, SCRATCH, ld_data_cfg, ld_data_str, matmul,
                         split_config, st_acc_add, zero_acc)
except ImportError:
    from hw_lib import (ACCUM, SCRATCH, ld_data_cfg, ld_data_str, matmul,
                        split_config, st_acc_add, zero_acc)


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
         B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert M % 16 == 0
    assert N % 16 == 0
    assert K % 16 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def stages(p=gemm):
    """[(description, procedure)] for every step of the schedule."""
    out = [("the algorithm", p)]

    def step(what, q):
        out.append((what, q))
        return q

    # 1. 16x16x16 tiles: io, jo, ko outside; ii, ji, ki inside
    p = p.split('i', 16, 'io', 'ii', tail='perfect')
    p = p.split('j', 16, 'jo', 'ji', tail='perfect')
    p = p.split('k', 16, 'ko', 'ki', tail='perfect')
    p = p.reorder('ii', 'jo')
    p = p.reorder('ji', 'ko')
    p = step("split into 16x16x16 tiles", p.reorder('ii', 'ko'))

    # 2. data movement: the C tile lives in the accumulator for the whole
    #    k loop (zeroed, then added back); A and B tiles go to the scratchpad
    p = p.stage_mem(p.find_loop('ko'), 'C[16*io:16*io+16, 16*jo:16*jo+16]',
                    'res', accum=True)
    p = p.stage_mem(p.find_loop('ii'), 'A[16*io:16*io+16, 16*ko:16*ko+16]',
                    'a')
    p = p.stage_mem(p.find_loop('ii'), 'B[16*ko:16*ko+16, 16*jo:16*jo+16]',
                    'b')
    p = p.set_memory('res', ACCUM)
    p = p.set_memory('a', SCRATCH)
    p = step("stage tiles into the accelerator memories",
             p.set_memory('b', SCRATCH))

    # 3. instruction selection for everything that needs no configuration
    #    (the loop nests are found by the instruction bodies: replace unifies)
    p = p.replace(p.find_loop('i0'), zero_acc)        # res = 0
    p = p.replace(p.find_loop('i0'), st_acc_add)      # C tile += res
    p = p.replace(p.find_loop('ii'), matmul)          # res += a @ b
    p = step("zero / store / matmul / B-load instructions",
             p.replace(p.find_loop('i4'), ld_data_str))

    # 4. the configured load, as in the paper: select the self-configuring
    #    load (its body is the A-load loop nest), swap in its library-derived
    #    split form config_ld + ld_data (call_eqv: equivalent only modulo
    #    ConfigLoad.src_stride, which nothing after the call reads before
    #    overwriting), and inline it
    p = p.replace(p.find_loop('i2'), ld_data_cfg)
    p = p.call_eqv('ld_data_cfg(_)', split_config())
    p = step("configure, then load A with ld_data",
             p.inline('ld_data_cfg(_)'))

    # 5. hoist the (pipeline-flushing) config write out of all three loops:
    #    split it off into its own loop, which is idempotent and runs at
    #    least once (K % 16 == 0 and K >= 1), so the loop can go
    p = p.reorder_stmts('a : _', 'config_ld(_)')
    p = p.fission_after('config_ld(_)')
    p = step("hoist out of ko", p.remove_loop('ko'))
    # it commutes with the accumulator zeroing and allocation before it
    p = p.reorder_stmts('zero_acc(_)', 'config_ld(_)')
    p = p.reorder_stmts('res : _', 'config_ld(_)')
    p = p.fission_after('config_ld(_)')
    p = step("hoist out of jo", p.remove_loop('jo'))
    p = p.fission_after('config_ld(_)')
    p = step("hoist out of io", p.remove_loop('io'))

    return out


def schedule(p=gemm):
    """The fully scheduled kernel."""
    return stages(p)[-1][1].rename('gemm_toy_accel')
