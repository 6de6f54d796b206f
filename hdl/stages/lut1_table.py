"""LUT1: the class table read in the decoder's one-cycle loop (docs/FORMAT.md section 2).

Interface
---------
clk             clock
we, waddr, wdata   run-time write port (``waddr`` L bits, ``wdata`` 15 bits: valid|class|c|c+k)
raddr, rdata    synchronous read: ``rdata`` holds ``LUT1[raddr]`` one clock after ``raddr`` (block RAM:
                SB_RAM40_4K / DP16KD / RAMB18). The bit window drives ``raddr`` with the prefix of its
                *next* state, so ``rdata`` is the entry of the current prefix: the loop is
                RAM output -> c+k -> next pointer / window -> prefix -> RAM address.
                ``SYNC=False``: asynchronous read (distributed RAM); the bit window then addresses it with
                its registered current prefix: the same loop with the register before the RAM.
re              (with ``OH``) read enable: while low the outputs keep their entry
rdata_t2        (with ``OH``) a second copy of the entry's ``c+k`` (6 bits), stored beside the one-hot copy
rdata_oh        (``OH`` > 0, synchronous read only) the entry's ``c+k`` one-hot: bit ``d - 1`` set for
                ``c+k = d``, 1 <= d <= OH, on a valid entry; all zero otherwise. Derived from ``wdata``
                when the entry is written and stored beside it (block RAM), so the bit window can shift by
                ``c+k`` with an AND-OR instead of an adder and a multiplexer tree (iCE40).
L               address bits (2^L entries)
SYNC            True: synchronous read (block RAM), False: asynchronous read (distributed RAM / LUTs)
OH              width of ``rdata_oh`` (0: no one-hot copy)
WIDTH           entry bits: 15, or 16 with two code tables (bit 15: the next state; ``L`` then counts the state
                bit too: ``raddr`` = state << (L-1) | prefix)

Contents survive reset. For N interleaved stripes each lane gets its own read port (or copy) of this table.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def lut1_table(clk, we, waddr, wdata, raddr, rdata, rdata_oh=None, re=None, rdata_t2=None, L=8, SYNC=True, OH=0,
               WIDTH=15):
    mem = [Signal(intbv(0)[WIDTH:]) for _ in range(1 << L)]
    if OH and (not SYNC or re is None or rdata_t2 is None):
        raise ValueError("LUT1: the one-hot copy (OH) needs the synchronous read and a read enable")

    if not SYNC:
        @always(clk.posedge)
        def lut1_write():
            if we:
                mem[waddr].next = wdata

        @always_comb
        def lut1_read():
            rdata.next = mem[raddr]

        return lut1_write, lut1_read

    if OH:
        # the one-hot c+k and a second copy of c+k (its own adder in the bit window: fewer loads per net)
        mem_oh = [Signal(intbv(0)[OH + 6:]) for _ in range(1 << L)]
        woh = Signal(intbv(0)[OH + 6:])
        q_oh = Signal(intbv(0)[OH + 6:])

        @always_comb
        def lut1_onehot():
            v = intbv(0)[OH + 6:]
            for d in range(OH):
                if wdata[14] and wdata[6:0] == d + 1:
                    v[d] = 1
            v[OH + 6:OH] = wdata[6:0]
            woh.next = v

        @always(clk.posedge)
        def lut1_port():
            # no read while writing: the ports never collide, so synthesis needs no bypass logic after the RAM
            if we:
                mem[waddr].next = wdata
                mem_oh[waddr].next = woh
            elif re:
                rdata.next = mem[raddr]
                q_oh.next = mem_oh[raddr]

        @always_comb
        def lut1_split():
            rdata_oh.next = q_oh[OH:]
            rdata_t2.next = q_oh[OH + 6:OH]

        return lut1_onehot, lut1_port, lut1_split

    @always(clk.posedge)
    def lut1_port():
        # no read while writing: the ports never collide, so synthesis needs no bypass logic after the RAM
        if we:
            mem[waddr].next = wdata
        else:
            rdata.next = mem[raddr]

    return lut1_port
