"""Result path: takes the decoder core's output, computes a CRC32 and word count per stripe, queues decoded
words (words mode) and one descriptor per chunk / stripe end for the response framer."""
from myhdl import Signal, always, always_comb, block, intbv, modbv

from lutzip.firmware.engine.crc32_byte import crc32_byte

CHUNK = 128  # decoded words per DATA frame (at most; the data FIFO holds 256)


@block
def result_path(clk, rst, mode_words,
                s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, s_axis_tuser,
                m_axis_data_tdata, m_axis_data_tvalid, m_axis_data_tready,
                m_axis_desc_tdata, m_axis_desc_tvalid, m_axis_desc_tready,
                stripes_done, W=16, FAST_CRC=False, DESC_REG=False):
    """CRC32 and word count per stripe; decoded words (words mode) and descriptors out.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    mode_words : Signal
        Words mode: every decoded word goes to ``m_axis_data_*`` too.
    s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, s_axis_tuser : Signal
        The decoder core's output stream (``tuser``: the stripe ended with a decode error, code in ``tdata``).
    m_axis_data_tdata, m_axis_data_tvalid, m_axis_data_tready : Signal
        Decoded words (to the data FIFO).
    m_axis_desc_tdata, m_axis_desc_tvalid, m_axis_desc_tready : Signal
        Descriptors (64 bits) to the descriptor FIFO: ``crc[63:32] | count[30:14] | err[13:10] | end[9] |
        n_data[8:0]``, one per ``CHUNK`` words sent and one per stripe end. A word is taken only while both
        FIFOs have room (``tvalid`` of both outputs depends on both ``tready``).
    stripes_done : Signal
        16-bit wrapping count of stripes finished.
    W : int
        Word width (8 or 16).
    FAST_CRC : bool
        CRC through table ROMs.
    DESC_REG : bool
        A stripe's end descriptor (last word or decode error) is written a cycle after its word, its CRC from
        the CRC register, so the CRC logic ends in flip-flops instead of the descriptor FIFO's write data (the
        two-domain ULX3S build at 100 MHz, through ``proto_engine``'s ``RESULT_REG``). No word is taken in that
        cycle (one cycle more per stripe), and ``stripes_done`` counts the stripe when its descriptor is
        written: the descriptor and the count are one cycle later than without, together. False converts to
        the HDL of before.
    """
    crc = Signal(intbv(0xFFFFFFFF)[32:])
    cnt = Signal(intbv(0)[17:])
    chunk = Signal(intbv(0)[9:])
    crc_n = Signal(intbv(0)[32:])
    hs = Signal(bool(0))
    done = Signal(modbv(0)[16:])

    b0 = Signal(intbv(0)[8:])
    b1 = Signal(intbv(0)[8:])
    crc1 = Signal(intbv(0)[32:])

    if W == 16:
        @always_comb
        def c_bytes():
            b0.next = s_axis_tdata[8:0]
            b1.next = s_axis_tdata[16:8]
    else:
        @always_comb
        def c_bytes():
            b0.next = s_axis_tdata[8:0]
            b1.next = 0

    u_c0 = crc32_byte(crc, b0, crc1, ROM=FAST_CRC)
    if W == 16:
        u_c1 = crc32_byte(crc1, b1, crc_n, ROM=FAST_CRC)
    else:
        @always_comb
        def u_c1():
            crc_n.next = crc1

    if DESC_REG:
        pq = Signal(bool(0))                # a stripe's end descriptor waits for its CRC (this cycle)
        qlo = Signal(intbv(0)[32:])         # its bits 31..0

        @always_comb
        def c_hs_r():
            s_axis_tready.next = m_axis_data_tready and m_axis_desc_tready and not pq
            hs.next = s_axis_tvalid and m_axis_data_tready and m_axis_desc_tready and not pq
            stripes_done.next = done

        @always_comb
        def c_out_r():
            m_axis_data_tdata.next = s_axis_tdata
            m_axis_data_tvalid.next = hs and mode_words and not s_axis_tuser
            q = intbv(0)[64:]
            if pq:
                q[32:0] = qlo
                q[64:32] = crc ^ 0xFFFFFFFF
                m_axis_desc_tvalid.next = 1
            else:
                # a chunk's descriptor (words mode, CHUNK words sent, no stripe end): as without DESC_REG, the
                # chunk's end a compare with a constant (chunk + 1 == CHUNK was an adder and a carry chain into
                # the descriptor FIFO's write enable, 10.8 ns)
                q[9:0] = chunk + 1
                m_axis_desc_tvalid.next = (hs and mode_words and not s_axis_tuser and not s_axis_tlast
                                           and chunk == CHUNK - 1)
            m_axis_desc_tdata.next = q

        @always(clk.posedge)
        def seq_r():
            if rst:
                crc.next = 0xFFFFFFFF
                cnt.next = 0
                chunk.next = 0
                done.next = 0
                pq.next = 0
            elif pq:
                if m_axis_desc_tready:
                    pq.next = 0
                    crc.next = 0xFFFFFFFF
                    cnt.next = 0
                    chunk.next = 0
                    done.next = done + 1
            elif hs:
                if s_axis_tuser or s_axis_tlast:
                    # the end descriptor's other fields now, its CRC (crc_n after the last word, crc before a
                    # decode error) from the CRC register in the next cycle
                    v = intbv(0)[32:]
                    if mode_words and not s_axis_tuser:
                        v[9:0] = chunk + 1
                    else:
                        v[9:0] = chunk
                    v[9] = 1
                    if s_axis_tuser:
                        v[14:10] = s_axis_tdata[4:0]
                        v[31:14] = cnt
                    else:
                        v[31:14] = cnt + 1
                        crc.next = crc_n
                    qlo.next = v
                    pq.next = 1
                else:
                    crc.next = crc_n
                    cnt.next = cnt + 1
                    if mode_words:
                        if chunk == CHUNK - 1:      # (chunk + 1 == CHUNK became a carry chain: 2026-12-07)
                            chunk.next = 0
                        else:
                            chunk.next = chunk + 1

        return c_bytes, u_c0, u_c1, c_hs_r, c_out_r, seq_r

    @always_comb
    def c_hs():
        s_axis_tready.next = m_axis_data_tready and m_axis_desc_tready
        hs.next = s_axis_tvalid and m_axis_data_tready and m_axis_desc_tready
        stripes_done.next = done

    @always_comb
    def c_out():
        m_axis_data_tdata.next = s_axis_tdata
        m_axis_data_tvalid.next = hs and mode_words and not s_axis_tuser
        q = intbv(0)[64:]
        cv = intbv(0)[9:]
        if mode_words and not s_axis_tuser:
            cv[:] = chunk + 1
        else:
            cv[:] = chunk
        wr = False
        if s_axis_tuser:
            q[9:0] = cv
            q[9] = 1
            q[14:10] = s_axis_tdata[4:0]
            q[31:14] = cnt
            q[64:32] = crc ^ 0xFFFFFFFF
            wr = True
        elif s_axis_tlast:
            q[9:0] = cv
            q[9] = 1
            q[31:14] = cnt + 1
            q[64:32] = crc_n ^ 0xFFFFFFFF
            wr = True
        elif cv == CHUNK:
            q[9:0] = cv
            wr = True
        m_axis_desc_tdata.next = q
        m_axis_desc_tvalid.next = hs and wr

    @always(clk.posedge)
    def seq():
        if rst:
            crc.next = 0xFFFFFFFF
            cnt.next = 0
            chunk.next = 0
            done.next = 0
        elif hs:
            if s_axis_tuser or s_axis_tlast:
                crc.next = 0xFFFFFFFF
                cnt.next = 0
                chunk.next = 0
                done.next = done + 1
            else:
                crc.next = crc_n
                cnt.next = cnt + 1
                if mode_words:
                    if chunk + 1 == CHUNK:
                        chunk.next = 0
                    else:
                        chunk.next = chunk + 1

    return c_bytes, u_c0, u_c1, c_hs, c_out, seq
