"""The one build cache of lutzip: converted HDL, simulator builds and virtual boards.

Location: ``$LUTZIP_CACHE`` if set, else ``$XDG_CACHE_HOME/lutzip``, else ``~/.cache/lutzip``; each kind of
build has a sub-folder (``cache_dir("hdl")``, ``cache_dir("vboard")`` ...).

A build's key is :func:`sources_hash`: one hash over *every* file that can feed a build (all sources of the
``lutzip.hdl`` and ``lutzip.firmware`` packages, recursively, with their relative paths), the MyHDL version
and whatever else the caller passes (parameters, tool versions, flags). Moving a file into a sub-folder, or
editing any of them, gives a new key, so a cached build never silently misses an edit.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

#: File endings that count as build sources.
SOURCE_SUFFIXES = (".py", ".v", ".sv", ".vhd", ".cpp", ".c", ".h")


def cache_root() -> Path:
    """The cache folder (created): ``$LUTZIP_CACHE``, else ``$XDG_CACHE_HOME/lutzip``, else ``~/.cache/lutzip``.

    A relative ``XDG_CACHE_HOME`` is ignored, as the XDG base directory specification says.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(xdg):
        xdg = os.path.join(os.path.expanduser("~"), ".cache")
    p = Path(os.environ.get("LUTZIP_CACHE") or os.path.join(xdg, "lutzip"))
    p.mkdir(parents=True, exist_ok=True)
    return p


def cache_dir(kind: str) -> Path:
    """The cache sub-folder of one kind of build (created).

    Parameters
    ----------
    kind : str
        ``"hdl"``, ``"vboard"``, ...: one folder per kind of build under :func:`cache_root`.
    """
    p = cache_root() / kind
    p.mkdir(parents=True, exist_ok=True)
    return p


def source_files() -> list:
    """Every build source of ``lutzip.hdl`` and ``lutzip.firmware`` as ``(package, relative path, path)``."""
    import lutzip.firmware as fw
    import lutzip.hdl as hdl
    out = []
    for pkg in (hdl, fw):
        base = Path(pkg.__file__).resolve().parent
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts:
                out.append((pkg.__name__, p.relative_to(base).as_posix(), p))
    return out


def sources_hash(*extra) -> str:
    """A build key over every build source (:func:`source_files`), the MyHDL version and ``extra``.

    Parameters
    ----------
    *extra
        Whatever else the build depends on (parameters, tool versions, flags): anything with a stable repr.

    Returns
    -------
    str
        16 hex digits of a SHA-256 over the above, each file with its package and relative path.
    """
    import myhdl
    files = source_files()
    h = hashlib.sha256(f"myhdl {myhdl.__version__}|{extra!r}".encode())
    for pkg, rel, p in files:
        h.update(f"{pkg}/{rel}\0".encode())
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def atomic_dir(final: Path, build) -> Path:
    """Build a folder once: run ``build(tmpdir)`` beside ``final`` and rename it to ``final`` when it returns.

    Parameters
    ----------
    final : pathlib.Path
        Where the finished build lives; if it exists, it is returned at once and ``build`` is not called.
    build : callable(pathlib.Path)
        Fills the (empty) temporary folder it is given; an exception removes the folder and propagates, so
        an interrupted or failed build is never reused. If another process finishes first, its folder wins.

    Returns
    -------
    pathlib.Path
        ``final``.
    """
    final = Path(final)
    if final.exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".", dir=final.parent))
    try:
        build(tmp)
        try:
            tmp.rename(final)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
