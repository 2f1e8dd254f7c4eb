"""What a tuned result depends on: the machine's signature.

A schedule tuned on one machine is only known to be best there. The
signature lists what makes machines differ for a kernel: the CPU model
(its name, and its family, model and stepping numbers: a virtual machine
may name Zen 3, 4 and 5 all "AMD EPYC"), its vector instruction sets, its caches (size, associativity, line, how
many CPUs share each), the core count and the C compiler with its
version. ``signature_id`` hashes it; the tuning database files records
under it, so a record measured elsewhere is never mistaken for this
machine's.

>>> sig = machine_signature()
>>> sorted(sig)
['caches', 'compiler', 'cores', 'cpu_id', 'cpu_model', 'isa', 'vendor']
>>> len(signature_id(sig))
16
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import shlex
import subprocess
from dataclasses import asdict, dataclass

from ..caches import memo

#: cpuinfo flags that decide which kernels run and how fast (vector
#: instruction sets and their extensions); the others (virtualization,
#: mitigations) change between boots of the same machine
_ISA_PREFIXES = ("sse", "ssse3", "avx", "fma", "f16c", "amx", "bmi")


@dataclass(frozen=True)
class CacheLevel:
    """One data (or unified) cache as Linux reports it; 0 for a field it
    does not report.

    >>> CacheLevel(1, 48 << 10, ways=12, line=64).sets
    64
    """

    level: int
    size: int                 # bytes
    ways: int = 0             # associativity (0: unknown)
    line: int = 64            # bytes per line
    shared_by: int = 1        # CPUs sharing it

    @property
    def sets(self) -> int:
        """Sets of ``ways`` lines (0 when the associativity is unknown)."""
        return self.size // (self.ways * self.line) if self.ways else 0

    @property
    def way_bytes(self) -> int:
        """Bytes of one way (``size`` when the associativity is unknown)."""
        return self.size // self.ways if self.ways else self.size


def _read(path):
    with open(path) as f:
        return f.read().strip()


def _cpu_count_in(text: str) -> int:
    """CPUs in a Linux CPU list such as ``0-3,8``."""
    n = 0
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            n += int(hi) - int(lo) + 1
        elif part.strip():
            n += 1
    return n


@memo(maxsize=4)
def _sysfs_caches(cpu: int) -> tuple:
    out = []
    for d in sorted(glob.glob(f"/sys/devices/system/cpu/cpu{cpu}/cache/"
                              f"index*")):
        try:
            if _read(f"{d}/type") not in ("Data", "Unified"):
                continue
            level = int(_read(f"{d}/level"))
            text = _read(f"{d}/size").upper()
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:],
                                                                   1)
            size = int(text.rstrip("KMG")) * mult
        except (OSError, ValueError):
            continue
        fields = {}
        for name, fname in (("ways", "ways_of_associativity"),
                            ("line", "coherency_line_size")):
            try:
                fields[name] = int(_read(f"{d}/{fname}"))
            except (OSError, ValueError):
                pass
        try:
            fields["shared_by"] = max(1, _cpu_count_in(
                _read(f"{d}/shared_cpu_list")))
        except (OSError, ValueError):
            pass
        out.append(CacheLevel(level, size, **fields))
    return tuple(out)


def cache_levels(cpu: int = 0) -> dict:
    """{level: CacheLevel} of the data caches CPU ``cpu`` reports (Linux
    sysfs); {} where none are reported.

    >>> all(c.size > 0 for c in cache_levels().values())
    True
    """
    return {c.level: c for c in _sysfs_caches(cpu)}


def _cpuinfo() -> dict:
    out = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break                        # the first CPU only
                k, _, v = line.partition(":")
                out[k.strip()] = v.strip()
    except OSError:
        pass
    return out


def cpu_family() -> int:
    """The CPU's family number (``cpu family`` in /proc/cpuinfo; 0 when
    not reported): what tells the cores of one vendor apart where the
    flags do not, e.g. AMD Zen 4 (25), which runs a 512-bit FMA as two
    256-bit halves, from Zen 5 (26), which runs it at full width
    (``cpu_id``'s ``family``, in ``machine_signature`` too).

    >>> cpu_family() >= 0
    True
    """
    return cpu_id()["family"] or 0


def is_amd(vendor: str = None) -> bool:
    """Whether ``vendor`` (a ``vendor_id``; default this CPU's) is AMD:
    the apps' models take rules measured per vendor (GCC's
    ``-march=native`` tunes for znver there, and AMD's FMA widths
    differ by family: ``cpu_family``).

    >>> is_amd("AuthenticAMD"), is_amd("GenuineIntel")
    (True, False)
    """
    if vendor is None:
        vendor = _cpuinfo().get("vendor_id", "")
    return vendor == "AuthenticAMD"


def core_count() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@memo(maxsize=8)
def compiler_version(cc: str | None = None) -> str:
    """The first line of ``$CC --version`` (``cc`` by default): kernels
    compiled by another compiler or version may rank differently."""
    cc = cc or os.environ.get("CC") or "cc"
    try:
        r = subprocess.run(shlex.split(cc) + ["--version"],
                           capture_output=True, text=True, timeout=20)
        first = (r.stdout or r.stderr).strip().splitlines()
        return first[0].strip() if first else cc
    except (OSError, subprocess.SubprocessError):
        return f"{cc} (version unknown)"


def cpu_id(info: dict = None) -> dict:
    """{family, model, stepping} of the CPU (/proc/cpuinfo's numbers; None
    for one not reported): what names a core where the model name does not
    (a virtual machine's "AMD EPYC" or "Intel Xeon Processor").

    >>> cpu_id({"cpu family": "26", "model": "2", "stepping": "1"})
    {'family': 26, 'model': 2, 'stepping': 1}
    >>> cpu_id({})["family"] is None
    True
    """
    info = _cpuinfo() if info is None else info
    out = {}
    for key, field in (("family", "cpu family"), ("model", "model"),
                       ("stepping", "stepping")):
        try:
            out[key] = int(info[field])
        except (KeyError, ValueError):
            out[key] = None
    return out


def machine_signature(cc: str | None = None) -> dict:
    """{cpu_model, cpu_id, vendor, isa, caches, cores, compiler}: what the
    speed of a scheduled kernel depends on besides the schedule
    (JSON-ready).

    >>> machine_signature()["cores"] >= 1
    True
    """
    info = _cpuinfo()
    flags = info.get("flags", "").split()
    return {
        "cpu_model": info.get("model name", "unknown"),
        "cpu_id": cpu_id(info),
        "vendor": info.get("vendor_id", "unknown"),
        "isa": sorted(f for f in flags if f.startswith(_ISA_PREFIXES)),
        "caches": [asdict(c) for c in _sysfs_caches(0)],
        "cores": core_count(),
        "compiler": compiler_version(cc),
    }


def signature_id(signature: dict) -> str:
    """A short stable hash of a signature (16 hex digits).

    >>> signature_id({"a": 1}) == signature_id({"a": 1})
    True
    """
    text = json.dumps(signature, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def signature_label(signature: dict) -> str:
    """A file-name-safe, human-readable name of a machine: CPU model,
    cores and the signature's hash (``Intel-Xeon-Processor-2c-1a2b...``).

    >>> signature_label({"cpu_model": "AMD EPYC 9B14", "cores": 2})[:16]
    'AMD-EPYC-9B14-2c'
    """
    import re
    model = re.sub(r"\((R|TM|tm|r)\)", "", signature.get("cpu_model", "cpu"))
    model = re.sub(r"[^A-Za-z0-9]+", "-", model).strip("-") or "cpu"
    return f"{model}-{signature.get('cores', 0)}c-{signature_id(signature)}"


def differences(a: dict, b: dict) -> list:
    """The top-level fields in which two signatures differ.

    >>> differences({"cores": 2, "vendor": "x"}, {"cores": 4, "vendor": "x"})
    ['cores']
    >>> differences("garbled", {"cores": 4})
    ['signature']
    """
    if not isinstance(a, dict) or not isinstance(b, dict):
        return ["signature"]            # (a corrupted record's)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
