"""Intel AMX (Advanced Matrix Extensions) as a user library.

AMX is the CPU's own accelerator, with the shape of Exo's Gemmini example:
eight tile registers ``tmm0``..``tmm7`` (each at most 16 rows x 64 bytes),
a tile *configuration* loaded by ``ldtilecfg`` (rows and bytes per row of
each tile), and tile instructions that read that configuration.

- Memories ``AMX_TILE0`` .. ``AMX_TILE7`` (``AMX_TILE[t]``): a buffer in
  ``AMX_TILEt`` *is* tile register ``tmm t``. Its shape is ``[rows, cols]``
  or, for an operand in the VNNI layout, ``[rows, cols, g]`` (``g`` = 4
  int8 or 2 bf16 values of K side by side); the allocation checks
  ``rows <= 16`` and ``cols * g * sizeof(elem) <= 64`` (palette 1). C code
  never reads a tile: only the instructions below touch it.
- ``AmxConfig``: the configuration as ``@config`` state, one ``rowsT`` and
  one ``colsbT`` (bytes per row) field per tile. ``ldtilecfg`` is the
  instruction whose body writes all sixteen fields; schedules get there
  from plain config writes (``configwrite_at``/``bind_config`` + replace)
  and hoist it with the usual proofs, as on Gemmini. Every tile
  instruction asserts the fields of the tiles it uses, so a missing or
  wrong configuration is a scheduling error, never wrong code.
- Instructions (``tile_load``, ``tile_store``, ``tile_zero``, ``tdpbusd``,
  ``tdpbssd``) are made on demand per tile register and shape (the tile
  number is part of the machine instruction, an immediate), and cached.

Rules the compiler checks (docs/hw_amx.md; the tile memories' ``exclusive``
and ``clobbered_by`` hooks, checked at C generation): one live buffer per
tile register; a real configuration change (``ldtilecfg`` with different
values) zeroes every tile, so no write to ``AmxConfig`` that may change it
while a tile buffer is live. The C helper makes an ``ldtilecfg`` that does
not change the configuration (read back with ``sttilecfg``) a no-op, so
re-issuing the same configuration keeps the tiles.

The Linux kernel gives a process the AMX tile state only on request
(``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)``): compiled
callables make it before the first call (a ``RuntimeError`` when refused),
and the generated C makes it once itself (``abort()`` with a message when
refused) for C programs that call it directly.

Why one module of this size: it is the whole library a user imports, as
``avx512/lib.py`` is; the memories, the config, the C helper code and the
instruction makers share the tile-shape rules and the per-tile cache.
"""
from __future__ import annotations

import itertools
import linecache

# the generated instruction sources run in this module's globals: they use
# the types, ``instr``, ``DRAM``, ``seq`` and ``stride`` imported here
from exo_hl import (Memory, MemGenError, bf16, config, f32,  # noqa: F401
                    i8, i32, instr, ui8)
from exo_hl import DRAM, index, seq, stride  # noqa: F401
from exo_hl.core_ir.memory import const_value
from exo_hl.caches import memo

N_TILES = 8      # tile registers
MAX_ROWS = 16    # rows of a tile (palette 1)
MAX_COLSB = 64   # bytes per row of a tile (palette 1)

#: element size in bytes of each supported element type name
ELEM_BYTES = {"i8": 1, "ui8": 1, "i32": 4, "f32": 4, "bf16": 2}
_C_ELEM = {"int8_t": 1, "uint8_t": 1, "int32_t": 4, "float": 4,
           "uint16_t": 2}

_TILE_FEATURES = {"amx-tile"}
_INT8_FEATURES = {"amx-tile", "amx-int8"}
_BF16_FEATURES = {"amx-tile", "amx-bf16"}

# ---------------------------------------------------------------------------
# C helpers (include-guarded; one copy per generated file)

_INCLUDE = "#include <immintrin.h>\n#include <stdint.h>\n"

