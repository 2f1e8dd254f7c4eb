"""Entries of the build cache (shared libraries, sanitized executables).

An entry is the built file plus a ``.sha256`` record of its content written
after it. A file whose content does not match its record (truncated,
corrupted on disk, or left by an interrupted or older build) is not used:
the caller builds it again. Loading a damaged library is not a safe test —
a truncated one can load and then fault when its code is reached.
"""
from __future__ import annotations

import hashlib
import os


def cached_file(directory, name, key, ext) -> str:
    """The cache path of a build of ``name`` with hash ``key``: the name is
    cut to 48 characters (the hash tells builds apart), so that a long
    procedure name stays inside the file systems' 255-byte limit."""
    return os.path.join(directory, f"{name[:48]}_{key}{ext}")


def build_stem(name: str) -> str:
    """The stem of the files a build of procedure ``name`` writes (``.h``,
    ``.c``, the C context type): the name itself when short, else its first
    32 characters and a hash of the whole, so that a long (valid) procedure
    name never exceeds the file systems' 255-byte limit."""
    if len(name) <= 48:
        return name
    return f"{name[:32]}_{hashlib.sha256(name.encode()).hexdigest()[:15]}"


def _digest(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def _record(path) -> str:
    return path + ".sha256"


def is_valid(path) -> bool:
    """The entry exists and its content is what was built."""
    try:
        with open(_record(path)) as f:
            want = f.read().strip()
        return bool(want) and _digest(path) == want
    except OSError:
        return False


def store(built, path) -> None:
    """Move the freshly built file ``built`` into the cache as ``path``
    (atomically: concurrent readers see the old entry or the new one)."""
    digest = _digest(built)
    os.replace(built, path)
    tmp = f"{_record(path)}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(digest + "\n")
    os.replace(tmp, _record(path))


def discard(path) -> None:
    """Remove a bad entry (ignoring one already gone)."""
    for p in (path, _record(path)):
        try:
            os.remove(p)
        except OSError:
            pass
