"""Instruction counts of the hottest loop in compiled assembly.

qemu-user runs ARM and RISC-V code correctly but says nothing about its
speed, so the apps report what the compiler made of the inner loop: the
instructions of the innermost loop that holds the most vector
floating-point arithmetic, per floating-point operation it performs.
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

_LABEL = re.compile(r"^(\.?L\w+|\w+):")
_BRANCH = re.compile(r"^\s+(b(\.\w+)?|cbn?z|tbn?z|beq|bne|blt|bge|bltu|"
                     r"bgeu|bnez|beqz|bgtz|blez|bgt|ble|j)\s+(.*)$")


def assembly(c_text, compiler, flags, header=None, stem="k"):
    """``compiler flags -S`` of the C text (header written beside it)."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / f"{stem}.c").write_text(c_text)
        if header is not None:
            (Path(d) / f"{stem}.h").write_text(header)
        subprocess.run(compiler + flags + ["-S", "-o", "k.s", f"{stem}.c"],
                       cwd=d, check=True, capture_output=True)
        return (Path(d) / "k.s").read_text()


def _instructions(lines):
    return [ln for ln in lines if ln.startswith("\t") and
            not ln.strip().startswith(".") and ln.strip()]


def hottest_loop(asm, vector_ops):
    """(mnemonic Counter, instruction lines) of the innermost backward-
    branch loop with the most ``vector_ops`` mnemonics."""
    lines = asm.splitlines()
    labels = {}
    for n, ln in enumerate(lines):
        m = _LABEL.match(ln)
        if m:
            labels[m.group(1)] = n
    loops = []
    for n, ln in enumerate(lines):
        m = _BRANCH.match(ln)
        if not m:
            continue
        target = m.group(3).split(",")[-1].strip()
        if target in labels and labels[target] < n:
            loops.append((labels[target], n))
    best = None
    for lo, hi in loops:
        if any(lo < a and b < hi for a, b in loops if (a, b) != (lo, hi)):
            continue                      # not innermost
        ins = _instructions(lines[lo:hi + 1])
        ops = sum(1 for i in ins if i.split()[0] in vector_ops)
        if best is None or ops > best[0]:
            best = (ops, ins)
    if best is None:
        raise ValueError("no loop found in the assembly")
    return Counter(i.split()[0] for i in best[1]), best[1]