_HELPER = _INCLUDE + """
#ifndef EXO_HL_AMX_HELPER
#define EXO_HL_AMX_HELPER
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* gcc's _tile_loadd is an asm statement without a memory input: this
   compiler barrier keeps the stores that fill its source before it */
#define EXO_HL_AMX_FENCE() __asm__ __volatile__("" ::: "memory")
#ifndef EXO_HL_EMULATE_AMX
/* Linux gives a process the AMX tile state only on request; asked once */
static inline void exo_hl_amx_request_perm(void) {
#if defined(__linux__) && defined(__x86_64__)
    static _Atomic int done = 0;
    if (done) return;
    long ret;
    __asm__ __volatile__("syscall" : "=a"(ret)
                         : "a"(158L), "D"(0x1023L), "S"(18L)
                         : "rcx", "r11", "memory");
    if (ret != 0) {
        fprintf(stderr, "exo_hl AMX: the Linux kernel refused the AMX tile "
                "state (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) "
                "returned %ld)\\n", ret);
        abort();
    }
    done = 1;
#endif
}
#else
static inline void exo_hl_amx_request_perm(void) {}
#endif
/* ldtilecfg with palette 1 and these rows / bytes per row; skipped when
   the loaded configuration is already this one (a real ldtilecfg zeroes
   every tile). Its own target, as every function with CPU-specific
   instructions: a plain build on a CPU without AMX compiles it */
EXO_HL_TARGET("amx-tile")
static inline void exo_hl_amx_ldtilecfg(const int_fast32_t rows[8],
                                        const int_fast32_t colsb[8],
                                        int thread_entry) {
    unsigned char cfg[64], cur[64];
    if (thread_entry) {
        /* AmxConfig is per-thread state: an iteration of a par loop sets
           its thread's configuration to the values the config holds (those
           at the loop's entry); nothing when they are no valid
           configuration (never set: the body then uses no tile) */
        int any = 0;
        for (int t = 0; t < 8; t++) {
            if (rows[t] < 0 || rows[t] > 16 || colsb[t] < 0 ||
                colsb[t] > 64 || (rows[t] == 0) != (colsb[t] == 0))
                return;
            any |= rows[t] != 0;
        }
        if (!any)
            return;
    }
    exo_hl_amx_request_perm();
    memset(cfg, 0, sizeof cfg);
    cfg[0] = 1;
    for (int t = 0; t < 8; t++) {
        uint16_t c = (uint16_t)colsb[t];
        memcpy(cfg + 16 + 2 * t, &c, 2);
        cfg[48 + t] = (unsigned char)rows[t];
    }
    /* gcc's _tile_storeconfig/_tile_loadconfig tell the compiler of 8
       of the 64 bytes they write/read: barriers keep the other 56 */
    EXO_HL_AMX_FENCE();
    _tile_storeconfig(cur);
    EXO_HL_AMX_FENCE();
    if (memcmp(cur, cfg, 64) != 0) {
        EXO_HL_AMX_FENCE();
        _tile_loadconfig(cfg);
    }
}
#endif
"""

# ---------------------------------------------------------------------------
# memories


