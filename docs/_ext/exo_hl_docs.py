"""Sphinx helpers for the exo_hl docs: code that runs when the docs build.

``exo-run`` directive
    Runs its content as Python (with ``from __future__ import
    annotations``, as every procedure module starts) and shows the code,
    then what it printed. Blocks of one page share a namespace, so a page
    reads like a session. Options: ``:hide-code:`` (show only the output),
    ``:hide-output:``, ``:output-lang:`` (``python`` for printed
    procedures; default ``text``), ``:raises: NAME`` (the block must raise
    that exception; its message is shown as the output). Any other
    exception fails the build, so the pages never show stale output.

    The code is registered with ``linecache`` under the page's path
    (``docs/tutorial.md``), each block at its own lines, so ``@proc`` can
    read the source of functions defined in a block (as it does in
    notebooks) and error messages name the line of the page.

Before/after examples in the reference
    ``autodoc-process-docstring`` appends to each scheduling method of
    ``Procedure`` a procedure, the call, and the procedure it returns, all
    produced by running ``schedule_examples.EXAMPLES`` during the build.
"""
from __future__ import annotations

import __future__
import contextlib
import io
import linecache
import os
import traceback

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


def _literal(text: str, language: str, classes=()):
    node = nodes.literal_block(text, text)
    node["language"] = language
    node["classes"].extend(classes)
    return node


class ExoRun(SphinxDirective):
    has_content = True
    option_spec = {
        "hide-code": directives.flag,
        "hide-output": directives.flag,
        "output-lang": directives.unchanged,
        "raises": directives.unchanged,
    }

    def _namespace(self) -> dict:
        key = "exo_run_namespace"
        ns = self.env.temp_data.get(key)
        if ns is None:
            ns = {"__name__": f"exo_hl_docs_{self.env.docname}",
                  "__builtins__": __builtins__,
                  # the repository (docs/..), for blocks that load files
                  "_repo": os.path.dirname(os.path.abspath(
                      self.env.srcdir))}
            self.env.temp_data[key] = ns
        return ns

    def _register_source(self, code: str) -> tuple:
        """Put the block's lines where they stand in the page's source, so
        that errors name the page and the line a reader finds them at.
        Returns (file name, padded code to compile)."""
        rel = os.path.relpath(self.env.doc2path(self.env.docname),
                              os.path.dirname(self.env.srcdir))
        key = "exo_run_lines"
        page = self.env.temp_data.setdefault(key, [])
        lines = code.splitlines(True)
        first = self._content_start([l.rstrip("\n") for l in lines])
        while len(page) < first + len(lines):
            page.append("\n")
        page[first:first + len(lines)] = lines
        linecache.cache[rel] = (sum(map(len, page)), None, list(page), rel)
        return rel, "\n" * first + code

    def _content_start(self, content) -> int:
        """0-based line of the page where the block's content starts."""
        path = self.env.doc2path(self.env.docname)
        try:
            with open(path, encoding="utf-8") as f:
                src = f.read().splitlines()
        except OSError:
            return self.lineno
        for i in range(max(self.lineno - 1, 0), len(src)):
            if src[i:i + len(content)] == content:
                return i
        return self.lineno

    def run(self):
        code = "\n".join(self.content) + "\n"
        fname, padded = self._register_source(code)
        flags = __future__.annotations.compiler_flag
        out = io.StringIO()
        want = self.options.get("raises")
        try:
            compiled = compile(padded, fname, "exec", flags=flags,
                               dont_inherit=True)
            with contextlib.redirect_stdout(out):
                exec(compiled, self._namespace())  # noqa: S102 - docs code
        except Exception as e:  # noqa: BLE001 - reported below
            if want and type(e).__name__ == want:
                # what Python prints under the traceback (notes included)
                out.write("".join(traceback.format_exception_only(e)))
            else:
                tb = "".join(traceback.format_exception(e))
                logger.warning("exo-run block failed:\n%s", tb,
                               location=self.get_location())
                return []
        else:
            if want:
                logger.warning("exo-run block was expected to raise %s",
                               want, location=self.get_location())
        result = []
        if "hide-code" not in self.options:
            result.append(_literal(code.rstrip("\n"), "python",
                                   ["exo-run-code"]))
        text = out.getvalue().rstrip("\n")
        if text and "hide-output" not in self.options:
            lang = self.options.get("output-lang", "text")
            classes = ["exo-run-output"] + (["exo-run-error"] if want
                                             else [])
            result.append(_literal(text, lang, classes))
        return result


# ---------------------------------------------------------------------------
# before/after examples for Procedure's scheduling methods

def _example_lines(name: str):
    import schedule_examples
    if name not in schedule_examples.EXAMPLES:
        return None
    before, call, after = schedule_examples.run(name)

    def block(text):
        return ["", ".. code-block:: python", ""] + \
            ["   " + l if l else "" for l in text.splitlines()] + [""]
    return (["", ".. rubric:: Example", "",
             "Run while these docs were built. The procedure ``p``:"]
            + block(before)
            + [f"``{call}`` returns:"] + block(after))


def add_examples(app, what, name, obj, options, lines):
    prefix = "exo_hl.Procedure."
    if what != "method" or not name.startswith(prefix):
        return
    try:
        extra = _example_lines(name[len(prefix):])
    except Exception:  # noqa: BLE001 - a broken example must fail the build
        logger.warning("example for %s failed:\n%s", name,
                       traceback.format_exc())
        return
    if extra:
        lines.extend(extra)


def setup(app):
    app.add_directive("exo-run", ExoRun)
    app.add_css_file("exo_hl.css")
    app.connect("autodoc-process-docstring", add_examples)
    return {"version": "1", "parallel_read_safe": False}
