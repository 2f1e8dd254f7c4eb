"""Reference pages of the hardware libraries, generated from the libraries.

``instr-reference`` directive
    ``{instr-reference} exo_hl.hw_libs.avx512`` lists every instruction of
    the module's ``INSTRS``: its name, the C intrinsics its template calls,
    its signature, its body (the exact meaning ``interpret`` runs and
    ``replace`` matches), the CPU features it declares, and what the body
    computes on edge values (NaN, signed zeros, infinities; a 16-bit
    range for ui16). Everything is read from the procedures when the docs
    build, so the page cannot drift from the library; the edge values are
    the body run by ``interpret``, which the library tests check equal to
    the compiled intrinsics bit for bit.

``entries(module)`` and ``markdown(module)`` return the same content as
data and as Markdown (used by the tests, and printable:
``python docs/_ext/instr_reference.py exo_hl.hw_libs.avx2``).
"""
from __future__ import annotations

import importlib
import inspect
import re
import sys

import numpy as np

_F32_EDGES = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.0,
                       3.0e38], np.float32)
_U16_EDGES = np.array([0, 1, 2, 3, 32767, 32768, 65534, 65535], np.uint16)
#: bf16 edges (their bits: numpy has no bf16), bytes and i32 accumulators
_BF16_EDGES = np.array([0x7FC0, 0x8000, 0x0000, 0x7F80, 0xFF80, 0x3FC0,
                        0xC000, 0x0001], np.uint16)   # NaN -0 0 inf -inf 1.5 -2 denormal
_EDGES = {
    "UI16": _U16_EDGES, "BF16": _BF16_EDGES,
    "UI8": np.array([0, 1, 127, 128, 255, 2, 3, 254], np.uint8),
    "I8": np.array([-128, -1, 0, 1, 127, 2, -3, 126], np.int8),
    "I32": np.array([-2**31, -1, 0, 1, 2**31 - 1, 7, -100000, 100000],
                    np.int32),
}


def _intrinsics(instr) -> list:
    """The intrinsics the template and its helper code call: x86's
    ``_mm*`` and ``_tile*``, NEON's ``v...q_...``/``v..._lane_...`` and
    RVV's ``__riscv_*``."""
    text = instr.c_template + instr.c_global
    return sorted(set(re.findall(
        r"(?<!\w)(?:_mm\w*|_tile\w*|__riscv_\w+|v[a-z0-9]+_\w+)(?=\()",
        text)))


def _signature(p) -> str:
    """``name(arg: type @ memory, ...)`` as the definition spells it."""
    src = str(p)
    m = re.search(r"^def (\w+\(.*?\)):", src, re.S | re.M)
    return " ".join(m.group(1).split()) if m else p.name()


def _body(p) -> str:
    """The definition as the printer shows it (decorator line dropped)."""
    lines = str(p).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("def "))
    return "\n".join(lines[start:])


def _dims(t, sizes):
    """The shape of tensor type ``t``, size parameters read from ``sizes``."""
    return tuple(int(e.val) if hasattr(e, "val") else sizes[e.name.name]
                 for e in t.hi)


def _kind(t) -> str:
    return type(t).__name__          # 'Size', 'Tensor', 'F32', ...


def _edge_example(p):
    """Run the body on edge values: ``(lines, sizes)`` with ``lines`` the
    ``(label, values)`` of every input and of every buffer written, or
    None when the body cannot run on them (a precondition refuses)."""
    args = p.ir().args
    lanes = max((int(a.type.hi[-1].val) for a in args
                 if _kind(a.type) == "Tensor"
                 and hasattr(a.type.hi[-1], "val")), default=8)
    # a tail of lanes - 3 lanes; a shift by 3
    sizes = {a.name.name: (3 if a.name.name == "k" else max(1, lanes - 3))
             for a in args if _kind(a.type) == "Size"}
    sizes.update({a.name.name: 1 for a in args       # a lane number
                  if _kind(a.type) == "Index"})
    kw, shown = dict(sizes), []
    for k, a in enumerate(args):
        t, nm = a.type, a.name.name
        if nm in sizes:
            continue
        if _kind(t) != "Tensor":            # a data scalar
            kw[nm] = -0.0
            shown.append((f"in  {nm}", np.array([-0.0], np.float32)))
            continue
        edges = _EDGES.get(_kind(t.type), _F32_EDGES)
        with np.errstate(over="ignore"):        # 3e38 is inf in f16
            if _kind(t.type) in ("F16", "F64"):
                edges = edges.astype({"F16": np.float16,
                                      "F64": np.float64}[_kind(t.type)])
        shape = _dims(t, sizes)
        kw[nm] = np.resize(np.roll(edges, k), int(np.prod(shape))
                           ).reshape(shape)
        shown.append((f"in  {nm}", kw[nm].copy()))
    before = {n[4:]: v for n, v in shown}
    try:
        p.interpret(**kw)
    except Exception:   # noqa: BLE001  (a precondition the edges break)
        return None
    for nm, v in before.items():
        if _kind(v) == "ndarray" and (
                not np.array_equal(kw[nm], v, equal_nan=True)
                or nm == "dst"):
            shown.append((f"out {nm}", kw[nm]))
    return shown, [f"{n} = {v}" for n, v in sizes.items()]


