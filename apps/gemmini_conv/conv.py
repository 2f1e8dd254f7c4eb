"""The application: a 3x3 int8 convolution scheduled onto Gemmini.

``conv`` is the algorithm as a plain loop nest: batch ``B``, a ``D`` x ``D``
NHWC input with ``IC`` channels, weights ``[3][3][IC][OC]``, padding 1 and
stride 1 (so the output is ``D`` x ``D`` too), an i32 bias, i32
accumulation, then ``clamp_i8(round(scale * acc))``; ``conv_relu`` applies
ReLU before the clamp. The padding is the guard of the innermost tap: a
tap outside the image adds nothing.

``stages()`` maps it onto the Gemmini library with checked rewrites only
(each is a ``Procedure`` method that proves its own safety; the API has no
unchecked variant); ``schedule()`` returns the final procedure.

The tile: the systolic array's rows are the batch (``B`` <= 16 images) and
its columns 16 output channels, so one output pixel ``(oy, ox)`` of every
image is one accumulator tile. Then the padding guard depends only on
``oy, ox, ky, kx``, which are all outside the tile: it lifts out of the
tile loops unchanged, and a tap outside the image issues no instruction.
"""
from __future__ import annotations

from exo_hl import DRAM, f32, i8, i32, proc, seq, size
from exo_hl.hw_libs.gemmini import (GEMM_ACCUM, GEMM_SCRATCH, ConfigLoad,
                                    ConfigLoadAcc, ConfigLoadId1, ConfigStore,
                                    acc_scale, clamp_i8, config_ld,
                                    config_ld_acc, config_ld_id1, config_st,
                                    ld_acc_i32_bcast, ld_i8, ld_i8_id1,
                                    matmul_i8_sized, st_acc_i8,
                                    st_acc_i8_relu)

# ResNet-50's 3x3 layers that Exo's paper runs on Gemmini, as
# (D = output rows = columns, OC, IC); the batch is 4.
LAYERS = ((56, 64, 64), (28, 128, 128), (14, 256, 256), (7, 512, 512))
BATCH = 4


@proc
def conv(B: size, D: size, IC: size, OC: size, scale: f32,
         inp: i8[B, D, D, IC] @ DRAM, w: i8[3, 3, IC, OC] @ DRAM,
         bias: i32[OC] @ DRAM, out: i8[B, D, D, OC] @ DRAM):
    assert B <= 16
    assert IC % 16 == 0
    assert OC % 16 == 0
    for b in seq(0, B):
        for oy in seq(0, D):
            for ox in seq(0, D):
                for oc in seq(0, OC):
                    res: i32
                    res = bias[oc]
                    for ky in seq(0, 3):
                        for kx in seq(0, 3):
                            if (oy + ky >= 1 and oy + ky < D + 1 and
                                    ox + kx >= 1 and ox + kx < D + 1):
                                for ic in seq(0, IC):
                                    res += (inp[b, oy + ky - 1, ox + kx - 1,
                                                ic] * w[ky, kx, ic, oc])
                    out[b, oy, ox, oc] = clamp_i8(acc_scale(res, scale))


@proc
def conv_relu(B: size, D: size, IC: size, OC: size, scale: f32,
              inp: i8[B, D, D, IC] @ DRAM, w: i8[3, 3, IC, OC] @ DRAM,
              bias: i32[OC] @ DRAM, out: i8[B, D, D, OC] @ DRAM):
    assert B <= 16
    assert IC % 16 == 0
    assert OC % 16 == 0
    for b in seq(0, B):
        for oy in seq(0, D):
            for ox in seq(0, D):
                for oc in seq(0, OC):
                    res: i32
                    res = bias[oc]
                    for ky in seq(0, 3):
                        for kx in seq(0, 3):
                            if (oy + ky >= 1 and oy + ky < D + 1 and
                                    ox + kx >= 1 and ox + kx < D + 1):
                                for ic in seq(0, IC):
                                    res += (inp[b, oy + ky - 1, ox + kx - 1,
                                                ic] * w[ky, kx, ic, oc])
                    out[b, oy, ox, oc] = clamp_i8(relu(acc_scale(res,
                                                                 scale)))


def configure(p, writes, instr):
    """Write configuration registers once, before all loops, and turn the
    writes into the configuration instruction ``instr``.
    ``configwrite_at`` checks that nothing before the first loop reads the
    registers; the loads and stores that ``replace`` creates later are
    accepted only if the value is provably the one they need wherever they
    run (nothing in between writes the register)."""
    pats = []
    for config, field, value in writes:
        anchor = p.find(pats[-1]) if pats else p.find_loop('oy')
        p = p.configwrite_at(anchor, config, field, value,
                             before=not pats)
        pats.append(f"{config.name()}.{field} = _")
    first, last = p.find(pats[0]), p.find(pats[-1])
    return p.replace(first if len(pats) == 1 else (first, last), instr)


