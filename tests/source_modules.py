"""Procedures from generated text, for the fuzzers (``from source_modules
import load_source``; ``tests/`` is on ``sys.path``, as for ``kernels``).

``@proc`` reads a function's source, so a generated procedure must live in
a real file: each text is written to its own module under a test's
``tmp_path`` and imported from there."""
from __future__ import annotations

import importlib.util


def load_source(directory, stem: str, text: str):
    """The module made of ``text``, written as ``directory/stem.py``."""
    path = directory / f"{stem}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
