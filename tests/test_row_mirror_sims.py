"""The row mirror stage (:mod:`lutzip.hdl.stages.row_mirror`) converted and simulated in GHDL (VHDL, --std=08),
Icarus and Verilator (Verilog), and in MyHDL, from one self-checking bench (:func:`tb_row_mirror`, converted with
the stage): the stage's input words, descriptors and expected output (row stripes from ``symmetry``, bad
descriptors and error markers from the stage's model: tests/row_mirror_cases.py) are ROMs in the bench, source
pauses and sink stalls come from LFSRs, a checker counts the output words that differ from the expected ones and
the error pulses. Every simulator must report every word right and the same end cycle."""
import hashlib
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
from myhdl import ResetSignal, Signal, StopSimulation, always_comb, always_seq, block, concat, delay, instance, \
    intbv, modbv

from lutzip import cache
from lutzip.hdl.flows.convert import convert_block
from lutzip.hdl.stages.row_mirror import row_mirror

from row_mirror_cases import error_case, good_case, row_stripe

W = 16
MAX_N = 64


@block
def tb_row_mirror(in_rom, d_rom_lo, d_rom_hi, exp_rom, n_in, n_d, n_exp, n_err, err_sum, gap, dgap, stall,
                  max_cycles):
    """Self-checking bench: ``*_rom`` tuples of ints (input ``user|last|data``; descriptor low 32 bits = modes,
    high = ``err|rows|neg|N-1``; expected ``user|last|data``), ``gap`` / ``dgap`` / ``stall`` in 16ths."""
    clk = Signal(bool(0))
    rst = ResetSignal(1, active=1, isasync=False)
    s_data, m_data = Signal(intbv(0)[W:]), Signal(intbv(0)[W:])
    s_valid, s_ready, s_last, s_user = [Signal(bool(0)) for _ in range(4)]
    d_err, d_neg, d_nm1 = Signal(intbv(0)[4:]), Signal(intbv(0)[2:]), Signal(intbv(0)[16:])
    d_rows, d_valid, d_ready = [Signal(bool(0)) for _ in range(3)]
    d_modes = Signal(intbv(0)[32:])
    m_valid, m_ready, m_last, m_user = [Signal(bool(0)) for _ in range(4)]
    err_valid, busy = Signal(bool(0)), Signal(bool(0))
    err_code = Signal(intbv(0)[4:])
    dut = row_mirror(clk, rst, s_data, s_valid, s_ready, s_last, s_user, d_err, d_rows, d_neg, d_nm1, d_modes,
                     d_valid, d_ready, m_data, m_valid, m_ready, m_last, m_user, err_valid, err_code, busy,
                     MAX_N=MAX_N)
    i = Signal(intbv(0, min=0, max=len(in_rom)))
    j = Signal(intbv(0, min=0, max=len(d_rom_lo)))
    o = Signal(intbv(0)[32:])
    oi = Signal(intbv(0, min=0, max=len(exp_rom)))
    in_q = Signal(intbv(0)[W + 2:])
    d_lo = Signal(intbv(0)[32:])
    d_hi = Signal(intbv(0)[32:])
    e_q = Signal(intbv(0)[W + 2:])
    la = Signal(modbv(0xACE1)[16:])
    lb = Signal(modbv(0x1D2C)[16:])
    lc = Signal(modbv(0x7F31)[16:])
    bad = Signal(intbv(0)[32:])
    errs = Signal(intbv(0)[32:])
    esum = Signal(intbv(0)[32:])
    cyc = Signal(intbv(0)[32:])
    last_out = Signal(intbv(0)[32:])

    @always_comb
    def roms_in():
        in_q.next = in_rom[i]

    @always_comb
    def roms_dlo():
        d_lo.next = d_rom_lo[j]

    @always_comb
    def roms_dhi():
        d_hi.next = d_rom_hi[j]

    @always_comb
    def exp_index():
        if o < n_exp:
            oi.next = o
        else:
            oi.next = n_exp

    @always_comb
    def roms_exp():
        e_q.next = exp_rom[oi]

    @always_comb
    def fields():
        s_data.next = in_q[W:0]
        s_last.next = in_q[W]
        s_user.next = in_q[W + 1]
        d_modes.next = d_lo
        d_nm1.next = d_hi[16:0]
        d_neg.next = d_hi[18:16]
        d_rows.next = d_hi[18]
        d_err.next = d_hi[23:19]
        m_ready.next = lc[4:0] >= stall

    @always_seq(clk.posedge, reset=rst)
    def drive():
        if la[0]:
            la.next = (la >> 1) ^ 0xB400
        else:
            la.next = la >> 1
        if lb[0]:
            lb.next = (lb >> 1) ^ 0xB400
        else:
            lb.next = lb >> 1
        if lc[0]:
            lc.next = (lc >> 1) ^ 0xB400
        else:
            lc.next = lc >> 1
        cyc.next = cyc + 1
        # sources: an offered item stays until taken; a new one is offered unless the LFSR says pause
        if s_valid and s_ready:
            i.next = i + 1
            s_valid.next = i + 1 < n_in and la[4:0] >= gap
        elif not s_valid:
            s_valid.next = i < n_in and la[4:0] >= gap
        if d_valid and d_ready:
            j.next = j + 1
            d_valid.next = j + 1 < n_d and lb[4:0] >= dgap
        elif not d_valid:
            d_valid.next = j < n_d and lb[4:0] >= dgap
        if m_valid and m_ready:
            if concat(m_user, m_last, m_data) != e_q:
                bad.next = bad + 1
            o.next = o + 1
            last_out.next = cyc
        if err_valid:
            errs.next = errs + 1
            esum.next = esum + err_code

    @instance
    def clock():
        rst.next = 1
        for r in range(3):
            yield delay(5)
            clk.next = 1
            yield delay(5)
            clk.next = 0
        rst.next = 0
        k = 0
        quiet = 0
        while k < max_cycles and quiet < 20:
            yield delay(5)
            clk.next = 1
            yield delay(5)
            clk.next = 0
            k = k + 1
            if busy or m_valid or s_valid:
                quiet = 0
            else:
                quiet = quiet + 1
        print("RESULT %d %d %d %d %d %d" % (o, bad, errs, esum, last_out, k))
        raise StopSimulation

    return dut, roms_in, roms_dlo, roms_dhi, exp_index, roms_exp, fields, drive, clock


