"""The window front's decode step is chosen once, up front: STEP="onehot" where it applies (block-RAM LUT1,
L <= 11), else the adder step; bad parameters are one-line UnsupportedErrors naming what is wrong."""
import pytest
from myhdl import ResetSignal, Signal, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.core.decoder_core import decoder_core
from lutzip.hdl.fronts.window.front_window import front_window, window_step
from lutzip.hdl.fronts.window.loop_window_onehot import onehot_width


def _core_ports(W=16):
    return dict(clk=Signal(bool(0)), rst=ResetSignal(0, active=1, isasync=False),
                s_axis_tdata=Signal(intbv(0)[32:]), s_axis_tvalid=Signal(bool(0)), s_axis_tready=Signal(bool(0)),
                s_axis_tlast=Signal(bool(0)), m_axis_tdata=Signal(intbv(0)[W:]), m_axis_tvalid=Signal(bool(0)),
                m_axis_tready=Signal(bool(0)), m_axis_tlast=Signal(bool(0)), m_axis_tuser=Signal(bool(0)),
                tbl_we=Signal(bool(0)), tbl_sel=Signal(intbv(0)[2:]), tbl_addr=Signal(intbv(0)[12:]),
                tbl_wdata=Signal(intbv(0)[32:]), err_valid=Signal(bool(0)), err_code=Signal(intbv(0)[4:]),
                busy=Signal(bool(0)))


def _front_ports(L=8):
    b = lambda: Signal(bool(0))  # noqa: E731
    return dict(clk=b(), rst=ResetSignal(0, active=1, isasync=False), s_axis_tdata=Signal(intbv(0)[32:]),
                s_axis_tvalid=b(), s_axis_tready=b(), s_axis_tlast=b(), lut1_addr=Signal(intbv(0)[L:]),
                lut1_q=Signal(intbv(0)[15:]), credit_ok=b(), flush=b(), flush_tag=Signal(intbv(0)[4:]),
                t1_valid=b(), t1_hdr=b(), t1_ferr=Signal(intbv(0)[4:]), t1_sym=Signal(intbv(0)[32:]),
                t1_cls=Signal(intbv(0)[4:]), t1_c=Signal(intbv(0)[4:]), t1_first=b(), t1_n=Signal(intbv(0)[16:]),
                t1_tag=Signal(intbv(0)[4:]), idle=b(), tok_issued=b(), inflight=b())


def _blocks(inst):
    """Names of the @block functions in an elaborated hierarchy."""
    names = [inst.func.__name__]
    for s in getattr(inst, "subs", ()):
        if hasattr(s, "subs"):
            names += _blocks(s)
    return names


@pytest.mark.parametrize("step,sync,L,built", [("onehot", True, 8, "onehot"), ("onehot", True, 11, "onehot"),
                                               ("onehot", False, 8, "adder"), ("onehot", True, 12, "adder"),
                                               ("adder", True, 8, "adder"), ("adder", False, 12, "adder")])
def test_window_step_picks_onehot_only_where_it_applies(step, sync, L, built):
    assert window_step(step, sync, L) == built
    assert (onehot_width(L) > 0) == (L <= 11)


@pytest.mark.parametrize("kw,blocks", [
    (dict(STEP="onehot"), {"loop_window_onehot", "input_fifo_defer"}),
    (dict(STEP="onehot", LUT1_RAM="distributed"), {"loop_window_adder", "input_fifo_ring"}),
    (dict(STEP="onehot", L=12), {"loop_window_adder", "input_fifo_shift"}),
    (dict(), {"loop_window_adder", "input_fifo_shift"}),
    (dict(FRONT="vector", STEP="onehot"), {"loop_vector"}),
])
def test_core_builds_the_step_window_step_names(kw, blocks):
    names = set(_blocks(decoder_core(**_core_ports(), **kw)))
    assert blocks <= names
    steps = {"loop_window_onehot", "loop_window_adder", "loop_vector"}
    assert len(names & steps) == 1  # exactly one loop stage


@pytest.mark.parametrize("kw,match", [(dict(STEP="fast"), "STEP = 'fast'"), (dict(LUT1_RAM="bram"), "LUT1_RAM"),
                                      (dict(FRONT="grid"), "FRONT"), (dict(L=13), "L = 13"), (dict(W=12), "W = 12"),
                                      (dict(LUT3_DEPTH=0), "LUT3_DEPTH")])
def test_core_rejects_bad_parameters(kw, match):
    with pytest.raises(UnsupportedError, match=match):
        decoder_core(**_core_ports(), **kw)


def test_front_window_checks_the_one_hot_ports():
    oh = dict(lut1_oh=Signal(intbv(0)[onehot_width(8):]), lut1_re=Signal(bool(0)), lut1_t2=Signal(intbv(0)[6:]))
    with pytest.raises(UnsupportedError, match="needs lut1_oh"):
        front_window(**_front_ports(), STEP="onehot")
    with pytest.raises(UnsupportedError, match="adder step is built"):
        front_window(**_front_ports(), **oh, STEP="onehot", LUT1_SYNC=False)
    with pytest.raises(UnsupportedError, match="lut1_oh has 5 bits"):
        front_window(**_front_ports(), lut1_oh=Signal(intbv(0)[5:]), lut1_re=oh["lut1_re"], lut1_t2=oh["lut1_t2"],
                     STEP="onehot")
    assert "loop_window_onehot" in _blocks(front_window(**_front_ports(), **oh, STEP="onehot"))