def _fmt(v) -> str:
    flat = np.asarray(v).ravel()
    text = ", ".join(format(float(x), "g") if flat.dtype.kind == "f"
                     else str(int(x)) for x in flat[:16])
    return "[" + text + (", ...]" if flat.size > 16 else "]")


def entries(module) -> list:
    """One dict per instruction of ``module.INSTRS``, in order."""
    if isinstance(module, str):
        module = importlib.import_module(module)
    out = []
    for p in module.INSTRS:
        ir = p.ir()
        ex = _edge_example(p)
        out.append({
            "name": p.name(),
            "intrinsics": _intrinsics(ir.instr),
            "signature": _signature(p),
            "body": _body(p),
            "features": sorted(ir.instr.cpu_features),
            "doc": inspect.cleandoc(p.__doc__ or ""),
            "edges": (None if ex is None else
                      ["  ".join(ex[1])] + [f"{lab:10s} {_fmt(v)}"
                                           for lab, v in ex[0]]),
        })
    return out


def markdown(module) -> str:
    mod = importlib.import_module(module) if isinstance(module, str) \
        else module
    parts = [f"# `{mod.__name__}`: instruction reference", "",
             f"{len(mod.INSTRS)} instructions, generated from "
             f"`{mod.__name__}.INSTRS`.", ""]
    for e in entries(mod):
        parts += [f"## `{e['name']}`", "",
                  f"- C intrinsics: {', '.join(e['intrinsics']) or '-'}",
                  f"- CPU features: {', '.join(e['features']) or '-'}",
                  f"- signature: `{e['signature']}`", "",
                  e["doc"].split("\n\n")[0], "", "```python", e["body"],
                  "```", ""]
        if e["edges"] and len(e["edges"]) > 1:   # values, not sizes only
            parts += ["Edge values (the body, run by `interpret`):", "",
                      "```text", *[ln for ln in e["edges"] if ln], "```",
                      ""]
    return "\n".join(parts)


# ---------------------------------------------------------------------------
# the Sphinx directive

def setup(app):
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    def literal(text, lang):
        node = nodes.literal_block(text, text)
        node["language"] = lang
        return node

    class InstrReference(SphinxDirective):
        required_arguments = 1
        has_content = False

        def run(self):
            out = []
            for e in entries(self.arguments[0]):
                sec = nodes.section(ids=[nodes.make_id(e["name"])])
                sec += nodes.title(e["name"], e["name"])
                fl = nodes.bullet_list()
                for label, value in (
                        ("C intrinsics", ", ".join(e["intrinsics"]) or "-"),
                        ("CPU features", ", ".join(e["features"]) or "-"),
                        ("signature", e["signature"])):
                    item = nodes.list_item()
                    para = nodes.paragraph()
                    para += nodes.strong(label, label)
                    para += nodes.Text(": ")
                    para += nodes.literal(value, value)
                    item += para
                    fl += item
                sec += fl
                first = e["doc"].split("\n\n")[0]
                sec += nodes.paragraph(first, first)
                sec += literal(e["body"], "python")
                if e["edges"] and len(e["edges"]) > 1:
                    t = "Edge values (the body, run by interpret):"
                    sec += nodes.paragraph(t, t)
                    sec += literal("\n".join(ln for ln in e["edges"] if ln),
                                   "text")
                out.append(sec)
            return out

    app.add_directive("instr-reference", InstrReference)
    return {"version": "1", "parallel_read_safe": True}


if __name__ == "__main__":
    print(markdown(sys.argv[1] if len(sys.argv) > 1
                   else "exo_hl.hw_libs.avx2"))