class AMX_TILE(Memory):
    """Base of the tile-register memories; ``AMX_TILE[t]`` is the memory of
    register ``tmm t`` (``AMX_TILE0`` .. ``AMX_TILE7``).

    >>> p = p.set_memory('c', AMX_TILE[0])      # c: i32[16, 16] -> tmm0
    """
    tile = -1
    cpu_features = frozenset(_TILE_FEATURES)

    def __class_getitem__(cls, t):
        return TILES[t]

    @classmethod
    def global_(cls):
        return _INCLUDE

    @classmethod
    def can_read(cls):
        return False

    @classmethod
    def exclusive(cls):
        """One register: C generation refuses two live buffers in it."""
        return True

    @classmethod
    def clobbered_by(cls):
        """A real ``ldtilecfg`` zeroes every tile: C generation refuses a
        configuration write, not provably the loaded values, while a tile
        buffer is live."""
        return (AmxConfig,)

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        name = cls.__name__
        if prim_type not in _C_ELEM:
            raise MemGenError(f"{srcinfo}: {name} holds int8, uint8, int32, "
                              f"float or bf16 elements, '{new_name}' is "
                              f"{prim_type}")
        dims = [const_value(s) for s in shape]
        if len(dims) not in (2, 3) or any(d is None for d in dims):
            raise MemGenError(f"{srcinfo}: {name} buffer '{new_name}' needs "
                              f"a constant shape [rows, cols] or [rows, "
                              f"cols, group], got "
                              f"[{', '.join(map(str, shape))}]")
        colsb = _C_ELEM[prim_type]
        for d in dims[1:]:
            colsb *= d
        if dims[0] > MAX_ROWS or colsb > MAX_COLSB:
            raise MemGenError(f"{srcinfo}: {name} buffer '{new_name}' is "
                              f"{dims[0]} rows x {colsb} bytes; a tile holds "
                              f"at most {MAX_ROWS} rows x {MAX_COLSB} bytes "
                              f"(palette 1)")
        # the name denotes the register's number (instructions use the
        # number itself: it is an immediate of the machine instruction)
        return f"enum {{ {new_name} = {cls.tile} }};  /* tmm{cls.tile} */"

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo):
        return ""

    @classmethod
    def window(cls, basetyp, baseptr, indices, strides, srcinfo):
        """The tile register's number (instructions address whole tiles)."""
        if any(const_value(i) != 0 for i in indices):
            raise MemGenError(f"{srcinfo}: {cls.__name__} buffer '{baseptr}' "
                              f"is one tile register, used whole (indices "
                              f"{', '.join(indices)})")
        return str(cls.tile)


def _tile_memory(t):
    return type(f"AMX_TILE{t}", (AMX_TILE,), {
        "tile": t, "__doc__": f"""Tile register tmm{t} (see ``AMX_TILE``).

    >>> p = p.set_memory('c', AMX_TILE{t})
    """})


AMX_TILE0, AMX_TILE1, AMX_TILE2, AMX_TILE3, AMX_TILE4, AMX_TILE5, \
    AMX_TILE6, AMX_TILE7 = TILES = tuple(_tile_memory(t) for t in range(8))

# ---------------------------------------------------------------------------
# configuration state


def _thread_entry(fields):
    """C that loads the configuration ``fields`` (C lvalues) hold into the
    running thread's tile unit (``@config(thread_entry=...)``)."""
    rows = ", ".join(fields[f"rows{t}"] for t in range(N_TILES))
    cols = ", ".join(fields[f"colsb{t}"] for t in range(N_TILES))
    return (f"exo_hl_amx_ldtilecfg((const int_fast32_t[8]){{{rows}}}, "
            f"(const int_fast32_t[8]){{{cols}}}, 1);")


@config(thread_entry=_thread_entry)
class AmxConfig:
    """The tile configuration (palette 1): rows and bytes per row of each
    tile register. ``ldtilecfg`` writes all sixteen fields. Per-thread
    state, as in the hardware: each iteration of a ``par`` loop that uses
    tiles loads the configuration the loop started with into its thread's
    tile unit (a no-op where it is loaded already).

    >>> p = configure_tiles(p, p.find_loop('io'), {0: (16, 64), 1: (16, 64)})
    """
    rows0: index
    rows1: index
    rows2: index
    rows3: index
    rows4: index
    rows5: index
    rows6: index
    rows7: index
    colsb0: index
    colsb1: index
    colsb2: index
    colsb3: index
    colsb4: index
    colsb5: index
    colsb6: index
    colsb7: index


FIELDS = tuple([f"rows{t}" for t in range(8)] +
               [f"colsb{t}" for t in range(8)])

# ---------------------------------------------------------------------------
# instructions made from source text (the tile number is an immediate of the
# machine instruction and part of each precondition, so each register gets
# its own instruction); the text is registered with linecache so @instr can
# read it like a file


_COUNTER = itertools.count()


def _define(src, name):
    filename = f"<exo_hl.hw_libs.amx:{name}:{next(_COUNTER)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True),
                                 filename)
    scope = dict(globals())
    exec(compile(src, filename, "exec"), scope)
    return scope[name]


