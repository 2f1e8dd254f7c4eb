"""Tuning the conv schedule on this machine, and the parameters the app
runs with.

The schedule (``schedule.py``) takes its parameters from an ``Isa``
description; the ones searched here:

* ``tile``: the register tile, ``COLSxREGS`` (output columns x vector
  registers of output channels; the channel block OB is REGS x lanes).
  On the small-spatial ResNet layers (W = 7, 14, 28, 56) a tile of 7
  columns leaves no column tail, where the default 5 leaves 2 or 4
  columns to the slow 1 x OB tail tiles;
* ``group``: channel blocking, how many channel blocks share one pass
  over the input (their weights packed together, ``[G, 3, 3, IC, OB]``:
  the weight layout); only with the sizes fixed;
* ``fixed``: whether the kernel is specialized to the layer's sizes
  (``partial_eval``: constant strides and trip counts, no empty tails)
  or the general-size kernel;
* ``packed``: the weight layout. False: the kernel takes ``wt[3, 3, IC,
  OC]`` and packs each channel block (group) into a buffer on every call
  (a pass over all the weights per call: 9.4 MB at 7x7x512, as much
  memory traffic as the layer's input and output together). True: it
  takes the weights pre-packed, ``wp[OC / OB, 3, 3, IC, OB]``
  (``schedule.pack_weights``, done once per layer, as ONNX Runtime and
  oneDNN reorder their weights when a model is loaded; the bench times
  the packing apart); needs fixed sizes and OB dividing OC. With
  ``group`` > 1 the group's blocks then only change the loop order (the
  blocks under the column tiles, so a tile's input pixels serve G
  blocks while in L1);
* ``dynamic``: how the threads share the ``par`` loop's iterations
  (channel blocks or rows): False, fixed consecutive blocks, one per
  thread; True, one iteration at a time from a shared counter
  (``parallelize(..., dynamic=True)``, a ``par_dynamic`` loop), so a
  thread slowed by another process does not hold the others at the end
  of the parallel region.

``variant`` makes a description from a dict of them (``SchedulingError``
for a point the schedule refuses: a tile that needs more vector registers
than the ISA has, groups without fixed sizes); ``template`` schedules it;
``Bench`` times it on one layer; ``space`` is what ``exo-hl tune conv``
searches. Spatial blocking other than the column tile and the loop order
are not parameters yet (the schedule has one order: channel blocks, then
n, y, column tiles).

``configured(isa_name, sizes)`` is what the app runs for a layer: this
machine's record for that layer from the tuning database when there is
one, else a model default (``model_params``), with a note that says
which.
"""
from __future__ import annotations

import dataclasses

from exo_hl import SchedulingError
from exo_hl.tune import TuningDB, cache_levels, is_amd

from apps.conv.schedule import HALIDE_SIZES, ISAS, Isa, flops, schedule

#: bump when the schedule changes what a parameter means (3: par='rows'
#: shares the rows of every image at once, one parallel region per call
#: and channel group, where 2 had one per image)
SCHEDULE_VERSION = 3

#: vector registers per instruction set
VREGS = {"avx512": 32, "avx2": 16}

#: register tiles (COLS x REGS) per instruction set, the default first
TILES = {"avx512": ("5x4", "7x4", "7x3", "7x2", "14x2", "6x4", "4x4",
                    "4x6", "8x3"),
         "avx2": ("5x2", "7x2", "6x2", "3x3", "4x3", "2x4", "14x1")}

#: the model's input-channel block for layers whose weights leave the L2
KC_MODEL = 32

#: the model blocks the reduction (``kc``) for layers whose weights
#: exceed this many times the L2. Measured on the Intel Xeon (2 MiB L2)
#: kc helped 7x7x512 (9.4 MB: 4.5 L2s) and made no difference on
#: 14x14x256 (2.4 MB: 1.1 L2s); on AMD Zen 5 (1 MiB L2) 14x14x256 is
#: 2.25 L2s and there kc cost 1-4% (14x2 tile, side by side, loaded: N
#: = 1 1.03/1.03x ONNX Runtime with kc 32 and prefetch against
#: 1.05/1.04x without, N = 5 1.06/1.01x against 1.10/1.04x), while
#: 7x7x512 (9 L2s) kept it (1.14/1.05x against 1.03/1.06x). Twice the
#: L2 (the rule until session 10) cut between the Xeon's two points;
#: four times cuts between all four (8 MiB on the Xeon: 7x7x512 only)
KC_L2_FACTOR = 4

