"""GHDL back end of the virtual board: the converted VHDL (the text synthesised for boards) in GHDL, with a
textio test bench (``lutzip/firmware/tb/vboard_tb.vhd``) that exchanges bytes with a Python bridge through
named pipes, in lock step. Much slower than Verilator; it exists to run the very VHDL a board gets."""
from __future__ import annotations

import os
import select
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from lutzip.vboard.verilator import VBoardError, _convert, _firmware_path, _log, _sources_hash, _tool_version, cache_dir

GHDL_FLAGS = ["--std=08", "-frelaxed", "-Wno-hide", "-Wno-shared"]


def build_ghdl(mode, params, core=None, quiet=True) -> Path:
    """Convert both tops to VHDL and analyse them with the test bench (cached); return the work directory."""
    if shutil.which("ghdl") is None:
        raise VBoardError("ghdl is not installed (apt-get install ghdl, or use --hdl verilog)")
    from lutzip.firmware.engine.proto_engine import get_core
    core_fn = get_core(core)
    key = f"ghdl|{mode}|{sorted(params.items())}|{core_fn.__name__}|{_tool_version(['ghdl', '--version'])}"
    d = cache_dir() / ("ghdl-" + _sources_hash(key))
    if (d / "ok").exists():
        return d
    _log(f"lutzip: converting and analysing the virtual board VHDL ({mode} mode, GHDL) in {d} ...", quiet)
    # GHDL (mcode) re-reads the analysed sources at run time: build in place, mark success last
    tmp = d
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    eng = {k: v for k, v in params.items() if k != "BAUD"}
    eng["BAUD"] = params["BAUD"] if mode == "pin" else 0
    files = [_convert("proto_engine", "vhdl", tmp, dict(eng, BAUD=0) if mode == "pin" else eng, core_fn)]
    files.append(_convert("uart_top", "vhdl", tmp, params if mode == "pin" else
                          dict(params, CLK_HZ=16_000_000, BAUD=1_000_000), core_fn))
    pkg = sorted(tmp.glob("pck_myhdl_*.vhd"))
    tb = _firmware_path() / "tb"
    srcs = [str(p) for p in pkg] + files + [str(tb / "vboard_pkg.vhd"), str(tb / "vboard_tb.vhd")]
    for cmd in (["ghdl", "-a", *GHDL_FLAGS, f"--workdir={tmp}", *srcs],
                ["ghdl", "-e", *GHDL_FLAGS, f"--workdir={tmp}", "vboard_tb"]):
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        if r.returncode:
            raise VBoardError(f"GHDL failed ({' '.join(cmd[:2])}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    (tmp / "ok").write_text("ok")
    return d


class GhdlBoard:
    """Runs ``vboard_tb`` in GHDL and bridges it to the pseudo-terminal master ``fd``."""

    def __init__(self, mode, params, core, fd, quiet=True):
        self.mode, self.params, self.core, self.fd, self.quiet = mode, params, core, fd, quiet
        self.proc = None
        self._stop = threading.Event()
        self._thread = None
        self._dir = None
        self.chunk = 32 if mode == "pin" else 4096

    def start(self) -> "GhdlBoard":
        work = build_ghdl(self.mode, self.params, self.core, self.quiet)
        self._dir = tempfile.mkdtemp(prefix="lutzip-ghdl-")
        fin, fout = os.path.join(self._dir, "in.fifo"), os.path.join(self._dir, "out.fifo")
        os.mkfifo(fin)
        os.mkfifo(fout)
        gens = [f"-gFIN={fin}", f"-gFOUT={fout}", f"-gPIN={'true' if self.mode == 'pin' else 'false'}"]
        if self.mode == "pin":
            gens.append(f"-gCPB={self.params['CLK_HZ'] // self.params['BAUD']}")
        self.proc = subprocess.Popen(["ghdl", "-r", *GHDL_FLAGS, f"--workdir={work}", "vboard_tb", *gens,
                                      "--ieee-asserts=disable"], cwd=work, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._win = open(self._open_fifo(fin, os.O_WRONLY), "w", buffering=1)
        self._rout = open(self._open_fifo(fout, os.O_RDONLY), "r")
        self._thread = threading.Thread(target=self._bridge, daemon=True)
        self._thread.start()
        return self

    def _open_fifo(self, path, flags):
        """Open a named pipe without blocking forever if GHDL dies before opening its end."""
        import time
        t_end = time.monotonic() + 60
        while True:
            try:
                if flags == os.O_RDONLY:
                    # GHDL opens this end right after the input pipe (whose opening succeeded)
                    return os.open(path, flags)
                fd = os.open(path, flags | os.O_NONBLOCK)   # ENXIO until GHDL opened its reading end
                os.set_blocking(fd, True)
                return fd
            except OSError:
                pass
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:]
                raise VBoardError(f"GHDL stopped before the virtual board came up:\n{err}")
            if time.monotonic() > t_end:
                raise VBoardError("GHDL did not open its pipes within 60 s")
            time.sleep(0.02)

    def _bridge(self):
        idle = True
        try:
            while not self._stop.is_set():
                r, _, _ = select.select([self.fd], [], [], 0.05 if idle else 0)
                data = os.read(self.fd, self.chunk) if r else b""
                if not data and idle:
                    continue
                self._win.write("D" + data.hex() + "\n")
                resp = self._rout.readline()
                if not resp:
                    break
                resp = resp.strip()
                idle = resp[:1] == "1"
                out = bytes.fromhex(resp[1:])
                while out:
                    n = os.write(self.fd, out)
                    out = out[n:]
        except (OSError, ValueError):
            pass

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        try:
            self._win.write("Q\n")
            self._win.close()
        except (OSError, ValueError, AttributeError):
            pass
        if self.proc:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        try:
            self._rout.close()
        except (OSError, AttributeError):
            pass
        shutil.rmtree(self._dir or "", ignore_errors=True)
