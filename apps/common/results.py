"""Benchmark results per machine: ``apps/<app>/results/<machine>.json``.

Each benchmark run appends ``{"time", "label", "meta", "rows"}`` to the
file of the machine it ran on, named by ``exo_hl.tune.signature_label``
(CPU model, core count, signature hash); the file also holds the full
machine signature (``exo_hl.tune.machine_signature``). ``report.py``
turns every machine's file into the README tables.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from exo_hl.tune import machine_signature, signature_label


def results_dir(app: str) -> Path:
    """``apps/<app>/results`` (``$EXO_HL_RESULTS_DIR`` instead, for tests
    and trial runs that should not touch the repository)."""
    env = os.environ.get("EXO_HL_RESULTS_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / app / "results"


def record_run(app: str, label: str, rows: list, meta: dict,
               directory: Path | None = None) -> Path:
    """Append a run to this machine's results file of ``app``; returns
    its path."""
    sig = machine_signature()
    d = Path(directory) if directory is not None else results_dir(app)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{signature_label(sig)}.json"
    data = {"signature": sig, "runs": []}
    if path.exists():
        try:
            data = json.loads(path.read_text())
        except ValueError:
            pass
    data["signature"] = sig
    data.setdefault("runs", []).append(
        {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
         "label": label, "meta": meta, "rows": rows})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)
    return path


def load_all(app: str, directory: Path | None = None) -> list:
    """[(path, data)] of every machine's results file, sorted by name."""
    d = Path(directory) if directory is not None else results_dir(app)
    out = []
    for p in sorted(d.glob("*.json")):
        try:
            out.append((p, json.loads(p.read_text())))
        except ValueError:
            continue
    return out