#: the ResNet-50 3x3 layers (output H = W, channels) of the bench
RESNET = ((56, 64), (28, 128), (14, 256), (7, 512))

SIZE_NAMES = ("N", "H", "W", "IC", "OC")


def sizes_dict(sizes) -> dict:
    """{N, H, W, IC, OC} from a dict or a 5-sequence."""
    if isinstance(sizes, dict):
        return {k: int(sizes[k]) for k in SIZE_NAMES}
    if isinstance(sizes, str):
        sizes = sizes.split(",")
    return dict(zip(SIZE_NAMES, (int(s) for s in sizes)))


def key(isa_name: str, sizes) -> str:
    """The tuning database key: app, instruction set, layer, version."""
    s = sizes_dict(sizes)
    return (f"conv.{isa_name}.{'x'.join(str(s[k]) for k in SIZE_NAMES)}"
            f".v{SCHEDULE_VERSION}")


def space(isa_name: str) -> dict:
    """The search space (``sizes`` is fixed per search)."""
    return {"isa": [isa_name], "tile": list(TILES[isa_name]),
            "group": [1, 2, 4], "fixed": [True, False],
            "packed": [True, False], "kc": [0, 32, 64, 128],
            "par": ["blocks", "rows", "split", "bands"],
            "bands": sorted({0, 2, 4, _cores(), 2 * _cores(),
                             4 * _cores()}),
            #  (more bands than cores, with dynamic: chunks of
            #  consecutive rows taken one at a time, locality of a band
            #  and the balance of 'rows' dynamic; for the tuner to try)
            "kc_at": ["image", "row"],
            "rows": [1, 2], "prefetch": [False, True],
            "dynamic": [False, True]}


def variant(isa_name: str, params: dict) -> Isa:
    """The description for ``params`` ({tile, group, fixed}; missing ones
    from the base description). Raises ``SchedulingError`` for a point
    the schedule cannot build well."""
    base = ISAS[isa_name]
    cols, regs = base.cols, base.regs
    if "tile" in params:
        try:
            cols, regs = (int(x) for x in str(params["tile"]).split("x"))
        except ValueError:
            raise SchedulingError(f"conv: tile {params['tile']!r} is not "
                                  f"COLSxREGS") from None
    if cols < 1 or regs < 1:
        raise SchedulingError(f"conv: tile {cols}x{regs} is empty")
    need = cols * regs * int(params.get("rows", 1)) + regs
    #                                    accumulators + one row of weights
    if need > VREGS[isa_name]:
        raise SchedulingError(
            f"conv: a {cols}x{regs} tile of {params.get('rows', 1)} row(s) "
            f"needs {need} vector registers ({need - regs} accumulators, "
            f"{regs} weights); "
            f"{base.title} has {VREGS[isa_name]}")
    group = int(params.get("group", 1 if not params.get("fixed", True)
                           else base.group))
    if group < 1:
        raise SchedulingError(f"conv: group {group} < 1")
    if group > 1 and not params.get("fixed", True):
        raise SchedulingError("conv: channel groups need fixed sizes "
                              "(the general kernel has no groups)")
    if params.get("packed", False) and not params.get("fixed", True):
        raise SchedulingError("conv: pre-packed weights need fixed sizes")
    if int(params.get("kc", 0)) and (not params.get("packed", False)
                                     or group != 1):
        raise SchedulingError("conv: kc blocking needs pre-packed weights "
                              "and group 1")
    if params.get("kc_at", "image") != "image" and not int(params.get("kc",
                                                                    0)):
        raise SchedulingError("conv: kc_at without kc (the same kernel as "
                              "kc_at='image')")
    if params.get("prefetch", False) and not int(params.get("kc", 0)):
        raise SchedulingError("conv: prefetch without kc (it fetches the "
                              "next kc block)")
    par = params.get("par", "blocks")
    if par in ("split", "bands") and (
            not params.get("packed", False) or int(params.get("kc", 0))
            or int(params.get("rows", 1)) > 1):
        raise SchedulingError(f"conv: par={par!r} needs pre-packed "
                              f"weights, no kc and 1-row tiles")
    if par != "bands" and int(params.get("bands", 0)):
        raise SchedulingError("conv: bands without par='bands' (the same "
                              "kernel as without)")
    if par == "bands" and int(params.get("bands", 0)) < 1:
        raise SchedulingError("conv: par='bands' needs bands >= 1")
    if int(params.get("rows", 1)) > 1 and not params.get("packed", False):
        raise SchedulingError("conv: tiles of several rows need pre-packed "
                              "weights")
    if not params.get("fixed", True) and par != "blocks":
        raise SchedulingError(f"conv: par={par!r} needs fixed sizes (the "
                              f"general kernel splits its blocks)")
    return dataclasses.replace(base, cols=cols, regs=regs, group=group)


