"""The start every broadcast SGEMM micro-kernel schedule shares (NEON
``apps/sgemm_neon``, RVV ``apps/sgemm_rvv``): tile the loops, cut the
edges off into scalar loops, and hold the tile of C and a row of B in
vector registers."""
from __future__ import annotations


def in_registers(p, buf, dim, lanes, mem, reg_lanes=None):
    """``buf``'s dimension ``dim`` split into registers of ``lanes``
    elements in ``mem`` (each padded to ``reg_lanes`` when the register is
    wider than the lanes used)."""
    p = p.divide_dim(buf, dim, lanes)
    if reg_lanes is not None:
        p = p.resize_dim(buf, dim + 1, reg_lanes, 0)
    return p.set_memory(buf, mem)


def register_tile(p, mr, nr, lanes, mem, reg_lanes=None):
    """``C += A @ B`` (loops i, j, k) tiled into ``mr`` x ``nr`` tiles of C
    held in registers across the whole k loop, a row of B loaded into
    registers for each k (loops io, jo, k, ii, jm, ji; buffers C_reg,
    B_reg). The row edge (the last M % mr rows) and the column edge are
    separate loops (``tail='cut'``), left in scalar C."""
    p = p.split('i', mr, 'io', 'ii', tail='cut')
    p = p.split('j', nr, 'jo', 'jm', tail='cut')
    p = p.split('jm', lanes, 'jm', 'ji', tail='perfect')
    # the column edge (j >= N - N % nr) becomes its own loop nest over ii
    p = p.fission_after(p.find_loop('jo'), n_lifts=1)
    p = p.reorder('ii', 'jo')                      # io, jo, ii, jm, ji, k
    p = p.reorder('ji', 'k').reorder('jm', 'k').reorder('ii', 'k')
    p = p.stage_mem(p.find_loop('k'),
                    f'C[{mr}*io:{mr}*io+{mr}, {nr}*jo:{nr}*jo+{nr}]',
                    'C_reg')
    p = in_registers(p, 'C_reg', 1, lanes, mem, reg_lanes)
    p = p.stage_mem(p.find_loop('ii'), f'B[k, {nr}*jo:{nr}*jo+{nr}]',
                    'B_reg')
    return in_registers(p, 'B_reg', 0, lanes, mem, reg_lanes)
