"""Result path: takes the decoder core's output, computes a CRC32 and word count per stripe, queues decoded
words (words mode) and one descriptor per chunk / stripe end for the response framer."""
from myhdl import Signal, always, always_comb, block, intbv, modbv

from lutzip.firmware.engine.crc32_byte import crc32_byte

CHUNK = 128  # decoded words per DATA frame (at most; the data FIFO holds 256)


@block
def result_path(clk, rst, mode_words,
                m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                dwr, dwdata, dfull, qwr, qwdata, qfull, stripes_done, W=16, FAST_CRC=False):
    """Descriptor (64 bits): ``crc[63:32] | count[30:14] | err[13:10] | end[9] | n_data[8:0]``."""
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
            b0.next = m_axis_tdata[8:0]
            b1.next = m_axis_tdata[16:8]
    else:
        @always_comb
        def c_bytes():
            b0.next = m_axis_tdata[8:0]
            b1.next = 0

    u_c0 = crc32_byte(crc, b0, crc1, ROM=FAST_CRC)
    if W == 16:
        u_c1 = crc32_byte(crc1, b1, crc_n, ROM=FAST_CRC)
    else:
        @always_comb
        def u_c1():
            crc_n.next = crc1

    @always_comb
    def c_hs():
        m_axis_tready.next = not dfull and not qfull
        hs.next = m_axis_tvalid and not dfull and not qfull
        stripes_done.next = done

    @always_comb
    def c_out():
        dwdata.next = m_axis_tdata
        dwr.next = hs and mode_words and not m_axis_tuser
        q = intbv(0)[64:]
        cv = intbv(0)[9:]
        if mode_words and not m_axis_tuser:
            cv[:] = chunk + 1
        else:
            cv[:] = chunk
        wr = False
        if m_axis_tuser:
            q[9:0] = cv
            q[9] = 1
            q[14:10] = m_axis_tdata[4:0]
            q[31:14] = cnt
            q[64:32] = crc ^ 0xFFFFFFFF
            wr = True
        elif m_axis_tlast:
            q[9:0] = cv
            q[9] = 1
            q[31:14] = cnt + 1
            q[64:32] = crc_n ^ 0xFFFFFFFF
            wr = True
        elif cv == CHUNK:
            q[9:0] = cv
            wr = True
        qwdata.next = q
        qwr.next = hs and wr

    @always(clk.posedge)
    def seq():
        if rst:
            crc.next = 0xFFFFFFFF
            cnt.next = 0
            chunk.next = 0
            done.next = 0
        elif hs:
            if m_axis_tuser or m_axis_tlast:
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