def _cache_bytes(level: int, guess: int) -> int:
    """The size of this machine's cache ``level``, or ``guess`` when it
    does not say."""
    try:
        c = cache_levels().get(level)
        if c is not None and c.size > 0:
            return int(c.size)
    except Exception:   # noqa: BLE001 - no cache information: a guess
        pass
    return guess


def _l1_bytes() -> int:
    return _cache_bytes(1, 32 << 10)


def _l2_bytes() -> int:
    return _cache_bytes(2, 1 << 20)


def model_params(isa_name: str, sizes) -> dict:
    """A default without measurements: the tile that leaves the least
    work to the tail tiles (columns W % COLS and channels OC % OB run in
    narrower, slower tiles) while keeping enough accumulators to cover
    the FMA latency (two ports x 4-5 cycles, with margin: 45% of the
    vector registers; 7x2 ran as fast as 7x4 on 1x7x7x512, pre-packed)
    and whose block of packed weights (9 IC OB floats) fits half the L2,
    preferring a block OB that divides OC (the weights can then be
    pre-packed once instead of on every call);
    then the largest channel group whose packed weights fit half the L2
    and divide OC; the weights pre-packed when OB divides OC; threads on
    the channel groups when a thread's pass over a group fits its L2,
    else a band of rows (of every image: ``N H``) per core outside the
    groups, the rows of each group when there is one, or groups and rows
    in one loop when the groups do not divide evenly (``_par_model``,
    from the L2 size and the core count), shared out one at a time on a
    machine of several cores (``_dynamic_model``). A tile or group whose
    pass over the layer would push an input that fits the L2 out of it
    costs 0.9 (``_input_leaves_l2``: a 1 MiB L2). A layer whose weights
    exceed four times the L2 (``KC_L2_FACTOR``; 7x7x512: 9.4 MB) gets
    the reduction in blocks of ``KC_MODEL`` input channels instead of
    groups (``kc``). Sizes fixed."""
    s = sizes_dict(sizes)
    W, IC, OC = s["W"], s["IC"], s["OC"]
    lanes = ISAS[isa_name].lanes
    enough = 0.45 * VREGS[isa_name]      # accumulators that hide latency
    l2 = _l2_bytes()
    # the input rows a 14-column tile reads (3 rows of 16 pixels of IC
    # channels) fill half the L1 or more (IC >= 128 with 48 KiB): they are
    # not kept in L1 across the blocks that reuse them, and a tile of more
    # channels per pixel (7x4: each broadcast feeds 64 channels, 14x2: 32)
    # reads half the input per FMA; there the spilled accumulator of 7x4
    # (one, a load and a store per 28 FMAs; none since session 13,
    # schedule._weights_in_memory) costs less than it saves:
    # measured side by side (loaded; 1 thread, CPU clock, 16 interleaved
    # rounds, median of the per-round ratios to 14x2) 1.06-1.10x on
    # 1x14x14x256, 1.12x on 5x14x14x256, 1.03-1.15x on 5x28x28x128, 1.07x
    # on 1x28x28x128, and equal within 1% on the idle machine. That was
    # the Intel Xeon; on AMD Zen 5 (quiet, session 12, the bench's wall
    # clock, two runs, 1 and 2 threads) 14x2 ran 5x28x28x128 6-7% faster
    # than 7x4 (258-260 against 243 GFLOP/s on one thread, 516-518
    # against 483-488 on two), and 7x4 was the slowest tile of Halide's
    # layer: GCC's -march=native tunes for znver there (as the SGEMM
    # kernels' spills, apps/common/kernel_flags). So not on AMD (``_zen``)
    wide_input = 3 * 16 * IC * 4 >= _l1_bytes() // 2 and not _zen()
    inp = 4 * s["N"] * (s["H"] + 2) * (W + 2) * IC
    best, best_score = None, -1.0
    for tile in TILES[isa_name]:
        cols, regs = (int(x) for x in tile.split("x"))
        if cols * regs + regs > VREGS[isa_name]:
            continue
        ob = regs * lanes
        fx = ((W // cols) * cols + 0.4 * (W % cols)) / W
        fo = ((OC // ob) * ob + 0.5 * (OC % ob)) / OC
        score = fx * fo * min(1.0, cols * regs / enough)
        if cols * regs + regs + 1 > VREGS[isa_name] and not (
                isa_name == "avx512" and wide_input):   # no register left
            score *= 0.9     # for the broadcast: GCC spilled accumulators
        #                      (7x4 on AVX-512: 1-2 of 28; with par='rows'
        #                      0.42x ORT on 1x56x56x64, 14x2 1.08x). Since
        #                      session 13 such a tile reads its last weight
        #                      register from memory (schedule.
        #                      _weights_in_memory): no spill, 7x4 +6-24%;
        #                      on Zen 5 (loaded, 1 thread) it ties 14x2 on
        #                      28^2x128 and 14^2x256 (0.99-1.00x) and stays
        #                      behind on 1x56x56x64 (0.93x) and Halide's
        #                      layer (0.92x of 5x4): the penalty is kept
        if _input_leaves_l2(inp, 9 * IC * ob * 4,
                            4 * s["N"] * s["H"] * W * ob, l2):
            score *= 0.9
        if 9 * IC * ob * 4 > l2 // 2:    # a block's packed weights leave
            score *= 0.7                 # the L2 (slower than a 40% smaller
        #                                  tile: measured on 7x7x512)
        if OC % ob:                      # the weights cannot be pre-packed:
            score /= 1 + 15 / (s["N"] * s["H"] * W)   # packed per call
            #   (9 IC OC floats copied per 18 N H W IC OC flops; measured
            #   on 1x7x7x512: 0.71x ORT packing per call, 0.94x pre-packed)
        if score > best_score + 1e-9:
            best, best_score = (tile, ob), score
    tile, ob = best
    cols = int(tile.split("x")[0])
    if 9 * IC * OC * 4 > KC_L2_FACTOR * l2 and OC % ob == 0 \
            and IC % KC_MODEL == 0 and W % cols == 0:
        # the weights stream from L3 on every call (9.4 MB at 7x7x512):
        # blocks of KC_MODEL input channels, each [3, 3, kc, OB] block
        # read once and kept in L1 while every pixel of the image uses it
        # (the stream spread evenly over the call instead of bursts at the
        # start of each channel block); measured (1 thread, CPU time,
        # loaded) on 7x7x512: 0.78-0.92x ONNX Runtime against 0.70-0.84x
        # (N = 1), 1.06x against 0.96x (N = 5); on 14x14x256 (2.4 MB)
        # no difference, so not below four times the L2 (KC_L2_FACTOR)
        # and each block's tiles prefetch the next block into L2 (the
        # hardware prefetchers stop at its 4 KiB pieces): 0.89 vs 0.81x and
        # 1.08 vs 0.79x ORT on 1x7x7x512 in two same-run pairs, 1 thread
        # (KC_L2_FACTOR: why four times the L2, not twice)
        tile = _kc_tile(isa_name, W, OC) or tile
        return {"tile": tile, "group": 1, "fixed": True, "packed": True,
                "kc": KC_MODEL, "par": "blocks", "prefetch": True,
                "dynamic": _dynamic_model(flops(**s) * ob / OC)}
    group = 1
    for g in (4, 2):
        if OC % (g * ob) == 0 and 9 * IC * g * ob * 4 <= l2 // 2 \
                and not _input_leaves_l2(
                    inp, 9 * IC * g * ob * 4,
                    4 * s["N"] * s["H"] * W * g * ob, l2):
            group = g
            break
    N, H, t = s["N"], s["H"], _cores()
    wg, outg = 9 * IC * group * ob * 4, 4 * N * H * W * group * ob
    par = _par_model(OC // (group * ob), N * H, t,
                     own_bytes=inp + wg + outg,
                     shared_bytes=(inp + outg) // t + wg, l2=l2,
                     prepacked=OC % ob == 0)
    iters = OC // (group * ob) * (1 if par == "blocks" else N * H)
    #     (rows: one parallel loop of N H rows per channel group)
    out = {"tile": tile, "group": group, "fixed": True,
           "packed": OC % ob == 0, "par": par,
           "dynamic": par not in ("split", "bands") and
           _dynamic_model(flops(**s) / max(1, iters))}
    #  (a split loop stays static: taken one row at a time, the groups of
    #  both threads would interleave and each read all the weights; bands
    #  are one per thread)
    if par == "bands":
        out["bands"] = t
    return out


def _zen() -> bool:
    """Whether this CPU is an AMD core (``model_params``' wide-input rule
    was measured on the Intel Xeon and reversed on Zen 5)."""
    return is_amd()


def _input_leaves_l2(inp: int, block_weights: int, block_out: int,
                     l2: int) -> bool:
    """Whether the input of a layer (``inp`` bytes), small enough to stay
    in the L2 across the channel blocks that each read all of it (at most
    half the L2), is pushed out during a block's pass by the block's
    packed weights (``block_weights``) and the output it writes
    (``block_out``; written lines pass through the cache too): all three
    together more than 7/8 of the L2 (the rest: the stack, the lines
    of other data and the ways a set-associative cache loses). Then each
    block reads the input again from L3, and a block of fewer channels
    that keeps it in L2 wins, though it reads the input twice as often
    per FMA (see the wide-input rule of ``model_params``).

    The rule of a 1 MiB L2 (AMD Zen 5): measured there side by side
    (loaded, not a result; apps/conv/README.md), 1 thread, 1x28x28x128
    (input 460 KB; a 7x4 block's pass 955 KB of 917, 14x2's 707 KB)
    14x2 1.15-1.18x ONNX Runtime against 0.99-1.00x for 7x4 and
    1.04-1.10x for 14x2 group 2 (the 7x4 block's 64 channels again);
    1x14x14x256 (262 KB; 7x4 901 KB, 14x2 582 KB) 14x2 1.04-1.05x
    against 0.96-0.98x. On the Intel Xeon's 2 MiB L2 (7/8: 1835 KB) the
    same layers fit with 7x4, and so do the groups it picks
    (1x56x56x64's group 2 of 14x2: 1811 KB; AVX2 5x7x7x512's group 2
    of 6x2: 1451 KB), so nothing changes there. With N = 5 the ResNet
    inputs (all but 7x7x512's) do not fit half the L2 and the rule does
    not apply (5x28x28x128 takes 14x2 on Zen 5 by ``_zen``)."""
    return inp <= l2 // 2 and inp + block_weights + block_out > 7 * l2 // 8


def _kc_tile(isa_name: str, W: int, OC: int):
    """The tile for the reduction in kc blocks: the most accumulators
    among the tiles with no column tail whose block OB divides OC. There
    the L2 penalty above does not apply (the block kept in cache is the
    [3, 3, kc, OB] slice, 73 KiB at 7x64), and a wider block loads fewer
    weights and broadcasts per FMA (7x4: 11 loads per 28 FMAs, 7x2: 9 per
    14). Measured on 7x7x512, 1 thread, pre-packed, kc 32, prefetch,
    side by side with ONNX Runtime (loaded): N = 1, 7x4 1.04/1.10/1.17/
    1.13x against 7x2 0.93/0.98/1.12/1.10x; N = 5, 1.11/1.12/1.17/1.18x
    against 1.12/1.19/1.14/1.14x. None: no such tile."""
    best, best_acc = None, 0
    for tile in TILES[isa_name]:
        cols, regs = (int(x) for x in tile.split("x"))
        ob = regs * ISAS[isa_name].lanes
        spare = 1 if isa_name == "avx2" else 0   # a register for the
        #          broadcast on AVX2; a full AVX-512 tile (7x4) reads its
        #          last weight register from memory instead
        #          (schedule._weights_in_memory; GCC kept an accumulator
        #          on the stack before: 2-3% slower on 7x7x512)
        if (W % cols or OC % ob
                or cols * regs + regs + spare > VREGS[isa_name]
                or cols * regs <= best_acc):
            continue
        best, best_acc = tile, cols * regs
    return best


def _par_model(blocks: int, rows: int, threads: int = None,
               own_bytes: int = 0, shared_bytes: int = 0,
               l2: int = None, prepacked: bool = True) -> str:
    """'blocks', 'split', 'bands' or 'rows': how the t cores share the
    ``blocks`` channel groups of ``rows`` rows (N H) each.

    A thread that owns groups (``blocks`` or ``split``) reads only their
    weights, but all the input for each: one pass of a group touches
    ``own_bytes`` (the whole input, the group's weights, its output
    channels). Threads sharing the rows each read all the weights and
    their share of the input and output: ``shared_bytes``. So the groups
    go to the threads when there are at least t of them and a pass's
    ``own_bytes`` fit the L2 (or the rows' would not fit either):
    ``blocks`` when t divides them, else ``split`` (groups and rows in
    one loop: the shares differ by at most a row, where 3 groups on 2
    threads gave 2 and 1). With at least t groups whose pass does not
    fit but whose rows' share does: ``bands``, a band of rows per thread
    outside the groups (its input stays in its L2 across the groups, one
    par loop with no barrier per group). With fewer groups than threads
    the rows are shared: ``rows`` for one group, ``split`` for more (one
    par loop instead of one per group). ``prepacked=False`` (weights packed
    per call, which 'split' and 'bands' cannot do): the loop whose
    iterations spread more evenly (ceil(n / t) / (n / t), the blocks
    first on a tie)."""
    t = threads or _cores()
    waste = lambda n: -(-n // t) * t / n if n else float("inf")
    if not prepacked or t <= 1:
        return "rows" if waste(rows) < waste(blocks) else "blocks"
    l2 = _l2_bytes() if l2 is None else l2
    if blocks >= t:
        if own_bytes <= l2 or shared_bytes > l2:
            return "blocks" if blocks % t == 0 else "split"
        return "bands"
    return "rows" if blocks == 1 else "split"


def _cores() -> int:
    import os
    return os.cpu_count() or 1


#: the least work (flops) of one iteration of a ``par`` loop for which
#: the model shares the iterations dynamically: one atomic increment of a
#: counter two cores contend for costs about 0.1 us, 1% of the 10 us such
#: an iteration takes at 100 GFLOP/s
DYNAMIC_MIN_FLOPS = 1e6


def _dynamic_model(iteration_flops: float, threads: int = None) -> bool:
    """Whether the threads take the ``par`` loop's iterations one at a
    time (``dynamic``): on a machine of more than one core, for
    iterations coarse enough that the shared counter costs nothing. On a
    machine shared with other processes a thread is descheduled now and
    then; with fixed blocks the other waits for it at the end of the
    region (measured: see apps/conv/README.md, "Two threads")."""
    t = threads or _cores()
    return t > 1 and iteration_flops >= DYNAMIC_MIN_FLOPS


def label(isa: Isa, params: dict) -> str:
    out = (f"{isa.title} {isa.cols}x{isa.ob} tile, group {isa.group}, "
           f"{'fixed sizes' if params.get('fixed', True) else 'general'}")
    if params.get("packed"):
        out += ", pre-packed weights"
    if params.get("kc"):
        out += f", kc {params['kc']}"
        if params.get("kc_at") == "row":
            out += " per row"
    if params.get("par") in ("rows", "split"):
        out += f", par {params['par']}"
    if params.get("par") == "bands":
        out += f", par {params.get('bands')} bands"
    if params.get("prefetch"):
        out += ", prefetch"
    if params.get("dynamic"):
        out += ", dynamic par"
    if int(params.get("rows", 1)) > 1:
        out += f", tiles of {params['rows']} rows"
    return out


#: every parameter ``variant`` and ``build`` read: a tuning record
#: naming another (renamed without a new ``SCHEDULE_VERSION``) is not
#: used, since they would run its default in its place
PARAMS = frozenset({"isa", "sizes", "tile", "group", "fixed", "packed",
                    "kc", "par", "bands", "kc_at", "rows", "prefetch",
                    "dynamic"})


#: where ``configured`` takes the parameters from
SOURCES = ("auto", "model", "fixed")


def configured(isa_name: str, sizes, source: str = "auto"):
    """(params, Isa, note): what the app runs for a layer. ``source``:
    'auto' (this machine's tuning record for the layer, else the model),
    'model', or 'fixed' (the base description, general kernel)."""
    if source not in SOURCES:        # (a typo ran the model, saying
        raise ValueError(             # "model requested")
            f"params source {source!r}: one of {', '.join(SOURCES)}")
    if source == "fixed":
        params = {"fixed": False, "group": 1}
        isa = variant(isa_name, params)
        return params, isa, f"{label(isa, params)}: the fixed schedule"
    k = key(isa_name, sizes)
    found = TuningDB().lookup(k) if source == "auto" else None
    if found is not None and found.record is not None:
        try:
            params = dict(found.record["params"])
            unknown = sorted(set(params) - PARAMS)
            if unknown:   # (renamed since: variant would drop them)
                raise ValueError(f"parameters this schedule does not "
                                 f"know: {', '.join(unknown)}")
            isa = variant(isa_name, params)
            return params, isa, f"{label(isa, params)}: {found.note}"
        except (SchedulingError, KeyError, TypeError, ValueError) as e:
            why = f"tuned record unusable ({e})"
    else:
        why = found.note if found is not None else "model requested"
    params = model_params(isa_name, sizes)
    isa = variant(isa_name, params)
    return params, isa, f"{label(isa, params)} from the model ({why})"


def build(isa_name: str, params: dict, sizes):
    """The scheduled kernel for ``params`` on a layer of ``sizes`` (the
    general-size kernel when ``params['fixed']`` is false)."""
    isa = variant(isa_name, params)
    if params.get("fixed", True):
        return schedule(isa, sizes_dict(sizes),
                        packed=bool(params.get("packed", False)),
                        kc=int(params.get("kc", 0)),
                        par=str(params.get("par", "blocks")),
                        kc_at=str(params.get("kc_at", "image")),
                        rows=int(params.get("rows", 1)),
                        prefetch=bool(params.get("prefetch", False)),
                        dynamic=bool(params.get("dynamic", False)),
                        bands=int(params.get("bands", 0)))
    return schedule(isa, dynamic=bool(params.get("dynamic", False)))


def valid(params: dict):
    """None when ``params`` describe a kernel ``build`` can schedule, else
    why not (e.g. ``prefetch`` or ``kc_at`` without ``kc``): the search
    skips such a point before building it (``tune(valid=)``)."""
    try:
        variant(params["isa"], params)
    except SchedulingError as e:
        return str(e)
    return None


def template(params: dict):
    """The scheduled conv for ``params`` (``isa``, ``sizes`` as
    N,H,W,IC,OC, and the searched ones)."""
    return build(params["isa"], params, params["sizes"])


class Bench:
    """GFLOP/s of a compiled candidate on its layer: best of ``reps``
    samples on ``threads`` threads, after a check against the float64
    reference (a wrong result raises: recorded as crashed, which a
    checked schedule never should be). Picklable, as ``tune`` needs."""

    def __init__(self, threads=1, reps=3, clock="cpu"):
        self.threads = threads
        self.reps = reps
        self.clock = clock

    def __call__(self, compiled, params):
        import numpy as np

        from apps.common.aligned import aligned_empty
        from apps.common.blas_env import set_openmp_threads
        from apps.common.timing import best_times
        from apps.conv.api import RawKernel
        from apps.conv.reference import reference
        set_openmp_threads(self.threads)
        kernel = RawKernel(compiled)
        s = sizes_dict(params["sizes"])
        sizes = tuple(s[k] for k in SIZE_NAMES)
        N, H, W, IC, OC = sizes
        rng = np.random.default_rng(0)
        inp = rng.integers(-2, 3, (N, H + 2, W + 2, IC)).astype(np.float32)
        wt = rng.integers(-2, 3, (3, 3, IC, OC)).astype(np.float32)
        bias = rng.integers(-2, 3, OC).astype(np.float32)
        out = aligned_empty((N, H, W, OC))
        want = reference(inp, wt, bias)
        wt = kernel.prepare(wt)       # pre-packed: once, not timed
        kernel(sizes, inp, wt, bias, out)
        if not np.array_equal(out, want):
            raise AssertionError("the kernel's result differs from the "
                                 "reference")
        (t,) = best_times((lambda: kernel(sizes, inp, wt, bias, out),),
                          self.reps, self.clock, self.threads)
        return flops(*sizes) / t / 1e9


def parse_sizes(text: str) -> dict:
    """'N,H,W,IC,OC', 'halide', or 'resnetH' / 'resnetH:N' (a ResNet-50
    layer of output H x H, batch N, default 1)."""
    text = str(text)
    if text == "halide":
        return dict(HALIDE_SIZES)
    if text.startswith("resnet"):
        h, _, n = text[6:].partition(":")
        for hw, c in RESNET:
            if hw == int(h):
                return sizes_dict((int(n or 1), hw, hw, c, c))
        raise ValueError(f"no ResNet-50 layer of {h}x{h}: "
                         f"{', '.join(str(r[0]) for r in RESNET)}")
    vals = [int(x) for x in text.split(",")]
    if len(vals) != 5 or min(vals) < 1:
        raise ValueError(f"sizes {text!r}: write N,H,W,IC,OC >= 1")
    return sizes_dict(vals)


#: the template's defaults of the searched parameters (``variant``):
#: what a point that does not set them runs
UNSET = {"bands": 0, "kc": 0, "kc_at": "image", "rows": 1,
         "prefetch": False, "par": "blocks", "dynamic": False,
         "group": 1, "fixed": True, "packed": False}


def tune_spec(options: dict) -> dict:
    """What ``exo-hl tune conv`` searches. Options: ``--isa``,
    ``--threads``, ``--option sizes=resnet14`` (or ``halide``,
    ``resnet7:5``, ``N,H,W,IC,OC``; default Halide's layer), ``--option
    reps=3``, ``--option clock=cpu|wall``. The model's point and the
    default tile are tried first."""
    from apps.conv.api import choose_isa
    isa, emulated, note = choose_isa(options.get("isa", "auto"))
    if isa is None:
        raise ValueError(note)
    if emulated:
        raise ValueError(f"{isa.name} is emulated on this CPU: timings "
                         f"would mean nothing")
    threads = int(options.get("threads", 1))
    sizes = parse_sizes(options.get("sizes", "halide"))
    sz = ",".join(str(sizes[k]) for k in SIZE_NAMES)
    sp = space(isa.name)
    sp["sizes"] = [sz]
    # every parameter named (``tune`` refuses a point that leaves one
    # out: it would be drawn at random from the space); those the model
    # does not set take the template's defaults, as the app runs them
    start = dict(UNSET, **model_params(isa.name, sizes), isa=isa.name,
                 sizes=sz)
    base = dict(UNSET, isa=isa.name, sizes=sz, tile=TILES[isa.name][0],
                group=1, fixed=True, packed=False)
    return {"template": template, "space": sp,
            "bench": Bench(threads, int(options.get("reps", 3)),
                           options.get("clock", "cpu" if threads == 1
                                       else "wall")),
            "key": key(isa.name, sizes), "units": "GFLOP/s",
            "valid": valid,
            "initial": [start] + ([base] if base != start else []),
            "about": (f"conv, {isa.title} ({note}), {threads} thread(s), "
                      f"layer N,H,W,IC,OC = {sz}, GFLOP/s")}
