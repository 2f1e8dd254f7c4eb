"""The Python entry point: ``conv(inp, wt, bias)`` on the best kernel this
CPU runs.

    from apps.conv.api import conv
    out = conv(inp, wt, bias)          # a new out[N, H, W, OC]
    conv(inp, wt, bias, out)           # into a given array

float32, C-contiguous: ``inp[N, H + 2, W + 2, IC]`` (NHWC), ``wt[3, 3, IC,
OC]``, ``bias[OC]``, ``out[N, H, W, OC]`` (NHWC, writeable, not
overlapping the inputs), any sizes >= 1 and below 2**31 (the checks of
``apps/common/raw_call``, which the direct C call skips).
``out = relu(bias + conv3x3(inp, wt))``, stride 1, no padding. The kernel
is scheduled and compiled on first use per instruction set (then cached).
``isa='auto'`` takes the best instruction set the CPU has (AVX-512, else
AVX2); naming one the CPU lacks is an error unless emulation is on
(``EXO_HL_EMULATE=1``). The kernels run on ``OMP_NUM_THREADS`` threads.

``params='auto'`` (or ``'model'``) runs instead a kernel specialized to the
layer's sizes with this machine's tuning record for them, else the model's
default (``apps/conv/tuning.py``; ``configured_kernel`` also returns the
note that says which); it is scheduled and compiled on first use per layer.
"""
from __future__ import annotations

import functools

from apps.common import isa_choice as _common_isa
from apps.common.aligned import aligned_empty
from apps.common.raw_call import (check_no_overlap, float32_array,
                                   raw_function)
from apps.conv.schedule import ISAS, schedule


#: (isa, emulated, note) or (None, None, one-line error), for a name
choose_isa = _common_isa.chooser(ISAS)


@functools.lru_cache(maxsize=None)
def procedure(isa_name: str):
    """The general-size kernel scheduled for an ISA."""
    return schedule(ISAS[isa_name])


class RawKernel:
    """A compiled conv kernel called straight through ctypes, without the
    compiled callable's per-call argument checks (``conv`` checks once).
    Wraps a ``compile()`` result; its size arguments (none for a
    size-specialized kernel) come first, then the four arrays. A kernel
    of ``conv_packed`` (argument ``wp``) takes the weights pre-packed:
    ``prepare(wt)`` makes them (once per layer), else returns ``wt``."""

    def __init__(self, compiled):
        self.compiled = compiled
        names = [str(a.name) for a in compiled.proc.args]
        self.packed_ob = None
        if "wp" in names:
            self.packed_ob = int(compiled.proc.args[names.index("wp")]
                                 .type.hi[-1].val)
        self.n_sizes = len(compiled.proc.args) - 4
        # the sizes are passed as a prefix of (N, H, W, IC, OC)
        lib, self._fn, self._check = raw_function(
            compiled, self.n_sizes, 4,
            ("N", "H", "W", "IC", "OC")[:self.n_sizes]
            + ("inp", "wp" if self.packed_ob is not None else "wt", "bias", "out"))
        self._lib = lib

    def prepare(self, wt):
        """The weights as this kernel reads them (pre-packed or not)."""
        if self.packed_ob is None:
            return wt
        from apps.conv.schedule import pack_weights
        return pack_weights(wt, self.packed_ob)

    def __call__(self, sizes, inp, wt, bias, out):
        self._check(self._fn(None, *sizes[:self.n_sizes], inp.ctypes.data,
                             wt.ctypes.data, bias.ctypes.data,
                             out.ctypes.data))


@functools.lru_cache(maxsize=None)
def compiled(isa_name: str):
    """``procedure(isa_name)`` compiled (a ``RawKernel``)."""
    return RawKernel(procedure(isa_name).compile())


@functools.lru_cache(maxsize=None)
def configured_kernel(isa_name: str, sizes: tuple, source: str = "auto"):
    """(RawKernel, note): the kernel for a layer of ``sizes`` (N, H, W,
    IC, OC) with this machine's tuned parameters, else the model's
    (``tuning.configured``); the note says which."""
    from apps.conv import tuning
    params, _, note = tuning.configured(isa_name, sizes, source)
    return RawKernel(tuning.build(isa_name, params, sizes).compile()), note


def conv(inp, wt, bias, out=None, *, isa="auto", params=None):
    """``out = relu(bias + conv3x3(inp, wt))`` (NHWC, no padding); returns
    ``out`` (a new array when not given). ``params``: None (the
    general-size kernel), 'auto' or 'model' (see the module docstring)."""
    inp = float32_array("conv", inp, "inp", 4)
    wt = float32_array("conv", wt, "wt", 4)
    bias = float32_array("conv", bias, "bias", 1)
    N, H2, W2, IC = inp.shape
    if H2 < 3 or W2 < 3:
        raise ValueError(f"conv: inp is {H2}x{W2}, smaller than the 3x3 "
                         f"kernel")
    H, W = H2 - 2, W2 - 2
    if wt.shape[:3] != (3, 3, IC):
        raise ValueError(f"conv: wt is {wt.shape}, expected (3, 3, {IC}, OC)")
    OC = wt.shape[3]
    if bias.shape != (OC,):
        raise ValueError(f"conv: bias is {bias.shape}, expected ({OC},)")
    if out is None:
        out = aligned_empty((N, H, W, OC))    # (on a cache line: no
        #                                         store straddles two)
    out = float32_array("conv", out, "out", 4, written=True)
    if out.shape != (N, H, W, OC):
        raise ValueError(f"conv: out is {out.shape}, expected "
                         f"{(N, H, W, OC)}")
    check_no_overlap("conv", out, "out", inp, wt, bias)
    chosen, _, note = choose_isa(isa)
    if chosen is None:
        raise RuntimeError(f"conv: {note}")
    sizes = (N, H, W, IC, OC)
    if params is None:
        kernel = compiled(chosen.name)
    elif params in ("auto", "model"):
        kernel = configured_kernel(chosen.name, sizes, params)[0]
    else:
        raise ValueError(f"conv: params={params!r}: None, 'auto' or "
                         f"'model'")
    kernel(sizes, inp, kernel.prepare(wt), bias, out)   # (packs per call:
    return out              # keep configured_kernel's prepare(wt) for speed)
