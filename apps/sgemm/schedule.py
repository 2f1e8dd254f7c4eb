"""The schedule: naive SGEMM -> an MR x NR register-blocked micro-kernel.

One schedule, parametrized by an instruction-set description (``Isa``):
the register memory, its f32 lanes, the tile (MR rows x NR columns of C,
NR / lanes registers per row), the k block KC, and the three instructions
the kernel is made of (register load, register store, broadcast-FMA).
Two descriptions ship:

* ``AVX512``: 6x64 tile, 24 zmm accumulators (4 registers of 16 per row),
  k blocks of 128;
* ``AVX2``: 6x16 tile, 12 ymm accumulators (2 registers of 8 per row),
  k blocks of 64.

The micro-kernel keeps the MR x NR tile of C in registers for a block of
KC steps of k; each step loads one NR-wide row of B into NR / lanes
registers and does MR * NR / lanes fused multiply-adds with MR broadcast
elements of A. Around it (the GotoBLAS structure): k blocks of KC
outermost; per k block, the KC x N block of B is packed once into N / NR
contiguous KC x NR panels (the one a micro-kernel reads is 4 KiB for AVX2,
32 KiB for AVX-512; the whole block stays in L2 for N up to about 2000),
then the rows are swept in blocks of MR, and inside each, the columns in
panels of NR, so the MR x KC block of A the micro-kernel reads stays in L1
for the whole sweep. The last M % MR rows go through a 1 x NR kernel, so M
is free; N % NR == 0 and K % KC == 0 are preconditions.

Every step is a checked rewrite. ``stages(isa)`` returns the procedure
after each group of steps (``run.py --steps`` prints them). Buffers are
staged in DRAM first and moved into registers, with their instructions
selected, at the end.

A procedure's preconditions are literal (``assert N % 64 == 0``), so each
description carries its own copy of the algorithm; ``Isa`` checks that its
asserts match the tile and k block.
"""
from __future__ import annotations

from dataclasses import dataclass

from exo_hl import DRAM, Procedure, f32, proc, seq, size
from exo_hl.hw_libs import avx2 as _avx2
from exo_hl.hw_libs import avx512 as _avx512


# ---------------------------------------------------------------------------
# the algorithm, once per (NR, KC): C += A @ B, row-major

