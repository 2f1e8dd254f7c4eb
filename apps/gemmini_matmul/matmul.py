"""The application: an int8 matmul scheduled onto the Gemmini library.

``matmul`` is the algorithm, ``C = clamp_i8(round(scale * (A @ B)))`` with
i32 accumulation, written once as a plain loop nest; ``matmul_relu`` is the
same with ReLU before the clamp. ``stages()`` turns either, one checked
rewrite at a time, into a kernel made only of Gemmini instructions whose
configuration writes sit outside all loops; ``schedule()`` returns the final
procedure. The schedule is general in M, N, K (multiples of 16, asserted by
the algorithm), which covers every ResNet-50 shape in ``SHAPES``.
"""
from __future__ import annotations

from apps.common.config_hoist import hoist_config
from exo_hl import DRAM, f32, i8, i32, proc, seq, size
from exo_hl.hw_libs.gemmini import (ConfigLoad, ConfigLoadId1, ConfigStore,
                                    GEMM_ACCUM, GEMM_SCRATCH, acc_scale,
                                    clamp_i8, config_ld, config_ld_id1,
                                    config_st, ld_i8, ld_i8_id1, matmul_i8,
                                    st_acc_i8, st_acc_i8_relu, zero_acc_i32)

# The matmuls of ResNet-50 that Exo's paper runs on Gemmini, as (M, N, K):
# M output rows (batch x pixels), N output channels, K input channels.
SHAPES = ((12544, 256, 64), (12544, 64, 256), (3136, 512, 128),
          (3136, 128, 512), (784, 1024, 256), (512, 512, 512))


@proc
def matmul(M: size, N: size, K: size, scale: f32, A: i8[M, K] @ DRAM,
           B: i8[K, N] @ DRAM, C: i8[M, N] @ DRAM):
    assert M % 16 == 0
    assert N % 16 == 0
    assert K % 16 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            res: i32
            res = 0
            for k in seq(0, K):
                res += A[i, k] * B[k, j]
            C[i, j] = clamp_i8(acc_scale(res, scale))


@proc
def matmul_relu(M: size, N: size, K: size, scale: f32, A: i8[M, K] @ DRAM,
                B: i8[K, N] @ DRAM, C: i8[M, N] @ DRAM):
    assert M % 16 == 0
    assert N % 16 == 0
    assert K % 16 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            res: i32
            res = 0
            for k in seq(0, K):
                res += A[i, k] * B[k, j]
            C[i, j] = clamp_i8(relu(acc_scale(res, scale)))


def stages(p=matmul, relu=None):
    """[(description, procedure)] for every step of the schedule.
    ``relu``: whether the store applies ReLU (default: whether ``p``'s
    store does); it picks the activation register's value and the store."""
    if relu is None:
        relu = "relu(" in str(p)
    out = [("the algorithm", p)]

    def step(what, q):
        out.append((what, q))
        return q

    # 1. 16x16 output tiles; the scalar accumulator becomes a 16x16 tile and
    #    its zeroing, accumulation and store become three separate nests
    p = p.split('i', 16, 'io', 'ii', tail='perfect')
    p = p.split('j', 16, 'jo', 'ji', tail='perfect')
    p = p.reorder('ii', 'jo')
    p = p.expand_dim('res', 16, 'ji')
    p = p.expand_dim('res', 16, 'ii')
    p = p.lift_alloc('res', n_lifts=2)
    p = p.fission_after('res[_] = _', n_lifts=2)
    p = step("16x16 output tiles, accumulator tile",
             p.fission_after('for k in _: _', n_lifts=2))

    # 2. 16-deep k blocks outermost in the accumulation nest
    p = p.split('k', 16, 'ko', 'ki', tail='perfect')
    p = p.reorder('ji #1', 'ko')
    p = step("16x16x16 blocks", p.reorder('ii #1', 'ko'))

    # 3. data movement: operand tiles into the scratchpad, the accumulator
    #    tile into the accumulator memory
    p = p.stage_mem(p.find_loop('ii #1'), 'A[16*io:16*io+16, 16*ko:16*ko+16]',
                    'a')
    p = p.stage_mem(p.find_loop('ii #1'), 'B[16*ko:16*ko+16, 16*jo:16*jo+16]',
                    'b')
    p = p.set_memory('res', GEMM_ACCUM)
    p = p.set_memory('a', GEMM_SCRATCH)
    p = step("stage tiles into scratchpad / accumulator",
             p.set_memory('b', GEMM_SCRATCH))

    # 4. instructions that need no configuration (found by unification)
    p = p.replace(p.find_loop('ii'), zero_acc_i32)
    p = step("zero_acc / matmul instructions",
             p.replace(p.find_loop('ii'), matmul_i8))

    # 5. configured loads: write the engine's stride register right before
    #    the load nest (checked: nothing reads the old value), select the
    #    config instruction, then the load, whose precondition
    #    ConfigLoad*.src_stride == stride(src, 0) is now provable
    p = p.configwrite_at(p.find_loop('i0'), ConfigLoad, 'src_stride',
                         'stride(A, 0)', before=True)
    p = p.replace(p.find('ConfigLoad.src_stride = _'), config_ld)
    p = p.replace(p.find_loop('i0'), ld_i8)
    p = p.configwrite_at(p.find_loop('i2'), ConfigLoadId1, 'src_stride',
                         'stride(B, 0)', before=True)
    p = p.replace(p.find('ConfigLoadId1.src_stride = _'), config_ld_id1)
    p = step("configured loads (mvin)", p.replace(p.find_loop('i2'),
                                                  ld_i8_id1))

    # 6. configured store: stride and activation registers, then mvout
    p = p.configwrite_at(p.find_loop('ii'), ConfigStore, 'dst_stride',
                         'stride(C, 0)', before=True)
    p = p.configwrite_at(p.find('ConfigStore.dst_stride = _'), ConfigStore,
                         'act', str(bool(relu)))
    p = p.replace((p.find('ConfigStore.dst_stride = _'),
                   p.find('ConfigStore.act = _')), config_st)
    store = st_acc_i8_relu if relu else st_acc_i8
    p = step("configured store (mvout)", p.replace(p.find_loop('ii'), store))

    # 7. hoist every config write out of all loops: each is then issued once
    p = step("hoist config_ld out of ko, jo, io",
             hoist_config(p, 'config_ld(_)', 3))
    p = step("hoist config_ld_id1 out of ko, jo, io",
             hoist_config(p, 'config_ld_id1(_)', 3))
    p = step("hoist config_st out of jo, io",
             hoist_config(p, 'config_st(_)', 2))
    return out


def schedule(p=matmul, relu=None):
    """The fully scheduled kernel."""
    name = 'matmul_relu_gemmini' if p is matmul_relu else 'matmul_gemmini'
    return stages(p, relu)[-1][1].rename(name)
