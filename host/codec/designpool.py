"""Worker processes for the table design (:func:`lutzip.codec.encoder.plan_tables_stats` with ``threads`` > 1).

A tensor's own table set (:func:`lutzip.codec.encoder.design_tableset`) depends on its statistics alone, but about
half of the design is Python: on threads the GIL serialises it (two threads measured the same wall time as one).
So each design worker thread of :class:`lutzip.codec.encoder._Ahead` hands its designs to a worker process of its
own and waits for the answer with the GIL released. The processes are forked from the caller (they run the same
code and C kernels, so they make the same tables: the same bytes for any number of workers), kept for later files
and ended at exit. Where ``fork`` is missing, or with ``LUTZIP_DESIGN_PROCESSES=0``, the workers design on threads.

A job is the statistics' fields (the histogram as its non-zero entries), ``L`` and the effort; the answer is
``design_tableset``'s ``(tableset, bits)`` or the exception it raised (re-raised in the caller).
"""
from __future__ import annotations

import multiprocessing
import os
import threading

import numpy as np

_lock = threading.Lock()
_procs: list = []            # [(process, connection, lock)] of this process (forked children start empty)
_owner = [None]              # the pid the processes belong to


def enabled() -> bool:
    """Whether designs go to worker processes (``fork`` available, ``LUTZIP_DESIGN_PROCESSES`` not 0)."""
    return os.environ.get("LUTZIP_DESIGN_PROCESSES", "1") != "0" and \
        "fork" in multiprocessing.get_all_start_methods()


def _serve(conn):
    """A worker process: design every job received until the connection closes (or ``None`` arrives). Ctrl-C
    is the caller's to handle (it ends the workers at exit): ignored here, so no second traceback."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from lutzip.codec import encoder
    with encoder._scope():                  # work arrays kept for the process's life
        while True:
            try:
                job = conn.recv()
            except (EOFError, OSError):
                return
            if job is None:
                return
            try:
                st, L, effort = _unpack(job, encoder.Stats)
                res = (True, encoder.design_tableset(st, L, effort=effort))
            except BaseException as e:                          # handed to the caller
                res = (False, e)
            try:
                conn.send(res)
            except Exception as e:                              # e.g. an exception that does not pickle
                conn.send((False, RuntimeError(f"table design worker: {type(e).__name__}: {e}")))


def _pack(st, L, effort):
    vals = np.flatnonzero(st.hist)
    return (st.word_bits, len(st.hist), vals, st.hist[vals], st.runs, st.n_stripes, st.stripe_len, L, effort)


def _unpack(job, Stats):
    W, n, vals, counts, runs, n_stripes, stripe_len, L, effort = job
    hist = np.zeros(n, np.int64)
    hist[vals] = counts
    return Stats(W, hist, runs, n_stripes, stripe_len), L, effort


def _start():
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_serve, args=(child,), daemon=True, name="lutzip-design")
    p.start()
    child.close()
    return p, parent, threading.Lock()


def worker(n: int):
    """Worker process ``n`` of this process (started on first use): ``(process, connection, lock)``."""
    with _lock:
        if _owner[0] != os.getpid():        # a forked child does not use its parent's processes
            _procs.clear()
            _owner[0] = os.getpid()
        while len(_procs) <= n:
            _procs.append(None)
        w = _procs[n]
        if w is None or not w[0].is_alive():
            w = _procs[n] = _start()
        return w


def design(n: int, st, L: int, effort: int):
    """``design_tableset(st, L, effort=effort)`` made by worker process ``n``."""
    p, conn, lock = worker(n)
    with lock:
        try:
            conn.send(_pack(st, L, effort))
            ok, res = conn.recv()
        except (EOFError, OSError) as e:
            with _lock:
                if n < len(_procs) and _procs[n] is not None and _procs[n][1] is conn:
                    _procs[n] = None
            raise RuntimeError(f"table design worker process ended ({e or 'connection closed'})") from None
    if not ok:
        raise res
    return res


def shutdown():
    """End this process's worker processes (new ones start on the next use)."""
    with _lock:
        procs = list(_procs) if _owner[0] == os.getpid() else []
        _procs.clear()
    for w in procs:
        if w is None:
            continue
        p, conn, lock = w
        try:
            with lock:
                conn.send(None)
                conn.close()
        except OSError:
            pass
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()