@proc
def sgemm_n64_k128(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
                   B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert N % 64 == 0
    assert K % 128 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def sgemm_n16_k64(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
                  B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert N % 16 == 0
    assert K % 64 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


# ---------------------------------------------------------------------------
# instruction-set descriptions

@dataclass(frozen=True)
class Isa:
    """What the schedule needs to know about a vector instruction set."""

    name: str              # --isa value: 'avx512', 'avx2'
    title: str             # for people: 'AVX-512'
    algorithm: Procedure   # the naive SGEMM with this tile's preconditions
    mem: type              # register memory (a VectorRegisters subclass)
    lanes: int             # f32 lanes of one register
    mr: int                # rows of the C tile
    nr: int                # columns of the C tile (a multiple of lanes)
    kc: int                # k block (rows of the packed panel of B)
    load: Procedure        # reg[0:lanes] = mem[0:lanes]
    store: Procedure       # mem[0:lanes] = reg[0:lanes]
    fma: Procedure         # reg[0:lanes] += a[0] * reg_b[0:lanes]

    def __post_init__(self):
        if self.nr % self.lanes:
            raise ValueError(f"{self.name}: NR={self.nr} is not a multiple "
                             f"of {self.lanes} lanes")
        text = str(self.algorithm)
        for cond in (f"N % {self.nr} == 0", f"K % {self.kc} == 0"):
            if f"assert {cond}" not in text:
                raise ValueError(f"{self.name}: algorithm "
                                 f"'{self.algorithm.name()}' does not assert "
                                 f"{cond}")

    @property
    def regs(self) -> int:
        """Registers per row of the C tile."""
        return self.nr // self.lanes

    @property
    def label(self) -> str:
        return f"{self.title} {self.mr}x{self.nr}"

    @property
    def kernel_name(self) -> str:
        return f"sgemm_{self.name}_{self.mr}x{self.nr}"

    def cpu_features(self) -> frozenset:
        """CPU features of the kernel's memory and instructions."""
        out = set(self.mem.cpu_features)
        for i in (self.load, self.store, self.fma):
            out |= i.cpu_features()
        return frozenset(out)


AVX512 = Isa(name="avx512", title="AVX-512", algorithm=sgemm_n64_k128,
             mem=_avx512.AVX512, lanes=16, mr=6, nr=64, kc=128,
             load=_avx512.mm512_loadu_ps, store=_avx512.mm512_storeu_ps,
             fma=_avx512.mm512_fmadd_bcst_ps)

AVX2 = Isa(name="avx2", title="AVX2", algorithm=sgemm_n16_k64,
           mem=_avx2.AVX2, lanes=8, mr=6, nr=16, kc=64,
           load=_avx2.mm256_loadu_ps, store=_avx2.mm256_storeu_ps,
           fma=_avx2.mm256_fmadd_bcst_ps)

#: best first (``run.py --isa auto`` takes the first the CPU has)
ISAS = {isa.name: isa for isa in (AVX512, AVX2)}


# ---------------------------------------------------------------------------
# the schedule

def stages(isa: Isa, p: Procedure = None):
    """[(description, procedure)] after each group of rewrites of
    ``isa.algorithm`` (or ``p``, an SGEMM with the same preconditions)."""
    MR, NR, KC, L = isa.mr, isa.nr, isa.kc, isa.lanes
    p = isa.algorithm if p is None else p
    out = [("the algorithm", p)]
    p = p.rename(isa.kernel_name)

    def step(what, q):
        out.append((what, q))
        return q

    # 1. k in blocks of KC, outermost: each k block is a rank-KC update of
    #    all of C
    p = p.split('k', KC, 'ko', 'k', tail='perfect')
    p = p.reorder('j', 'ko').reorder('i', 'ko')

    # 2. rows in blocks of MR; the last M % MR rows become a separate loop
    #    nest (tail='cut'), a 1 x NR kernel: one row of C (R_reg) and one
    #    row of B (RB_reg) staged as NR / L registers
    p = p.split('i', MR, 'io', 'ii', tail='cut')
    p = p.split('j #1', NR, 'rjo', 'rjj', tail='perfect')
    p = p.split('rjj', L, 'rjt', 'rji', tail='perfect')
    p = p.reorder('rji', 'k #1').reorder('rjt', 'k #1')
    p = p.stage_mem(p.find_loop('k #1'),
                    f'C[ii + {MR} * (M / {MR}), {NR}*rjo:{NR}*rjo+{NR}]',
                    'R_reg')
    p = p.divide_dim('R_reg', 0, L)
    p = p.split('i0', L, 'rl', 'rli', tail='perfect')     # load
    p = p.split('i0', L, 'rs', 'rsi', tail='perfect')     # store
    p = p.stage_mem(p.find_loop('rjt'),
                    f'B[{KC}*ko+k, {NR}*rjo:{NR}*rjo+{NR}]', 'RB_reg')
    p = p.divide_dim('RB_reg', 0, L)
    p = step(f"k blocks of {KC}; the last M % {MR} rows cut off: a 1x{NR} "
             f"kernel, staged",
             p.split('i0', L, 'rbl', 'rbli', tail='perfect'))

    # 3. main nest: ko, jo (NR columns), io (MR rows), and inside k, ii,
    #    jt (registers), ji (lanes)
    p = p.split('j', NR, 'jo', 'jj', tail='perfect')
    p = p.reorder('ii', 'jo')
    p = p.split('jj', L, 'jt', 'ji', tail='perfect')
    p = p.reorder('ji', 'k').reorder('jt', 'k').reorder('ii', 'k')
    p = step("tile: ko, jo, io, k, ii, jt, ji", p.reorder('io', 'jo'))

    # 4. the C tile, staged around the k block, cut into registers of L
    p = p.stage_mem(p.find_loop('k'),
                    f'C[{MR}*io:{MR}*io+{MR}, {NR}*jo:{NR}*jo+{NR}]', 'C_reg')
    p = p.divide_dim('C_reg', 1, L)
    p = p.split('i1', L, 'cl', 'cli', tail='perfect')     # load nest
    p = step(f"C tile staged as [{MR}, {NR // L}, {L}]",
             p.split('i1', L, 'cs', 'csi', tail='perfect'))  # store nest

    # 5. each k step: the row of B staged as NR / L registers
    p = p.stage_mem(p.find_loop('ii'),
                    f'B[{KC}*ko+k, {NR}*jo:{NR}*jo+{NR}]', 'B_reg')
    p = p.divide_dim('B_reg', 0, L)
    p = step(f"B row staged as [{NR // L}, {L}]",
             p.split('i1', L, 'bl', 'bli', tail='perfect'))

    # 6. pack B: the KC x NR panel each column block reads is staged, then
    #    given one slot per column block (expand_dim), so the packing loop
    #    can be split off (fission) and the rows swept outside the columns:
    #    per k block, all of B's KC x N block is packed once, as N / NR
    #    contiguous KC x NR panels (L2-resident); each MR x KC block of A
    #    then stays in L1 while the micro-kernel sweeps the panels
    p = p.stage_mem(p.find_loop('io'),
                    f'B[{KC}*ko:{KC}*ko+{KC}, {NR}*jo:{NR}*jo+{NR}]',
                    'B_pack')
    p = p.expand_dim('B_pack', f'N / {NR}', 'jo')
    p = p.lift_alloc('B_pack')
    p = p.fission_after(p.find_loop('i1'))
    p = p.reorder('jo #1', 'io')
    p = step(f"pack B per k block as N/{NR} panels of {KC}x{NR}; rows "
             f"outside columns", p.lift_alloc('B_pack'))

    # 7. into registers; every access to them becomes an instruction,
    #    except the load of the row of B, selected last (step 9): until then
    #    a register is written lane by lane, which has no C form, so the
    #    intermediate procedures are checked but never compiled
    for buf in ('C_reg', 'B_reg', 'R_reg', 'RB_reg'):
        p = p.set_memory(buf, isa.mem)
    for loop, instr in (('cli', isa.load), ('csi', isa.store),
                        ('ji', isa.fma), ('rli', isa.load),
                        ('rsi', isa.store), ('rbli', isa.load),
                        ('rji', isa.fma)):
        p = p.replace(p.find_loop(loop), instr)
    p = step(f"registers @ {isa.mem.__name__}: {isa.load.name()}, "
             f"{isa.store.name()}, {isa.fma.name()}", p)

    # 8. unroll the register loops: every register index becomes constant
    for loop in ('jt', 'ii', 'cl', 'i0', 'cs', 'i0', 'rjt', 'rl', 'rs',
                 'rbl'):
        p = p.unroll(loop)
    p = step("unroll the micro-kernels", p)

    # 9. the row of B: NR / L register loads
    p = p.replace(p.find_loop('bli'), isa.load)
    step(f"load the row of B with {isa.load.name()}", p.unroll('bl'))
    return out


def schedule(isa: Isa, p: Procedure = None) -> Procedure:
    """The fully scheduled kernel, named ``isa.kernel_name``."""
    return stages(isa, p)[-1][1]
