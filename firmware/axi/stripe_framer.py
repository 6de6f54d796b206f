"""Stripe framer of ``lutzip_axi`` (docs/AXI.md): one MM2S stream -> one core packet per stripe.

Interface
---------
clk, rst                   clock, synchronous active-high reset (hard: ``aresetn``)
hold, hold_start           soft reset in progress / its first cycle: the framer stops (``s_tready`` low
                           unless discarding); at ``hold_start`` it returns to "descriptor next", or to
                           DISCARD if an input transfer is open and ``discard`` is set
discard                    discard the open transfer's rest at a soft reset (CONTROL bit3 = 0)
s_tdata/tvalid/tready/tlast  MM2S words: per stripe a descriptor ``((n-1) << 16) | (P-1)``, then 1 + P words
c_tdata/tvalid/tready/tlast  to the core: the stripe's words, ``c_tlast`` on the last (or on the input's
                           ``tlast`` if that comes first)
job_wr, job_nocore, job_n  a job per descriptor: ``job_n`` = n - 1, ``job_nocore``: the descriptor carried
                           the input's ``tlast`` (no packet goes to the core); a descriptor is taken only
                           while ``job_space``
end_wr, end_last, end_trunc  a stripe's end, when its last word goes to the core (or with a ``nocore`` job):
                           ``end_last``: the input's ``tlast`` came in this stripe; ``end_trunc``: it came
                           before the stripe's 1 + P words
in_open                    an input transfer is open (a word accepted, its ``tlast`` not yet)
last_hs                    the input's ``tlast`` was accepted in this cycle (not while discarding)
discarding                 in DISCARD (soft reset: words are dropped up to the next ``tlast``)
"""
from myhdl import Signal, always, always_comb, block, enum, intbv


@block
def stripe_framer(clk, rst, hold, hold_start, discard,
                  s_tdata, s_tvalid, s_tready, s_tlast,
                  c_tdata, c_tvalid, c_tready, c_tlast,
                  job_wr, job_nocore, job_n, job_space, end_wr, end_last, end_trunc,
                  in_open, last_hs, discarding):
    st = enum("DESC", "DATA", "DROP")
    state = Signal(st.DESC)
    rem = Signal(intbv(0)[17:])  # words of the stripe still to send after the current one
    opn = Signal(bool(0))

    @always_comb
    def framer_comb():
        c_tdata.next = s_tdata
        c_tvalid.next = 0
        c_tlast.next = 0
        s_tready.next = 0
        job_wr.next = 0
        end_wr.next = 0
        job_nocore.next = s_tlast
        job_n.next = s_tdata[32:16]
        end_last.next = 0
        end_trunc.next = 0
        last_hs.next = 0
        if state == st.DROP:
            s_tready.next = 1
        elif not hold:
            if state == st.DESC:
                s_tready.next = job_space
                if s_tvalid and job_space:
                    job_wr.next = 1
                    if s_tlast:
                        end_wr.next = 1
                        end_last.next = 1
                        end_trunc.next = 1
                        last_hs.next = 1
            else:
                c_tvalid.next = s_tvalid
                s_tready.next = c_tready
                c_tlast.next = s_tlast or rem == 0
                if s_tvalid and c_tready and (s_tlast or rem == 0):
                    end_wr.next = 1
                    end_last.next = s_tlast
                    end_trunc.next = s_tlast and rem != 0
                    last_hs.next = s_tlast

    @always_comb
    def framer_flags():
        in_open.next = opn
        discarding.next = state == st.DROP

    @always(clk.posedge)
    def framer_seq():
        if rst:
            state.next = st.DESC
            rem.next = 0
            opn.next = 0
        elif hold_start:
            opn.next = 0
            if discard and (opn or state != st.DESC):   # a transfer open, or already dropping one
                state.next = st.DROP
            else:
                state.next = st.DESC
        elif state == st.DROP:
            if s_tvalid and s_tlast:
                state.next = st.DESC
        elif not hold:
            if state == st.DESC:
                if s_tvalid and job_space:
                    opn.next = not s_tlast
                    if not s_tlast:
                        state.next = st.DATA
                        rem.next = s_tdata[16:0] + 1
            else:
                if s_tvalid and c_tready:
                    opn.next = not s_tlast
                    if s_tlast or rem == 0:
                        state.next = st.DESC
                    else:
                        rem.next = rem - 1

    return framer_comb, framer_flags, framer_seq
