"""Board glue shared by the board tops: power-on reset, reset-button synchroniser and a heartbeat.

Interface
---------
clk         board clock
btn         reset button pin (asynchronous); ``BTN_ACTIVE_LOW`` selects its polarity
rst         synchronous active-high reset for the design: held for 2^POR_BITS cycles after configuration
            (all three families load flip-flops with 0) and while the button is pressed
heartbeat   toggles every 2^(HB_BITS-1) cycles: shows the bitstream runs
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def board_glue(clk, btn, rst, heartbeat, BTN_ACTIVE_LOW=True, POR_BITS=4, HB_BITS=24):
    btn_s = Signal(intbv(0)[2:])          # two-flop synchroniser
    por = Signal(intbv(0)[POR_BITS + 1:])  # counts up to 2^POR_BITS and stays there
    hb = Signal(modbv(0)[HB_BITS:])
    pressed = Signal(bool(0))

    @always(clk.posedge)
    def seq():
        btn_s.next = (btn_s[0] << 1) | btn
        if not por[POR_BITS]:
            por.next = por + 1
        hb.next = hb + 1

    @always_comb
    def comb():
        pressed.next = (not btn_s[1]) if BTN_ACTIVE_LOW else btn_s[1]
        rst.next = (not por[POR_BITS]) or pressed
        heartbeat.next = hb[HB_BITS - 1]

    return seq, comb