def _shape_of(typ, shape, t=0):
    if not isinstance(t, int) or not 0 <= t < N_TILES:
        raise ValueError(f"a tile register is 0..7, not {t!r}")
    if typ not in ELEM_BYTES:
        raise ValueError(f"AMX tiles hold {', '.join(ELEM_BYTES)}, not "
                         f"{typ!r}")
    shape = tuple(int(s) for s in shape)
    if len(shape) not in (2, 3) or min(shape) < 1:
        raise ValueError(f"a tile shape is (rows, cols) or (rows, cols, "
                         f"group), got {shape}")
    colsb = ELEM_BYTES[typ]
    for d in shape[1:]:
        colsb *= d
    if shape[0] > MAX_ROWS or colsb > MAX_COLSB:
        raise ValueError(f"a tile is at most {MAX_ROWS} rows x {MAX_COLSB} "
                         f"bytes; {typ}{list(shape)} is {shape[0]} x {colsb}")
    return shape, colsb


def _dims(shape):
    return ", ".join(map(str, shape))


def _loops(shape, stmt, indent="    "):
    names = ["r", "c", "g"][:len(shape)]
    lines = []
    for d, (n, s) in enumerate(zip(names, shape)):
        lines.append(f"{indent}{'    ' * d}for {n} in seq(0, {s}):")
    inner = stmt.format(ix=", ".join(names))
    lines.append(f"{indent}{'    ' * len(shape)}{inner}")
    return "\n".join(lines)


def _src_asserts(arg, shape):
    out = [f"    assert stride({arg}, {len(shape) - 1}) == 1"]
    if len(shape) == 3:
        out.append(f"    assert stride({arg}, 1) == {shape[2]}")
    return "\n".join(out)


def _cfg_asserts(t, rows, colsb):
    return (f"    assert AmxConfig.rows{t} == {rows}\n"
            f"    assert AmxConfig.colsb{t} == {colsb}")


def _tag(typ, shape):
    return f"{typ}_{'x'.join(map(str, shape))}"


def tile_load(t, typ, shape, stream=False):
    """``tileloadd``: tile ``tmm t`` <- a ``typ[shape]`` block of memory
    whose rows are contiguous (``stride(src, -1) == 1``; a VNNI block
    ``[rows, cols, g]`` has rows of ``cols * g`` contiguous elements); the
    row stride is free. Precondition: the configuration of tile ``t`` is
    ``rows x colsb`` of exactly this shape. ``stream=True``:
    ``tileloaddt1``, the same load with a hint that the data will not be
    reused soon (same body; a GEMM loads its streamed operand so, which
    keeps the reused operand's block in L1).

    >>> p = p.replace(p.find_loop('i0'), tile_load(1, 'ui8', (16, 64)))
    """
    shape, colsb = _shape_of(typ, shape, t)
    return _tile_load(t, typ, shape, colsb, bool(stream))


@memo(maxsize=None)
def _tile_load(t, typ, shape, colsb, stream=False):
    esize = ELEM_BYTES[typ]
    op = "tileloaddt1" if stream else "tileloadd"
    intrinsic = "_tile_stream_loadd" if stream else "_tile_loadd"
    name = f"{op}_t{t}_{_tag(typ, shape)}"
    hint = ", stream=True" if stream else ""
    src = f'''
@instr("EXO_HL_AMX_FENCE(); {intrinsic}({{dst_data}}, &{{src_data}}, "
       "(long)({{src}}.strides[0]) * {esize});", _HELPER,
       cpu_features=_TILE_FEATURES)
def {name}(dst: [{typ}][{_dims(shape)}] @ AMX_TILE{t},
           src: [{typ}][{_dims(shape)}] @ DRAM):
    """{op}: tile tmm{t} <- a {typ}[{_dims(shape)}] block of memory
    (rows contiguous, any row stride); made by tile_load.

    >>> p = p.replace(p.find_loop('i0'), tile_load({t}, {typ!r}, {shape}{hint}))
    """
{_src_asserts("src", shape)}
{_cfg_asserts(t, shape[0], colsb)}
{_loops(shape, "dst[{ix}] = src[{ix}]")}
'''
    return _define(src, name)


def tile_store(t, typ, shape):
    """``tilestored``: a ``typ[shape]`` block of memory <- tile ``tmm t``
    (rows contiguous, any row stride); tile ``t`` configured to the shape.

    >>> p = p.replace(p.find_loop('i0 #1'), tile_store(0, 'i32', (16, 16)))
    """
    shape, colsb = _shape_of(typ, shape, t)
    return _tile_store(t, typ, shape, colsb)


