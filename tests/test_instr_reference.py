"""The generated instruction reference pages cover every instruction of each
x86 library, and what they say is read from the library."""
from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
instr_reference = importlib.import_module("instr_reference")


@pytest.mark.parametrize("lib", ["avx2", "avx512"])
def test_reference_lists_every_instruction_with_its_intrinsics(lib):
    mod = importlib.import_module(f"exo_hl.hw_libs.{lib}")
    got = instr_reference.entries(mod)
    assert [e["name"] for e in got] == [p.name() for p in mod.INSTRS]
    for e, p in zip(got, mod.INSTRS):
        instr = p.ir().instr
        tmpl = instr.c_template + instr.c_global
        assert e["intrinsics"], e["name"]
        for name in e["intrinsics"]:
            assert name + "(" in tmpl
        assert e["features"] == sorted(instr.cpu_features)
        assert e["signature"].startswith(p.name() + "(")
        assert e["body"].startswith(f"def {p.name()}(")
        assert e["edges"], e["name"]        # every body runs on edge values
    text = instr_reference.markdown(mod)
    assert len(re.findall(r"^## `", text, re.M)) == len(mod.INSTRS)
    page = (DOCS / f"hw_{lib}.md").read_text()
    assert f"{{instr-reference}} exo_hl.hw_libs.{lib}" in page


def _edges(lib, name):
    mod = importlib.import_module(f"exo_hl.hw_libs.{lib}")
    e = next(x for x in instr_reference.entries(mod) if x["name"] == name)
    return {ln[:10].strip(): ln[10:].strip() for ln in e["edges"][1:]}


def test_edge_values_are_the_bodies_results():
    """relu sends NaN and -0.0 to +0.0; max returns its second operand on
    NaN; the masked load zeroes lanes past m."""
    e = _edges("avx512", "mm512_relu_ps")
    ins = e["in  src"].strip("[]").split(", ")
    outs = e["out dst"].strip("[]").split(", ")
    for i, o in zip(ins, outs):
        if i in ("nan", "-0", "-inf", "-2"):
            assert o == "0", (i, o)
        else:
            assert o == i
    e = _edges("avx2", "mm256_max_ps")
    a = e["in  a"].strip("[]").split(", ")
    b = e["in  b"].strip("[]").split(", ")
    d = e["out dst"].strip("[]").split(", ")
    for x, y, z in zip(a, b, d):
        if "nan" in (x, y):
            assert z == y
    e = _edges("avx512", "mm512_maskz_loadu_ps")
    assert e["out dst"].endswith("0, 0, 0]")


def test_generated_pages_are_in_the_toctree_and_linked():
    index = (DOCS / "index.md").read_text()
    hw = (DOCS / "hardware.md").read_text()
    for lib in ("avx2", "avx512"):
        assert f"hw_{lib}\n" in index
        assert f"(hw_{lib}.md)" in hw
    assert "instr_reference" in (DOCS / "conf.py").read_text()
