"""UART transmitter, 8N1, ``CLK_HZ / BAUD`` clocks per bit."""
from myhdl import Signal, always, always_comb, block, concat, intbv


@block
def uart_tx(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, tx, busy, CLK_HZ=100_000_000,
            BAUD=3_000_000):
    """Send the bytes of a byte stream on the line ``tx``.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    s_axis_tdata, s_axis_tvalid, s_axis_tready : Signal
        Bytes to send; one is taken when ``s_axis_tvalid and s_axis_tready``.
    tx : Signal
        The serial line (idles high).
    busy : Signal
        A byte is being sent.
    CLK_HZ, BAUD : int
        Clock and baud rate, at least 2 clocks per bit.
    """
    CPB = CLK_HZ // BAUD
    assert CPB >= 2, "need at least 2 clocks per bit"
    cnt = Signal(intbv(0, min=0, max=CPB + 1))
    nbit = Signal(intbv(0, min=0, max=11))
    sh = Signal(intbv(0x3FF)[10:])
    act = Signal(bool(0))

    @always_comb
    def comb():
        s_axis_tready.next = not act
        busy.next = act

    @always(clk.posedge)
    def fsm():
        if rst:
            act.next = 0
            tx.next = 1
        elif not act:
            tx.next = 1
            if s_axis_tvalid:
                sh.next = concat(True, s_axis_tdata, False)
                act.next = 1
                cnt.next = 0
                nbit.next = 0
        else:
            tx.next = sh[0]
            if cnt == CPB - 1:
                cnt.next = 0
                sh.next = sh >> 1
                nbit.next = nbit + 1
                if nbit == 9:
                    act.next = 0
            else:
                cnt.next = cnt + 1

    return comb, fsm