def bench_case(seed=21):
    rng = np.random.default_rng(seed)
    words, descs, expected = good_case(rng, 5, W, max_n=16)
    for n in (65, 2, 3):
        d, c, f = row_stripe(rng, W, n=n, r=2, modes=[2, 1])
        descs.append(d)
        words += c
        expected += f
    w2, d2, e2, errs = error_case(rng, 8, W, max_n=24)
    words, descs, expected = words + w2, descs + d2, expected + e2
    in_rom = tuple(u << (W + 1) | l << W | d for d, l, u in words) + (0,)
    d_lo = tuple(int(d[4]) for d in descs) + (0,)
    d_hi = tuple(e << 19 | r << 18 | k << 16 | nm1 for e, r, k, nm1, _ in descs) + (0,)
    exp = tuple(u << (W + 1) | l << W | d for d, l, u in expected) + (0,)
    return dict(in_rom=in_rom, d_rom_lo=d_lo, d_rom_hi=d_hi, exp_rom=exp, n_in=len(words), n_d=len(descs),
                n_exp=len(expected), n_err=len(errs), err_sum=sum(errs))


PAUSES = dict(gap=5, dgap=3, stall=6, max_cycles=20000)   # in 16ths: ~30 % source pauses, ~40 % sink stalls


def _result(text, case):
    m = re.findall(r"RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)", text)
    assert m, text[-2000:]
    o, bad, errs, esum, last_out, k = map(int, m[-1])
    assert bad == 0, f"{bad} words differ"
    assert o == case["n_exp"], (o, case["n_exp"])
    assert (errs, esum) == (case["n_err"], case["err_sum"])
    assert k < PAUSES["max_cycles"], "timed out"
    return last_out