@memo(maxsize=None)
def _tile_store(t, typ, shape, colsb):
    esize = ELEM_BYTES[typ]
    name = f"tilestored_t{t}_{_tag(typ, shape)}"
    src = f'''
@instr("_tile_stored({{src_data}}, &{{dst_data}}, "
       "(long)({{dst}}.strides[0]) * {esize});", _HELPER,
       cpu_features=_TILE_FEATURES)
def {name}(dst: [{typ}][{_dims(shape)}] @ DRAM,
           src: [{typ}][{_dims(shape)}] @ AMX_TILE{t}):
    """tilestored: a {typ}[{_dims(shape)}] block of memory <- tile tmm{t};
    made by tile_store.

    >>> p = p.replace(p.find_loop('i0'), tile_store({t}, {typ!r}, {shape}))
    """
{_src_asserts("dst", shape)}
{_cfg_asserts(t, shape[0], colsb)}
{_loops(shape, "dst[{ix}] = src[{ix}]")}
'''
    return _define(src, name)


def tile_zero(t, typ, shape):
    """``tilezero``: every element of tile ``tmm t`` (configured to
    ``shape``) is 0.

    >>> p = p.replace(p.find_loop('ii'), tile_zero(0, 'i32', (16, 16)))
    """
    shape, colsb = _shape_of(typ, shape, t)
    return _tile_zero(t, typ, shape, colsb)


@memo(maxsize=None)
def _tile_zero(t, typ, shape, colsb):
    name = f"tilezero_t{t}_{_tag(typ, shape)}"
    zero = "0.0" if typ in ("f32", "bf16") else "0"
    src = f'''
@instr("_tile_zero({{dst_data}});", _HELPER, cpu_features=_TILE_FEATURES)
def {name}(dst: [{typ}][{_dims(shape)}] @ AMX_TILE{t}):
    """tilezero: tile tmm{t} (configured as {typ}[{_dims(shape)}]) <- 0;
    made by tile_zero.

    >>> p = p.replace(p.find_loop('i0'), tile_zero({t}, {typ!r}, {shape}))
    """
{_cfg_asserts(t, shape[0], colsb)}
{_loops(shape, "dst[{ix}] = " + zero)}
'''
    return _define(src, name)


def _dp(mnemonic, intrinsic, feats, a_typ, b_typ, c_typ, g, c, a, b, m, n,
        k):
    """A tdp* instruction: ``k`` groups of ``g`` values of K (quads of
    bytes, pairs of bf16) per 4-byte column."""
    if len({c, a, b}) != 3 or not all(0 <= x < N_TILES for x in (c, a, b)):
        raise ValueError(f"{mnemonic}: three different tiles 0..7, got "
                         f"{(c, a, b)}")
    if not (1 <= m <= MAX_ROWS and 1 <= n <= 16 and 1 <= k <= 16):
        raise ValueError(f"{mnemonic}: m <= 16, n <= 16, k <= 16 groups, "
                         f"got {(m, n, k)}")
    name = f"{mnemonic}_t{c}_t{a}_t{b}_{m}x{n}x{k}"
    src = f'''
@instr("_tile_{intrinsic}({{c_data}}, {{a_data}}, {{b_data}});", _HELPER,
       cpu_features={sorted(feats)!r})
def {name}(c: [{c_typ}][{m}, {n}] @ AMX_TILE{c},
           a: [{a_typ}][{m}, {g * k}] @ AMX_TILE{a},
           b: [{b_typ}][{k}, {n}, {g}] @ AMX_TILE{b}):
    """{mnemonic} tmm{c}, tmm{a}, tmm{b}: c += a @ b, b in the VNNI layout
    (groups of {g} values of K); made by {mnemonic}.

    >>> p = p.replace(p.find_loop('ii'), {mnemonic}({c}, {a}, {b}))
    """
{_cfg_asserts(c, m, 4 * n)}
{_cfg_asserts(a, m, 4 * k)}
{_cfg_asserts(b, k, 4 * n)}
    for i in seq(0, {m}):
        for j in seq(0, {n}):
            for kq in seq(0, {k}):
                for kr in seq(0, {g}):
                    c[i, j] += a[i, {g} * kq + kr] * b[kq, j, kr]
'''
    return _define(src, name)


