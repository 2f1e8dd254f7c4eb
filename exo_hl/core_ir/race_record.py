"""The interpreter's exact race oracle (``ConfigState.race_check``).

Why: the interpreter runs ``par`` loops sequentially, so a race the
analysis missed shows in an ordinary run only if the order changes the
output; running last iteration first (``par_order = "reverse"``) catches
a last writer or a read after another iteration's write, but not two
iterations writing one value, or ``+=`` into one location (the sum is the
same either way; in C two threads' read-modify-writes lose updates). This
records what each iteration touches and reports every conflict the run
exercises: two distinct iterations of one par loop that access one
location, at least one of them writing, are a race (a ``+=`` is a read and
a write).

What a location is:

- a tensor element or a data scalar: its address, the data pointer of the
  numpy array accessed plus the element's byte offset from its strides. A
  window is a numpy view of its buffer, so two windows of one buffer alias
  exactly, and a scalar passed by reference to a call (a 0-d view) is the
  caller's scalar;
- a config field: its ``(Config, field)`` key.

An allocation made inside a par iteration is private to it (and to every
enclosing par iteration): its accesses are not recorded for those loops,
and its address, reused by the next iteration's allocation, never
conflicts. An allocation's depth is the number of par iterations open when
it was made (keyed by the numpy array owning the memory: a view's
``base``); an access is recorded for the par loops nested deeper than its
array's depth only.

Nested par loops: each open par iteration has a frame (the locations it
read and wrote). The innermost loop checks its iterations among
themselves; when it finishes, the union of its iterations' accesses joins
the enclosing iteration's frame, minus what is private to that one.

Cost: only a run whose ``ConfigState`` sets ``race_check = True`` pays:
the interpreter compiles a separate set of closures for it (its compile
cache is keyed by the mode) that call ``RaceRun`` at each access.
"""
from __future__ import annotations


# ----------------------------------------------------------------------------
# the closures a race_check compilation wraps around the interpreter's


def watched(fn, k, idx, label, write):
    """``fn`` (a read, or a write statement) of element ``idx(env)`` (or
    the scalar, when None) of the array in slot ``k``, recorded first."""
    if idx is None:
        def watched_scalar(env):
            env[0].access(env[k], (), label, write)
            return fn(env)
        return watched_scalar

    def watched_elem(env):
        env[0].access(env[k], idx(env), label, write)
        return fn(env)
    return watched_elem


def watched_config(fn, key, label, write):
    def watched_field(env):
        env[0].config_access(key, label, write)
        return fn(env)
    return watched_field


def allocating(alloc, k):
    """``alloc`` (binding slot ``k``), its array private to the open par
    iterations."""
    def alloc_recorded(env):
        alloc(env)
        env[0].allocated(env[k])
    return alloc_recorded


def par_loop(lo, hi, k, body, where, error):
    """A par loop (iteration variable in slot ``k``) that checks its
    iterations; ``where`` is (procedure, loop variable) for the message of
    the ``error`` (``interpret.RaceError``) raised at a conflict."""
    pname, var = where

    def run_par_recorded(env):
        rec = env[0]
        r = range(lo(env), hi(env))
        if rec.par_order == "reverse":
            r = reversed(r)
        loop = _ParLoop(rec)
        for v in r:
            env[k] = v
            loop.begin()
            body(env)
            clash = loop.end(v)
            if clash is not None:
                raise error(describe(clash, var, pname))
        loop.finish()
    return run_par_recorded


# ----------------------------------------------------------------------------
# the recorder


