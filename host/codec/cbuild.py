"""Build and load the codec's C kernels (``_fastdec.c``, ``_fastenc.c``): one compiler search, one cache key,
one build with a fallback, one load-once state for both.

A kernel is compiled the first time a process needs it with ``$CC``, else ``cc``, ``gcc`` or ``clang``, into
``lutzip.cache.cache_dir(name)/<key>`` (``key``: the source, the compiler, the flags, the machine and the CPU),
first with the given flags, then without ``-march=native``; later processes load the cached library.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
from pathlib import Path

import numpy as np


def compiler():
    """The C compiler's path (``$CC``, ``cc``, ``gcc`` or ``clang``), or ``None``."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name:
            path = shutil.which(name)
            if path:
                return path
    return None


def cpu_id() -> str:
    """The CPU's feature line (part of the cache key: a library built with ``-march=native`` is CPU-specific)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features", "isa")):
                    return line.strip()
    except OSError:
        pass
    return platform.processor()


def ptr(a: np.ndarray) -> int:
    """The address of an array's data (a ctypes ``void *`` argument)."""
    return a.__array_interface__["data"][0]


def build(cc: str, source: Path, out: Path, flags, libs=(), variants=None):
    """Compile ``source`` into the shared library ``out``: with ``flags``, then without ``-march=native``
    (or each flag list of ``variants`` in turn). Raises OSError with the compiler's last line."""
    last = None
    for fl in variants or (flags, [f for f in flags if f != "-march=native"]):
        r = subprocess.run([cc, *fl, "-o", str(out), str(source), *libs], capture_output=True, text=True,
                           timeout=120)
        if r.returncode == 0:
            return
        last = r.stderr.strip().splitlines()[-1:] or [f"exit {r.returncode}"]
    raise OSError(f"{cc} failed: {last[0]}")


def load_cached(cc: str, source: Path, flags, name: str, build_into, configure):
    """The library of ``source`` from the cache folder ``name`` (built by ``build_into(folder)`` when missing),
    opened with ctypes and passed through ``configure``. Raises OSError / SubprocessError."""
    from lutzip.cache import atomic_dir, cache_dir
    st = os.stat(cc)
    key = hashlib.sha256(source.read_bytes() + repr((cc, st.st_size, st.st_mtime_ns, flags, platform.machine(),
                                                     cpu_id())).encode()).hexdigest()[:16]
    folder = atomic_dir(cache_dir(name) / key, build_into)
    return configure(ctypes.CDLL(str(folder / (source.stem + ".so"))))


def load_kernel(name: str, what: str, source: Path, flags, build, configure, cc, refuse=None):
    """``(lib, None)``, or ``(None, why)`` when the kernel ``name`` cannot be used: ``$LUTZIP_<NAME>=0``, a
    reason ``refuse`` of the caller's (e.g. the byte order), no compiler (``cc`` is ``None``), or a failed
    build of ``what``. ``build(cc, folder)`` compiles into the cache folder, ``configure(lib)`` declares the
    ctypes signatures (:func:`load_cached`)."""
    env = f"LUTZIP_{name.upper()}"
    if os.environ.get(env, "1") == "0":
        return None, f"{env}=0"
    if refuse:
        return None, refuse
    if cc is None:
        return None, "no C compiler (cc, gcc, clang or $CC)"
    try:
        lib = load_cached(cc, source, flags, name, lambda tmp: build(cc, tmp), configure)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"could not build {what}: {e}"
    return lib, None


def load_once(state: dict, lock, load):
    """``state["lib"]``, loading it with ``load() -> (lib or None, why)`` on the first call (thread-safe)."""
    if not state["tried"]:
        with lock:
            if not state["tried"]:
                state["lib"], state["why"] = load()
                state["tried"] = True
    return state["lib"]