@memo(maxsize=None)
def tdpbusd(c, a, b, m=16, n=16, k=16):
    """``tdpbusd tmm c, tmm a, tmm b``: ``c[i, j] += sum over kq, kr of
    a[i, 4*kq + kr] * b[kq, j, kr]`` with ``a`` unsigned and ``b`` signed
    bytes, exact products, i32 wrap-around sums (in any order: integer).
    ``b`` is in the VNNI layout: K quads x N x 4.

    >>> p = p.replace(p.find_loop('ii'), tdpbusd(0, 4, 6))
    """
    return _dp("tdpbusd", "dpbusd", _INT8_FEATURES, "ui8", "i8", "i32", 4,
               c, a, b, m, n, k)


@memo(maxsize=None)
def tdpbssd(c, a, b, m=16, n=16, k=16):
    """``tdpbssd``: as ``tdpbusd`` with both ``a`` and ``b`` signed bytes.

    >>> p = p.replace(p.find_loop('ii'), tdpbssd(0, 4, 6))
    """
    return _dp("tdpbssd", "dpbssd", _INT8_FEATURES, "i8", "i8", "i32", 4,
               c, a, b, m, n, k)


@memo(maxsize=None)
def tdpbf16ps(c, a, b, m=16, n=16, k=16):
    """``tdpbf16ps tmm c, tmm a, tmm b`` (``k`` pairs of K): for each
    ``c[i, j]``, the products of the first elements of the pairs summed in
    one f32 sum, those of the second elements in another (each from 0, in
    order of ``kp``, one rounding per step; a product of two bf16 is exact
    in f32), then ``c[i, j] += even + odd``. This is the order the hardware
    computes in (measured on Sapphire Rapids: the Intel SDM's pseudocode,
    one sequential chain, disagrees with it), and the emulation's. ``b``
    is in the VNNI layout: K pairs x N x 2. The hardware also treats
    denormal inputs and results as zero (DAZ, FTZ), which the body does
    not: they agree on normal values and zeros (docs/hw_amx.md).

    >>> p = p.replace(p.find_loop('ii'), tdpbf16ps(0, 4, 6))
    """
    if len({c, a, b}) != 3 or not all(0 <= x < N_TILES for x in (c, a, b)):
        raise ValueError(f"tdpbf16ps: three different tiles 0..7, got "
                         f"{(c, a, b)}")
    if not (1 <= m <= MAX_ROWS and 1 <= n <= 16 and 1 <= k <= 16):
        raise ValueError(f"tdpbf16ps: m <= 16, n <= 16, k <= 16 pairs, got "
                         f"{(m, n, k)}")
    name = f"tdpbf16ps_t{c}_t{a}_t{b}_{m}x{n}x{k}"
    src = f'''
@instr("_tile_dpbf16ps({{c_data}}, {{a_data}}, {{b_data}});", _HELPER,
       cpu_features=_BF16_FEATURES)
def {name}(c: [f32][{m}, {n}] @ AMX_TILE{c},
           a: [bf16][{m}, {2 * k}] @ AMX_TILE{a},
           b: [bf16][{k}, {n}, 2] @ AMX_TILE{b}):
    """tdpbf16ps tmm{c}, tmm{a}, tmm{b}: c += a @ b in the hardware's order
    (even and odd elements of the K pairs in two f32 sums, then c += even
    + odd); made by tdpbf16ps.

    >>> p = p.replace(p.find_loop('ii'), tdpbf16ps({c}, {a}, {b}))
    """
{_cfg_asserts(c, m, 4 * n)}
{_cfg_asserts(a, m, 4 * k)}
{_cfg_asserts(b, k, 4 * n)}
    for i in seq(0, {m}):
        for j in seq(0, {n}):
            even: f32
            odd: f32
            even = 0.0
            odd = 0.0
            for kp in seq(0, {k}):
                even += a[i, 2 * kp] * b[kp, j, 0]
                odd += a[i, 2 * kp + 1] * b[kp, j, 1]
            c[i, j] += even + odd
'''
    return _define(src, name)


