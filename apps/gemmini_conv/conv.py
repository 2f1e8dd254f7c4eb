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

The tile: the systolic array's rows are 16 output columns ``ox`` of one
output row, its columns 16 output channels. The padding guard depends on
``ox`` only at the two border columns, so the column loop is cut into the
left border, the interior (16-column tiles and a tail tile) and the right
border. In each part the guard is rewritten, proven equal, into one that
does not read ``ox`` (``oy + ky`` inside the image, and ``kx >= 1`` at the
left border, ``kx < 2`` at the right); it then lifts out of the tile, and a
tap outside the image issues no instruction.
"""
from __future__ import annotations

from exo_hl import DRAM, f32, i8, i32, proc, seq, size
from exo_hl.hw_libs.gemmini import (GEMM_ACCUM, GEMM_SCRATCH, ConfigLoad,
                                    ConfigLoadAcc, ConfigLoadId1, ConfigStore,
                                    acc_scale, clamp_i8, config_ld,
                                    config_ld_acc, config_ld_id1, config_st,
                                    ld_acc_i32_bcast, ld_i8, ld_i8_id1,
                                    matmul_i8, matmul_i8_sized, st_acc_i8,
                                    st_acc_i8_relu)

# ResNet-50's 3x3 layers that Exo's paper runs on Gemmini, as
# (D = output rows = columns, OC, IC); the batch is 4.
LAYERS = ((56, 64, 64), (28, 128, 128), (14, 256, 256), (7, 512, 512))
BATCH = 4


@proc
def conv(B: size, D: size, IC: size, OC: size, scale: f32,
         inp: i8[B, D, D, IC] @ DRAM, w: i8[3, 3, IC, OC] @ DRAM,
         bias: i32[OC] @ DRAM, out: i8[B, D, D, OC] @ DRAM):
    assert D >= 2
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
    assert D >= 2
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
        anchor = p.find(pats[-1]) if pats else p.find_loop('b')
        p = p.configwrite_at(anchor, config, field, value,
                             before=not pats)
        pats.append(f"{config.name()}.{field} = _")
    first, last = p.find(pats[0]), p.find(pats[-1])
    return p.replace(first if len(pats) == 1 else (first, last), instr)


# The four parts of an output row after step 1, in program order: the row
# loop's name, the first input column of the tile at kx (its rows are
# ``ox + kx - 1`` for the tile's columns ox) and the number of rows.
PARTS = (("ox", "kx - 1", "1"),                                # left border
         ("oxi", "kx + 16 * oxo", "16"),                       # 16-col tiles
         ("oxi", "kx + 16 * ((D - 2) / 16)", "(D - 2) % 16"),  # tail tile
         ("ox", "D + kx - 2", "1"))                            # right border


def _in_part(p, k):
    """``pattern -> cursor`` inside part ``k`` of the output row."""
    return lambda pat: p.find_loop('oy').body()[k].find(pat)


def tile_part(p, k):
    """Steps 2-4 on part ``k``: accumulator tile, taps and channel blocks
    outside it, staged operands, the matmul instruction."""
    row, lo, n = PARTS[k]
    guard = 'if _: _ #1' if k == 2 else 'if _: _'   # part 2 sits in an if
    f = _in_part(p, k)
    # the tile: rows `row` (output columns), columns oci (output channels);
    # bias, accumulation and store become three nests
    p = p.reorder(f(row), f('oco'))
    f = _in_part(p, k)
    p = p.expand_dim(f('res : _'), 16, 'oci')
    f = _in_part(p, k)
    p = p.expand_dim(f('res : _'), 16, row)
    f = _in_part(p, k)
    p = p.lift_alloc(f('res : _'), n_lifts=2)
    f = _in_part(p, k)
    p = p.fission_after(f('res[_] = _'), n_lifts=2)
    f = _in_part(p, k)
    p = p.fission_after(f('for ky in _: _'), n_lifts=2)
    # taps outside the tile; the guard (no longer reading the row) lifts
    # out of it; 16-deep input-channel blocks outside the tile
    for loop in ('ky', 'kx'):
        f = _in_part(p, k)
        p = p.reorder(f('oci #1'), f(loop))
        f = _in_part(p, k)
        p = p.reorder(f(row + ' #1'), f(loop))
    f = _in_part(p, k)
    p = p.lift_if(f(guard), n_lifts=2)
    f = _in_part(p, k)
    p = p.split(f('ic'), 16, 'ico', 'ici', tail='perfect')
    f = _in_part(p, k)
    p = p.reorder(f('oci #1'), f('ico'))
    f = _in_part(p, k)
    p = p.reorder(f(row + ' #1'), f('ico'))
    # operands into the scratchpad (the input tile gets the scratchpad's
    # constant 16 rows), the tile into the accumulator
    f = _in_part(p, k)
    p = p.stage_mem(f(row + ' #1'), f'inp[b, oy + ky - 1, {lo}:{lo} + {n}, '
                    '16 * ico:16 * ico + 16]', 'xt')
    f = _in_part(p, k)
    p = p.stage_mem(f(row + ' #1'), 'w[ky, kx, 16 * ico:16 * ico + 16, '
                    '16 * oco:16 * oco + 16]', 'wt')
    if n != '16':
        f = _in_part(p, k)
        p = p.resize_dim(f('xt : _'), 0, 16, 0)
    for buf, mem in (('res', GEMM_ACCUM), ('xt', GEMM_SCRATCH),
                     ('wt', GEMM_SCRATCH)):
        f = _in_part(p, k)
        p = p.set_memory(f(f'{buf} : _'), mem)
    f = _in_part(p, k)
    return p.replace(f(row + ' #1'),
                     matmul_i8 if n == '16' else matmul_i8_sized)


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

    # 1. 16-channel output blocks; the output row cut into its left border
    #    column, the interior and the right border column (D >= 2), each
    #    shifted to start at 0; the padding guard rewritten in each part to
    #    an equal one (checked in context) that does not read ox; the
    #    interior split into 16-column tiles and a tail, which runs only
    #    when (D - 2) % 16 > 0 (add_guard, then the never-taken copy is
    #    removed as dead code)
    p = p.split('oc', 16, 'oco', 'oci', tail='perfect')
    p = p.partition_loop('ox', 1)
    p = p.partition_loop('ox #1', 'D - 1')
    p = p.shift_loop('ox #1', 0)
    p = p.shift_loop('ox #2', 0)
    inside = 'oy + ky >= 1 and oy + ky < D + 1'
    p = p.rewrite_expr(p.find('if _: _ #0').cond(), inside + ' and kx >= 1')
    p = p.rewrite_expr(p.find('if _: _ #1').cond(), inside)
    p = p.rewrite_expr(p.find('if _: _ #2').cond(), inside + ' and kx < 2')
    p = p.split('ox #1', 16, 'oxo', 'oxi', tail='cut')
    p = p.add_guard(p.find_loop('oy').body()[2], '(D - 2) % 16 > 0')
    p = p.eliminate_dead_code(p.find_loop('oy').body()[2].orelse()[0])
    p = step("channel blocks; border, interior, tail and border parts; "
             "guards without ox", p.delete_pass())

    # 2-4. in each part: the accumulator tile, taps and channel blocks
    #      outside it, operands staged, the block product as a matmul
    for k, name in enumerate(("left border", "16-column tiles",
                              "tail tile", "right border")):
        p = step(f"tile, staging, matmul: {name}", tile_part(p, k))

    # 5. configuration, once, before all loops: the bias engine reads one
    #    row at stride 0 (broadcast), the input and weight engines the
    #    row strides of inp (along ox) and w, the store engine out's
    p = configure(p, [(ConfigLoadAcc, 'src_stride', '0')], config_ld_acc)
    p = configure(p, [(ConfigLoad, 'src_stride', 'stride(inp, 2)')],
                  config_ld)
    p = configure(p, [(ConfigLoadId1, 'src_stride', 'stride(w, 2)')],
                  config_ld_id1)
    p = step("configuration writes before all loops",
             configure(p, [(ConfigStore, 'dst_stride', 'stride(out, 2)'),
                           (ConfigStore, 'act', str(bool(relu)))],
                       config_st))

    # 6. the remaining nests become configured instructions; each replace
    #    proves the instruction's precondition on the registers
    store = st_acc_i8_relu if relu else st_acc_i8
    for k in range(len(PARTS)):
        row = PARTS[k][0]
        for pat, instr in ((row, ld_acc_i32_bcast),
                           ('xt[_] = _', ld_i8), ('wt[_] = _', ld_i8_id1),
                           (row, store)):
            c = _in_part(p, k)(pat)
            if pat != row:
                c = c.parent().parent()      # the load's two-loop nest
            p = p.replace(c, instr)
    step("bias loads, operand loads, stores", p)
    return out
def schedule(p=conv, relu=None):
    """The fully scheduled kernel."""
    name = 'conv_relu_gemmini' if p is conv_relu else 'conv_gemmini'
    return stages(p, relu)[-1][1].rename(name)
