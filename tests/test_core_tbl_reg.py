"""The decoder core's ``TBL_REG`` (docs/CORE.md, decoder_core): the decoded table writes from flip-flops, each
table written one cycle later (the two-domain ULX3S build, whose LUT1 write decode fanned out to the vector front's
TL block RAMs was its critical path at 100 MHz).

The stimulus writes LUT1 last, in reverse address order (state A's prefix 0 last), and starts the stream in the
cycle after the last write (``table_gap=0``): the ULX3S engine's worst case (its ``TABLE_REG`` delays the table
port, its ``CORE_IN_REG`` the stream, a cycle each). The registered core must give the same words in the same
cycles as the core without the register; a core whose writes come two more cycles late must fail on the same
stimulus (so the stimulus does use the last writes at once); the converted HDL must match MyHDL cycle for cycle
(GHDL, Icarus, Verilator: ``-m slow``).
"""
import dataclasses
import functools

import numpy as np
import pytest

from lutzip import api
from lutzip.codec import container as ct
from lutzip.errors import UnsupportedError
from lutzip.hdl.core.ports import CoreParams
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.convert import convert_core
from lutzip.hdl.flows.vectors import container_vectors

from tbl_late_core import late_core


def need(sim):
    why = S.available(sim)
    if why:
        pytest.skip(f"{sim} not usable here: {why}")


def lut1_last_vectors(states, seed=4, n=3000):
    """A real stream (``states`` code tables, vector front) whose table image writes LUT1 last, in reverse order."""
    rng = np.random.default_rng(seed)
    a = np.round(rng.laplace(0, 3, n))
    a = np.clip(a, -128, 127).astype(np.int8)
    a[rng.random(n) < 0.75] = 0
    c = ct.from_bytes(api.compress({"w": a}, states=states, stripe_len=700))
    vec = container_vectors(c, "w", W=16, FRONT="vector", STATES=states)
    ops = [o for o in vec.table_ops if o[0] != 0] + [o for o in vec.table_ops if o[0] == 0][::-1]
    assert ops[-1][:2] == (0, 0) and len(ops) == len(vec.table_ops)
    return dataclasses.replace(vec, table_ops=ops)


def test_parameter_check():
    for bad in (2, True, -1, "1"):
        with pytest.raises(UnsupportedError, match="TBL_REG"):
            CoreParams.make(TBL_REG=bad)
    assert CoreParams.make(TBL_REG=1).TBL_REG == 1


def test_converted_decode_is_registered(tmp_path):
    """TBL_REG=1: LUT1's write enable is assigned in a clocked process; TBL_REG=0: in a combinational one."""
    for reg in (0, 1):
        v = convert_core(tmp_path / str(reg), "verilog", L=6, LUT3_DEPTH=64, FRONT="vector", TBL_REG=reg).read_text()
        assert ("always @(posedge clk) begin: tbl_decode" in v) == bool(reg)
        assert ("lut1_we <= (tbl_we" in v) == bool(reg) and ("assign lut1_we = (tbl_we" in v) != bool(reg)


_runs = {}


def _myhdl(states, reg, delay=0, **stim):
    key = (states, reg, delay, tuple(sorted(stim.items())))
    if key not in _runs:
        vec = lut1_last_vectors(states)
        st = S.make_stimulus(vec, table_gap=0, **stim)
        core = functools.partial(late_core, DELAY=delay) if delay else None
        import tempfile
        with tempfile.TemporaryDirectory() as t:
            _runs[key] = vec, st, S.run("myhdl", st, t, {**vec.params, "TBL_REG": reg}, core=core)
    return _runs[key]


@pytest.mark.parametrize("states", [1, 2])
def test_registered_writes_same_words_same_cycles(states):
    for stim in ({}, {"in_gap": 0.2, "out_stall": 0.3, "seed": 8}):
        vec, _, plain = _myhdl(states, 0, **stim)
        _, _, reg = _myhdl(states, 1, **stim)
        assert S.first_difference(plain, vec.expected) is None
        assert S.first_difference(reg, vec.expected) is None
        assert S.first_cycle_difference(plain, reg) is None


def test_stimulus_catches_late_writes():
    """One more cycle of delay still decodes (the margin); two more do not: the stimulus uses the last LUT1
    writes in the first cycles of the stream."""
    vec, _, late1 = _myhdl(2, 1, delay=1)
    assert S.first_difference(late1, vec.expected) is None
    vec, _, late2 = _myhdl(2, 1, delay=2)
    assert S.first_difference(late2, vec.expected) is not None


@pytest.mark.slow
@pytest.mark.parametrize("sim", [s for s in S.SIMULATORS if s != "myhdl"])
def test_converted_hdl_tbl_reg(sim, tmp_path, hdl_cache):
    need(sim)
    for states in (1, 2):
        vec, st, ref = _myhdl(states, 1, in_gap=0.2, out_stall=0.3, seed=8)
        out = S.run(sim, st, tmp_path / str(states), {**vec.params, "TBL_REG": 1}, build_dir=hdl_cache)
        assert S.first_difference(out, vec.expected) is None
        assert S.first_cycle_difference(ref, out) is None