def _ldtilecfg():
    args = ", ".join(f"{f}: index" for f in FIELDS)
    body = "\n".join(f"    AmxConfig.{f} = {f}" for f in FIELDS)
    asserts = "\n".join(
        [f"    assert rows{t} <= {MAX_ROWS}" for t in range(8)] +
        [f"    assert colsb{t} <= {MAX_COLSB}" for t in range(8)] +
        [f"    assert (rows{t} > 0 or colsb{t} == 0) and "
         f"(colsb{t} > 0 or rows{t} == 0)" for t in range(8)])
    writes = " ".join(f"{{AmxConfig.{f}}} = {{{f}}};" for f in FIELDS)
    rows = ", ".join(f"{{AmxConfig.rows{t}}}" for t in range(8))
    cols = ", ".join(f"{{AmxConfig.colsb{t}}}" for t in range(8))
    template = (f"{writes} exo_hl_amx_ldtilecfg("
                f"(const int_fast32_t[8]){{{{{rows}}}}}, "
                f"(const int_fast32_t[8]){{{{{cols}}}}}, 0);")
    src = f'''
@instr({template!r}, _HELPER, cpu_features=_TILE_FEATURES)
def ldtilecfg({args}):
    """ldtilecfg: load the tile configuration (palette 1): rows, then bytes
    per row, of tiles 0..7 (an unused tile: 0 and 0; a tile with one of
    the two 0 is refused, as the hardware raises #GP). Reached from plain
    config writes by configure_tiles.

    >>> p = configure_tiles(p, p.find_loop('io'), {{0: (16, 64)}})
    """
{asserts}
{body}
'''
    return _define(src, "ldtilecfg")


ldtilecfg = _ldtilecfg()


def configure_tiles(p, stmt, tiles, before=True):
    """Insert ``ldtilecfg`` before (or after) ``stmt``: sixteen checked
    ``configwrite_at`` steps (tiles absent from ``tiles`` get 0 x 0), then
    one ``replace`` of the sixteen writes by the instruction.
    ``tiles``: ``{t: (rows, colsb)}``.

    >>> p = configure_tiles(p, p.find_loop('io'), {0: (16, 64), 4: (16, 64)})
    """
    vals = {}
    for t in range(N_TILES):
        r, c = tiles.get(t, (0, 0))
        vals[f"rows{t}"], vals[f"colsb{t}"] = r, c
    # Each new write is found by its place (next to the anchor, then next
    # to the write before it), never by its text: a write of the same
    # field elsewhere in the procedure would otherwise be taken for it.
    anchor = p.find(stmt) if isinstance(stmt, str) else p.forward(stmt)
    first = w = None
    for f in FIELDS:
        if w is None:
            p = p.configwrite_at(anchor, AmxConfig, f, str(vals[f]),
                                 before=before)
            at = p.forward(anchor)
            first = w = at.prev() if before else at.next()
        else:
            p = p.configwrite_at(w, AmxConfig, f, str(vals[f]))
            w = p.forward(w).next()
    writes = (p.forward(first), w)
    return p.replace(writes, ldtilecfg)


MEMORIES = TILES
CONFIGS = (AmxConfig,)
#: one instance of each kind of instruction, on the tiles the GEMM apps use
#: (the others are made by the factories on demand): for the reference
#: page, ``replace_all`` and the docstring tests
INSTRS = (ldtilecfg, tile_load(0, "i32", (16, 16)),
          tile_load(4, "ui8", (16, 64)), tile_load(6, "i8", (16, 16, 4)),
          tile_store(0, "i32", (16, 16)), tile_zero(0, "i32", (16, 16)),
          tdpbusd(0, 4, 6), tdpbssd(0, 4, 6),
          tile_load(0, "f32", (16, 16)), tile_load(4, "bf16", (16, 32)),
          tile_load(6, "bf16", (16, 16, 2)), tile_store(0, "f32", (16, 16)),
          tdpbf16ps(0, 4, 6))
