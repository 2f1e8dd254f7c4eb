"""Runtime dispatch: AMX first, then AVX-512 BF16/VNNI (apps/gemm_lowp).

``DISPATCH`` extends apps/gemm_lowp's table (a new table, the other left
as it is) with the AMX kernels ahead of the AVX-512 ones; ``choose`` picks
an entry for a set of CPU features without building anything, and
``choose_kernel`` builds the kernel it picks.

What the kernels compute: the int8 GEMMs agree exactly (integer sums).
The bf16 GEMMs are each bit-exact with their own algorithm, and the two
algorithms state different summation orders (the instructions sum in
different orders: tdpbf16ps two chains per 32-deep step, vdpbf16ps the
pairs one after the other, the odd element first), so the AMX and the
AVX-512 results may differ in the last bits. The AMX int8 kernel is
``gemm_u8s8_mtail`` (any M: the last M % 32 rows on AVX-512 VNNI inside
the same call, so it also needs ``avx512f``/``avx512vnni``, which every
AMX CPU has) and ``gemm_u8s8_ntail`` (any N % 32 == 0: the full 256-column
blocks and the last N % 256 columns are two calls of the any-M kernel on
windows, with column blocks of 256 and 32), so it needs N % 32 and K % 64;
the bf16 one is ``gemm_bf16_ntail`` (any M: the last M % 32 rows on
AVX-512F multiplies and adds in the algorithm's order, bit-exact with the
tiles' part, so it needs ``avx512f`` too; N % 32 == 0: two calls on
windows as for int8) and needs N % 32, K % 32. ``shape`` (M, N, K), when
given, skips an AMX entry whose kernel does not take that shape. ``threads`` picks the kernels whose column blocks are a par
loop (it was ignored for AMX: the one-thread kernel was built), ``tile``
goes to the AVX-512 builders only.
"""
from __future__ import annotations

from apps.gemm_lowp import schedule as lowp

AMX_FEATURES = {"u8s8": frozenset({"amx-tile", "amx-int8", "avx512f",
                                    "avx512vnni"}),
                "bf16": frozenset({"amx-tile", "amx-bf16", "avx512f"})}


def _amx_builder(kind):
    def build(threads, tile=None, shape=None):
        from apps.gemm_amx.schedule import (gemm_bf16_ntail,
                                            gemm_u8s8_ntail, schedule)
        return schedule(gemm_bf16_ntail if kind == "bf16"
                        else gemm_u8s8_ntail,
                        threads=bool(threads))
    return build


#: (kind) -> whether the AMX kernel takes (M, N, K) (its assertions)
AMX_SHAPES = {"u8s8": lambda M, N, K: N % 32 == 0 and K % 64 == 0,
              "bf16": lambda M, N, K: N % 32 == 0 and K % 32 == 0}

#: (kind) -> [(required CPU features, label, builder)], best first
_LABELS = {"u8s8": "amx-int8", "bf16": "amx-bf16"}
DISPATCH = {kind: [(AMX_FEATURES[kind], _LABELS[kind], _amx_builder(kind))]
            + list(entries) for kind, entries in lowp.DISPATCH.items()}


def choose(kind: str, features=None, shape=None):
    """(label, builder) of the first entry of ``DISPATCH[kind]`` whose CPU
    features ``features`` (default: this host's, where an AMX entry also
    needs Linux to grant the tile state) has and, for an AMX
    entry, whose kernel takes ``shape`` (M, N, K) when given;
    ``RuntimeError`` when none fits.

    >>> choose("u8s8", {"avx512f", "avx512vnni"})[0]
    'avx512-vnni'
    """
    from exo_hl.codegen_c.host_cpu import amx_permission, host_features
    for need, label, build in DISPATCH[kind]:
        if (shape is not None and label == _LABELS[kind]
                and not AMX_SHAPES[kind](*shape)):
            continue
        have = (host_features(need) if features is None
                else frozenset(need) & frozenset(features))
        if (have == frozenset(need) and features is None
                and "amx-tile" in need and amx_permission()):
            continue    # the CPU has AMX, the kernel refuses its state
        if have == frozenset(need):
            return label, build
    raise RuntimeError(f"no {kind} GEMM kernel for this CPU (needs one of "
                       f"{[sorted(n) for n, _, _ in DISPATCH[kind]]})")


def choose_kernel(kind: str, features=None, threads: bool = False,
                  tile=None, shape=None):
    """(label, procedure): the kernel ``choose`` picks, built (``tile``
    and ``shape`` go to the AVX-512 builders, which block for the L2 by
    shape; the AMX kernels have one shape)."""
    label, build = choose(kind, features, shape)
    return label, build(threads, tile, shape)
