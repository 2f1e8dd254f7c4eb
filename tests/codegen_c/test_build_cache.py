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


# --------------------------------------------------------------------------
# the key: every input that determines the library, and only those


def _lib_key(monkeypatch, tmp_path, host="here", **change):
    """The cache file build_shared picks for a fixed build, with one input
    changed (``change``) and the host's identity ``host``."""
    from exo_hl.codegen_c import host_cpu, runner
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path / "keys"))
    monkeypatch.setattr(host_cpu, "host_identity", lambda: host,
                        raising=False)
    seen = []

    def fake_valid(path):       # stop at the lookup: nothing is built
        seen.append(path)
        return True
    monkeypatch.setattr(runner.build_cache, "is_valid", fake_valid)
    args = dict(header="/* h */", source="int f(void) { return 1; }\n",
                basename="k", cc="gcc", cflags="-O2 -march=native",
                extra_flags=(), link_flags=("-lm", ))
    args.update(change)
    runner.build_shared(**args)
    return os.path.basename(seen[-1])


#: (input changed, changes the library?)
KEY_CASES = [
    (dict(source="int f(void) { return 2; }\n"), True),
    (dict(header="/* h2 */"), True),
    (dict(cc="clang"), True),
    (dict(cflags="-O3 -march=native"), True),
    (dict(extra_flags=("-fopenmp", )), True),
    (dict(link_flags=()), True),
    (dict(host="another CPU"), True),       # -march=native means another ISA
    (dict(cflags="-O2", host="another CPU"), False),  # ... without it, not
    (dict(cflags="-O2 -mtune=native", host="another CPU"), True),
]


@pytest.mark.parametrize("change, differs", KEY_CASES)
def test_cache_key_changes_exactly_with_what_the_library_depends_on(
        monkeypatch, tmp_path, change, differs):
    """A library built for another CPU with -march=native (a cache
    directory shared over NFS) was served here and died of SIGILL."""
    host = change.pop("host", "here")
    base = dict(cflags=change["cflags"]) if "cflags" in change and \
        host != "here" else {}
    before = _lib_key(monkeypatch, tmp_path, **base)
    after = _lib_key(monkeypatch, tmp_path, host=host, **change)
    assert (before != after) == differs, (change, before, after)


def test_emulated_builds_are_keyed_by_the_simde_release(monkeypatch):
    """SIMDe's headers are not hashed: another release installed in the
    same place must still change the flags (hence the key)."""
    from exo_hl.codegen_c import host_cpu
    before = host_cpu.emulation_flags({"avx512f"})
    monkeypatch.setattr(host_cpu, "_simde_version", lambda: "0.0.0-other",
                        raising=False)
    assert host_cpu.emulation_flags({"avx512f"}) != before
