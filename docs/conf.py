"""Sphinx configuration for the exo_hl documentation.

Build: ``docs/build.sh [OUT_DIR]`` (the site in ``OUT_DIR/html``, default
``docs/_build/html``); needs ``pip install -e ".[docs]"`` (``[test]``
includes it).
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# the package from this checkout, even when it is not installed
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "_ext"))

import exo_hl  # noqa: E402

project = "exo_hl"
author = "the exo_hl developers"
copyright = "the exo_hl developers"
version = release = exo_hl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_parser",
    "exo_hl_docs",
    "instr_reference",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# Markdown: headings get anchors, so pages can link to sections
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

pygments_style = "sphinx"
html_theme = "alabaster"
html_title = f"exo_hl {release}"
html_theme_options = {
    "description": "User-scheduled kernels in Python, compiled to C",
    "fixed_sidebar": True,
    "page_width": "1180px",
    "sidebar_width": "240px",
}
html_static_path = ["_static"]
