"""The candidates' processes: each builds one schedule in a process of
its own, so a refused, crashing or hanging candidate is recorded and
killed without stopping the search (``search.tune``), and then measures
it once per request (the search asks once, the confirmation rounds
several times)."""
from __future__ import annotations

import gc
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import time

from ..errors import SchedulingError
from ..gc_pause import fewer_collections

# ---------------------------------------------------------------------------
# the child process

def _send(conn, *msg):
    try:
        conn.send(msg)
    except (OSError, EOFError):      # the parent gave up on us
        os._exit(0)


def _candidate(conn, template, bench, params, compile_opts):
    """Build one candidate, report; then on each "go" run ``bench`` and
    report, until told to stop."""
    os.environ["EXO_HL_PROGRESS"] = "0"
    from ..api import Procedure
    # a short-lived process: what is alive now (the imports) stays alive,
    # so the collector need not walk it again (see also ``gc_pause``)
    gc.freeze()
    t0 = time.perf_counter()
    try:
        with fewer_collections():
            p = template(dict(params))
            if not isinstance(p, Procedure):
                raise TypeError(f"the template returned a "
                                f"{type(p).__name__}, not a Procedure")
            obj = p if compile_opts is None else p.compile(**compile_opts)
    except SchedulingError as e:
        _send(conn, "refused", str(e), time.perf_counter() - t0)
        return
    except Exception as e:  # noqa: BLE001 - recorded, the search goes on
        _send(conn, "crashed", f"{type(e).__name__}: {e}",
              time.perf_counter() - t0)
        return
    _send(conn, "built", "", time.perf_counter() - t0)
    while True:              # one measurement per "go" (the confirmation
        try:                 # rounds send several), until "stop"
            go = conn.recv()
        except (OSError, EOFError):
            return
        if go != "go":
            return
        t1 = time.perf_counter()
        try:
            value = float(bench(obj, dict(params)))
            if not math.isfinite(value):
                raise ValueError(f"the benchmark returned {value}")
        except Exception as e:  # noqa: BLE001
            _send(conn, "crashed", f"{type(e).__name__}: {e}",
                  time.perf_counter() - t1)
            return
        _send(conn, "ok", value, time.perf_counter() - t1)


# ---------------------------------------------------------------------------
# the parent

class Running:
    """A candidate's process and our end of its pipe."""

    def __init__(self, ctx, number, params, template, bench, compile_opts):
        self.number, self.params = number, params
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_candidate, daemon=True,
                                args=(child, template, bench, params,
                                      compile_opts))
        self.proc.start()
        child.close()

    def wait(self, timeout):
        """The child's next message, ("crashed", why, 0) if it died without
        one, or None after ``timeout`` seconds."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if self.conn.poll(0):
                try:
                    return self.conn.recv()
                except (EOFError, OSError):
                    pass
                return self._died()
            if not self.proc.is_alive():
                self.proc.join()
                if self.conn.poll(0):
                    continue
                return self._died()
            if left <= 0:
                return None
            multiprocessing.connection.wait([self.conn, self.proc.sentinel],
                                            timeout=min(left, 1.0))

    def _died(self):
        self.proc.join(5)
        code = self.proc.exitcode
        if code is not None and code < 0:
            try:
                why = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                why = f"killed by signal {-code}"
        else:
            why = f"exited with status {code}"
        return ("crashed", f"the candidate's process {why}", 0.0)

    def stop(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


def wait_builds(running: dict, end: float, cutoff: float,
                cut_now: bool) -> dict:
    """Each candidate's first message (``running``: number -> Running),
    polled together; the ones still building are left out when
    ``end`` (the build timeout) passes, or ``cutoff`` (the search's time
    budget) once some build has succeeded (``cut_now``: an earlier batch's
    candidate did; else the first of these to be built): a slow build
    stops the search at its budget once there is a result, but never
    leaves it without one."""
    msgs, got_one = {}, cut_now
    while True:
        for num, r in running.items():
            if num not in msgs:
                msg = r.wait(0)
                if msg is not None:
                    msgs[num] = msg
                    got_one = got_one or msg[0] == "built"
        left = (min(end, cutoff) if got_one else end) - time.monotonic()
        if len(msgs) == len(running) or left <= 0:
            return msgs
        waiting = [x for num, r in running.items() if num not in msgs
                   for x in (r.conn, r.proc.sentinel)]
        multiprocessing.connection.wait(waiting, timeout=min(left, 1.0))


def context():
    """``forkserver`` where there is one (children fork from a clean
    server process that has already imported exo_hl: a candidate starts
    in milliseconds instead of the second an import takes), else
    ``spawn``. Neither forks the caller, whose threads (OpenMP's,
    OpenBLAS's) a fork would copy half-alive."""
    try:
        ctx = multiprocessing.get_context("forkserver")
    except ValueError:                  # not on this platform
        return multiprocessing.get_context("spawn")
    ctx.set_forkserver_preload(["exo_hl.tune.workers", "exo_hl.api"])
    return ctx
