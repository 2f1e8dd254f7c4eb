"""A corrupted build-cache entry is rebuilt once, instead of making every
later compile() of the procedure fail. Each compile runs in a fresh
process, as across sessions (a process never reloads a library it holds)."""
from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

KERNEL = '''\
from __future__ import annotations
import sys
import numpy as np
from exo_hl import f32, proc, seq, size


@proc
def cache_victim(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 3.0 + 1.0


x = np.ones(3, np.float32)
cache_victim.compile(sanitize=len(sys.argv) > 1)(3, x)
assert (x == 4).all(), x
print("ran")
'''


def _run(tmp_path, *extra):
    env = dict(os.environ, EXO_HL_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, str(tmp_path / "k.py"), *extra],
                          env=env, capture_output=True, text=True)


def _damage(path, how):
    data = Path(path).read_bytes()
    new = {"truncate": data[:len(data) // 3], "empty": b"",
           "garbage": b"\x7fELF" + b"\0" * 60}[how]
    tmp = path + ".tmp"
    Path(tmp).write_bytes(new)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)
    return data


@pytest.mark.parametrize("how", ["truncate", "empty", "garbage"])
def test_corrupted_library_is_rebuilt(tmp_path, how):
    (tmp_path / "k.py").write_text(KERNEL)
    r = _run(tmp_path)
    assert r.returncode == 0 and "ran" in r.stdout, r.stderr
    (lib, ) = glob.glob(str(tmp_path / "cache" / "cache_victim_*.so"))
    _damage(lib, how)
    for _ in range(2):   # the first run repairs the entry for later ones
        r = _run(tmp_path)
        assert r.returncode == 0 and "ran" in r.stdout, r.stderr
    assert glob.glob(str(tmp_path / "cache" / "cache_victim_*.so")) == [lib]
    assert os.path.getsize(lib) > 1000


def test_corrupted_sanitized_executable_is_rebuilt(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    r = _run(tmp_path, "sanitize")
    assert r.returncode == 0 and "ran" in r.stdout, r.stderr
    (exe, ) = glob.glob(str(tmp_path / "cache" / "cache_victim_*.san"))
    _damage(exe, "truncate")
    r = _run(tmp_path, "sanitize")
    assert r.returncode == 0 and "ran" in r.stdout, r.stderr
