"""The converted VHDL of ``lutzip_axi`` in GHDL (--std=08) with a file-driven test bench
(``firmware/axi/tb/tb_lutzip_axi.vhd``): register writes and reads, transfers with ``tvalid`` / ``tready``
always high. Slow; for checking the VHDL text, not for speed."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from lutzip.firmware.axi.sim import DEFAULTS, AxiSimError, convert_top

TB = Path(__file__).resolve().parent / "tb" / "tb_lutzip_axi.vhd"


def run_ghdl(script, workdir, timeout=900, **params):
    """Run ``script`` on the converted VHDL in GHDL.

    Parameters
    ----------
    script : list of tuples
        ``("W", off, val)``, ``("R", off)`` or ``("T", words)``.
    workdir : str or Path
        Where the VHDL, the GHDL library and the files go.

    Returns
    -------
    list
        Per ``R``: the value; per ``T``: ``(bytes, tlast seen, cycles)``.
    """
    if shutil.which("ghdl") is None:
        raise AxiSimError("ghdl is not installed (apt-get install ghdl)")
    p = dict(DEFAULTS, **params)
    wd = Path(workdir).resolve()
    wd.mkdir(parents=True, exist_ok=True)
    vhd = convert_top(wd / "vhdl", "vhdl", **p)
    lines = []
    for cmd in script:
        if cmd[0] == "W":
            lines.append(f"W {cmd[1]:08X} {cmd[2] & 0xFFFFFFFF:08X}")
        elif cmd[0] == "R":
            lines.append(f"R {cmd[1]:08X}")
        elif cmd[0] == "T":
            lines.append(f"T {len(cmd[1]):08X}")
            lines += [f"{int(w) & 0xFFFFFFFF:08X}" for w in cmd[1]]
    (wd / "stimulus.txt").write_text("\n".join(lines) + "\n")
    lib = wd / "ghdl-work"
    lib.mkdir(exist_ok=True)
    srcs = sorted(vhd.parent.glob("pck_myhdl_*.vhd")) + [vhd, TB]
    for cmd in (["ghdl", "-a", "--std=08", f"--workdir={lib}", *map(str, srcs)],
                ["ghdl", "--elab-run", "--std=08", f"--workdir={lib}", "tb_lutzip_axi", f"-gSTIM={wd / 'stimulus.txt'}",
                 f"-gOUTF={wd / 'out_ghdl.txt'}", f"-gOUT_BYTES={p['OUT_BYTES']}", "--ieee-asserts=disable"]):
        r = subprocess.run(cmd, cwd=wd, capture_output=True, text=True, timeout=timeout)
        if r.returncode:
            raise AxiSimError(f"{' '.join(cmd[:2])} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    res, beats = [], bytearray()
    last = False
    for ln in (wd / "out_ghdl.txt").read_text().split("\n"):
        f = ln.split()
        if not f:
            continue
        if f[0] == "R":
            res.append(int(f[1], 16))
        elif f[0] == "B":
            d, k = int(f[1], 16), int(f[2], 16)
            beats += bytes(d >> (8 * b) & 0xFF for b in range(p["OUT_BYTES"]) if k >> b & 1)
            last = f[3] == "1"
        elif f[0] == "E":
            res.append((bytes(beats), last, int(f[1])))
            beats, last = bytearray(), False
    return res