def stages(p=conv, relu=None):
    """[(description, procedure)] for every step of the schedule.
    ``relu`` (default: whether ``p``'s store applies ReLU) picks the
    activation register's value and the store instruction."""
    if relu is None:
        relu = "relu(" in str(p)
    out = [("the algorithm", p)]

    def step(what, q):
        out.append((what, q))
        return q

    # 1. loops: pixel (oy, ox) outermost, then 16-channel output blocks,
    #    then the batch; the scalar accumulator becomes a 16 x 16 tile
    #    (rows: images, B <= 16; columns: output channels) and its bias
    #    initialisation, accumulation and store become three nests
    p = p.reorder('b', 'oy').reorder('b', 'ox')
    p = p.split('oc', 16, 'oco', 'oci', tail='perfect')
    p = p.reorder('b', 'oco')
    p = p.expand_dim('res', 16, 'oci')
    p = p.expand_dim('res', 16, 'b')
    p = p.lift_alloc('res', n_lifts=2)
    p = p.fission_after('res[_] = _', n_lifts=2)
    p = step("accumulator tile: bias, accumulate, store",
             p.fission_after('for ky in _: _', n_lifts=2))

    # 2. taps and 16-deep input-channel blocks outside the tile; the
    #    padding guard only reads oy, ox, ky, kx, so it lifts out of the
    #    tile loops (lift_if proves it invariant)
    p = p.reorder('oci #1', 'ky').reorder('b #1', 'ky')
    p = p.reorder('oci #1', 'kx').reorder('b #1', 'kx')
    p = p.lift_if(p.find('if _: _'), n_lifts=2)
    p = p.split('ic', 16, 'ico', 'ici', tail='perfect')
    p = step("taps and channel blocks outside the tile, guard lifted",
             p.reorder('oci #1', 'ico').reorder('b #1', 'ico'))

    # 3. data movement: the input rows of the B images and the weight block
    #    into the scratchpad, the tile into the accumulator; the input
    #    buffer gets the constant 16 rows the scratchpad needs (B <= 16)
    p = p.stage_mem(p.find_loop('b #1'),
                    'inp[0:B, oy + ky - 1, ox + kx - 1, '
                    '16 * ico:16 * ico + 16]', 'xt')
    p = p.stage_mem(p.find_loop('b #1'),
                    'w[ky, kx, 16 * ico:16 * ico + 16, '
                    '16 * oco:16 * oco + 16]', 'wt')
    p = p.resize_dim('xt', 0, 16, 0)
    p = p.set_memory('res', GEMM_ACCUM)
    p = p.set_memory('xt', GEMM_SCRATCH)
    p = step("stage tiles into scratchpad / accumulator",
             p.set_memory('wt', GEMM_SCRATCH))

    # 4. the block product (B x 16 x 16) is the partial-block matmul
    p = step("matmul instruction",
             p.replace(p.find_loop('b #1'), matmul_i8_sized))

    # 5. configuration, once, before all loops: the bias engine reads one
    #    row at stride 0 (broadcast), the input and weight engines the
    #    row strides of inp and w, the store engine the stride of out
    p = configure(p, [(ConfigLoadAcc, 'src_stride', '0')], config_ld_acc)
    p = configure(p, [(ConfigLoad, 'src_stride', 'stride(inp, 0)')],
                  config_ld)
    p = configure(p, [(ConfigLoadId1, 'src_stride', 'stride(w, 2)')],
                  config_ld_id1)
    p = step("configuration writes before all loops",
             configure(p, [(ConfigStore, 'dst_stride', 'stride(out, 0)'),
                           (ConfigStore, 'act', str(bool(relu)))],
                       config_st))

    # 6. the remaining nests become configured instructions; each replace
    #    proves the instruction's precondition on the registers
    p = p.replace(p.find_loop('b'), ld_acc_i32_bcast)
    p = p.replace(p.find_loop('i0'), ld_i8)
    p = p.replace(p.find_loop('i2'), ld_i8_id1)
    store = st_acc_i8_relu if relu else st_acc_i8
    step("bias load, operand loads, store", p.replace(p.find_loop('b'),
                                                      store))
    return out


def schedule(p=conv, relu=None):
    """The fully scheduled kernel."""
    name = 'conv_relu_gemmini' if p is conv_relu else 'conv_gemmini'
    return stages(p, relu)[-1][1].rename(name)
