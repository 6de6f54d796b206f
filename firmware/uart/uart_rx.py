"""UART receiver, 8N1, ``CLK_HZ / BAUD`` clocks per bit (at least 4), majority-free mid-bit sampling."""
from myhdl import Signal, always, block, concat, enum, intbv, modbv

ST = enum("U_IDLE", "U_START", "U_DATA", "U_STOP")


@block
def uart_rx(clk, rst, rx, m_axis_tdata, m_axis_tvalid, m_axis_tready, busy, CLK_HZ=100_000_000,
            BAUD=3_000_000):
    """Receive bytes from the line ``rx`` onto a byte stream.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    rx : Signal
        The serial line (idles high).
    m_axis_tdata, m_axis_tvalid, m_axis_tready : Signal
        Received bytes; a byte stays until taken (a byte received while the previous one is still waiting
        overwrites it).
    busy : Signal
        A byte is being received.
    CLK_HZ, BAUD : int
        Clock and baud rate, at least 4 clocks per bit.
    """
    CPB = CLK_HZ // BAUD
    assert CPB >= 4, "need at least 4 clocks per bit"
    state = Signal(ST.U_IDLE)
    cnt = Signal(intbv(0, min=0, max=CPB + 1))
    nbit = Signal(modbv(0)[3:])
    sh = Signal(intbv(0)[8:])
    r1 = Signal(bool(1))
    r2 = Signal(bool(1))

    @always(clk.posedge)
    def fsm():
        r1.next = rx
        r2.next = r1
        if m_axis_tvalid and m_axis_tready:
            m_axis_tvalid.next = 0
        if rst:
            state.next = ST.U_IDLE
            m_axis_tvalid.next = 0
            busy.next = 0
        elif state == ST.U_IDLE:
            busy.next = 0
            if not r2:
                state.next = ST.U_START
                cnt.next = 1
                busy.next = 1
        elif state == ST.U_START:
            if cnt == CPB // 2:
                if r2:
                    state.next = ST.U_IDLE     # glitch, not a start bit
                else:
                    state.next = ST.U_DATA
                    cnt.next = 0
                    nbit.next = 0
            else:
                cnt.next = cnt + 1
        elif state == ST.U_DATA:
            if cnt == CPB - 1:
                cnt.next = 0
                sh.next = concat(r2, sh[8:1])
                nbit.next = nbit + 1
                if nbit == 7:
                    state.next = ST.U_STOP
            else:
                cnt.next = cnt + 1
        else:
            if cnt == CPB - 1:
                state.next = ST.U_IDLE
                if r2:
                    m_axis_tdata.next = sh
                    m_axis_tvalid.next = 1
            else:
                cnt.next = cnt + 1

    return fsm