class RaceRun:
    """Slot 0 of the environment in a race-checking run: the run's
    ``ConfigState`` (config fields are read and written through it, with
    the interface the interpreter's closures use) plus the recorder."""

    def __init__(self, state):
        self.state = state
        self.par_order = getattr(state, "par_order", "forward")
        self.frames = []    # one _Frame per open par iteration, outermost
        self._owner = {}    # id(array) -> (depth, array): private allocs
        # id(array) -> (array, data pointer, strides) of arrays allocated
        # outside every par iteration (an allocation's depth never
        # changes): numpy is slow to give the data pointer; the array is
        # held so that its id is not reused while cached
        self._shared = {}

    # -- the config state
    def get(self, key, default=None):
        return self.state.get(key, default)

    def __getitem__(self, key):
        return self.state[key]

    def __setitem__(self, key, value):
        self.state[key] = value

    # -- recording
    def allocated(self, a):
        """``a`` was just allocated: private to the open par iterations."""
        if self.frames:
            self._owner[id(a)] = (len(self.frames), a)
            self.frames[-1].owned.append(id(a))

    def access(self, a, idx, label, write):
        """An access of element ``idx`` (a numpy index: an int, a tuple,
        or ``()`` for a scalar) of array ``a``; ``label`` is (procedure,
        buffer name) for the message."""
        frames = self.frames
        if not frames:
            return
        known = self._shared.get(id(a))
        if known is not None and known[0] is a:
            _, ptr, st = known
            depth = 0
        else:
            base = a.base if a.base is not None else a
            owner = self._owner.get(id(base))
            ptr, st = a.ctypes.data, a.strides
            if owner is None:
                if len(self._shared) > 4096:
                    self._shared.clear()
                self._shared[id(a)] = (a, ptr, st)
                depth = 0
            else:
                depth = owner[0]
                if depth >= len(frames):
                    return   # allocated inside the innermost open iteration
        if isinstance(idx, tuple):
            off = sum(i * s for i, s in zip(idx, st))
        else:
            off = idx * st[0]
        f = frames[-1]
        (f.writes if write else f.reads).setdefault(
            ptr + off, (depth, label, idx))

    def config_access(self, key, label, write):
        """An access of config field ``key`` (shared by every iteration)."""
        if self.frames:
            f = self.frames[-1]
            (f.writes if write else f.reads).setdefault(
                ("config",) + key, (0, label, None))


class _Frame:
    """The locations one par iteration read and wrote so far: location ->
    (depth of its array, label, index) of the first such access."""

    __slots__ = ("reads", "writes", "owned")

    def __init__(self):
        self.reads, self.writes, self.owned = {}, {}, []


class _ParLoop:
    """One run of one par loop: the accesses of its finished iterations,
    location -> (depth, label, index, iteration value) of the first."""

    def __init__(self, run):
        self.run = run
        self.reads, self.writes = {}, {}

    def begin(self):
        self.run.frames.append(_Frame())

    def end(self, v):
        """Iteration ``v`` finished: None, or the conflict it has with an
        earlier iteration as (first access, second access, kinds), each
        access (depth, label, index, iteration)."""
        f = self.run.frames.pop()
        for i in f.owned:
            del self.run._owner[i]
        for loc, acc in f.writes.items():
            other = self.writes.get(loc)
            kinds = ("writes", "writes")
            if other is None:
                other, kinds = self.reads.get(loc), ("reads", "writes")
            if other is not None:
                return other, acc + (v,), kinds
        for loc, acc in f.reads.items():
            other = self.writes.get(loc)
            if other is not None:
                return other, acc + (v,), ("writes", "reads")
        for mine, acc in ((self.writes, f.writes), (self.reads, f.reads)):
            for loc, a in acc.items():
                mine.setdefault(loc, a + (v,))
        return None

    def finish(self):
        """The loop is done: the enclosing par iteration (if any) saw all
        its iterations' accesses, except those private to it."""
        frames = self.run.frames
        if not frames:
            return
        outer, n = frames[-1], len(frames)
        for mine, theirs in ((self.writes, outer.writes),
                             (self.reads, outer.reads)):
            for loc, acc in mine.items():
                if acc[0] < n:
                    theirs.setdefault(loc, acc[:3])


def describe(clash, loop_var, proc_name):
    """The message of a conflict found by ``_ParLoop.end``."""
    first, second, (k1, k2) = clash

    def what(acc):
        _, (pname, buf), idx, _v = acc
        if idx is None:
            loc = f"config field {buf}"
        elif idx == ():
            loc = f"'{buf}'"
        else:
            t = idx if isinstance(idx, tuple) else (idx,)
            loc = f"{buf}[{', '.join(str(int(i)) for i in t)}]"
        return loc if pname == proc_name else f"{loc} (in '{pname}')"
    head = f"race in par loop '{loop_var}' of '{proc_name}': "
    if k1 == k2 and what(first) == what(second):
        return (f"{head}iterations {loop_var} = {first[3]} and {second[3]} "
                f"both {k1[:-1]} {what(first)}")
    a = f"iteration {loop_var} = {first[3]} {k1} {what(first)}"
    b = f"iteration {loop_var} = {second[3]} {k2} {what(second)}"
    return f"{head}{a}, and {b}: the same location"
