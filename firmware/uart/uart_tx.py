"""UART transmitter, 8N1, ``CLK_HZ / BAUD`` clocks per bit."""
from myhdl import Signal, always, always_comb, block, concat, intbv


@block
def uart_tx(clk, rst, s_tdata, s_tvalid, s_tready, tx, busy, CLK_HZ=100_000_000, BAUD=3_000_000):
    """Takes a byte when ``s_tvalid and s_tready``; ``tx`` idles high."""
    CPB = CLK_HZ // BAUD
    assert CPB >= 2, "need at least 2 clocks per bit"
    cnt = Signal(intbv(0, min=0, max=CPB + 1))
    nbit = Signal(intbv(0, min=0, max=11))
    sh = Signal(intbv(0x3FF)[10:])
    act = Signal(bool(0))

    @always_comb
    def comb():
        s_tready.next = not act
        busy.next = act

    @always(clk.posedge)
    def fsm():
        if rst:
            act.next = 0
            tx.next = 1
        elif not act:
            tx.next = 1
            if s_tvalid:
                sh.next = concat(True, s_tdata, False)
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