def _convert(hdl, tmp_path, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inst = tb_row_mirror(**case, **PAUSES)
        return convert_block(inst, tmp_path, "tb_row_mirror", hdl)


_CYCLES = {}


def _myhdl_cycles(case):
    key = "myhdl"
    if key not in _CYCLES:
        import io
        from contextlib import redirect_stdout
        buf = io.StringIO()
        inst = tb_row_mirror(**case, **PAUSES)
        with redirect_stdout(buf):
            inst.run_sim(quiet=True)
        inst.quit_sim()
        _CYCLES[key] = _result(buf.getvalue(), case)
    return _CYCLES[key]


CASE = bench_case()


def test_bench_myhdl():
    assert CASE["n_err"] > 0
    _myhdl_cycles(CASE)


def _run(cmd, cwd, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return r.stdout + r.stderr, r.returncode


VERILATOR = ("--binary", "--timing", "-Wno-fatal", "-Wno-lint", "-Wno-style", "-O0", "-CFLAGS", "-O0")


def _verilator_exe(v, root):
    """The Verilator build of the converted bench ``v``, kept in the build cache (keyed by the package's HDL sources,
    this bench's and its cases' source, the case, the tool version and the flags; MyHDL's text itself varies with
    the hash seed): a fresh build takes ~15 s of CPU."""
    ver = subprocess.run(["verilator", "--version"], capture_output=True, text=True).stdout.strip()
    here = Path(__file__).resolve().parent
    mine = b"".join((here / f).read_bytes() for f in ("test_row_mirror_sims.py", "row_mirror_cases.py"))
    key = cache.sources_hash("row-mirror-bench", hashlib.sha256(mine).hexdigest(), repr(sorted(CASE.items())),
                             repr(PAUSES), ver, VERILATOR)

    def build(tmp):
        shutil.copy(v, tmp / v.name)
        out, rc = _run(["verilator", *VERILATOR, "--top-module", "tb_row_mirror", "-Mdir", "obj", "-j", "2", v.name],
                       tmp, timeout=1800)
        if rc != 0:
            raise RuntimeError(out[-3000:])

    return cache.atomic_dir(root / f"row-mirror-bench-verilator-{key}", build) / "obj" / "Vtb_row_mirror"


@pytest.mark.parametrize("sim", ["ghdl", "icarus", "verilator"])
def test_bench_converted(sim, tmp_path, hdl_cache):
    tool = {"ghdl": "ghdl", "icarus": "iverilog", "verilator": "verilator"}[sim]
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")
    if sim == "ghdl":
        v = _convert("vhdl", tmp_path, CASE)
        pkgs = sorted(str(p) for p in tmp_path.glob("pck_myhdl_*.vhd"))
        out, rc = _run(["ghdl", "-a", "--std=08", *pkgs, str(v)], tmp_path)
        assert rc == 0, out
        out, rc = _run(["ghdl", "-e", "--std=08", "tb_row_mirror"], tmp_path)
        assert rc == 0, out
        out, _ = _run(["ghdl", "-r", "--std=08", "tb_row_mirror"], tmp_path)
    elif sim == "icarus":
        v = _convert("verilog", tmp_path, CASE)
        out, rc = _run(["iverilog", "-g2012", "-o", "tb.vvp", str(v)], tmp_path)
        assert rc == 0, out
        out, _ = _run(["vvp", "-n", "tb.vvp"], tmp_path)
    else:
        v = _convert("verilog", tmp_path, CASE)
        out, _ = _run([str(_verilator_exe(v, hdl_cache))], tmp_path)
    last_out = _result(out, CASE)
    assert last_out == _myhdl_cycles(CASE)     # the same cycle as MyHDL
