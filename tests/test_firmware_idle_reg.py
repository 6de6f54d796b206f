"""The registered idle of the replay unit (``PIPE``) and the table loader (``IDLE_REG``), as the two-domain ULX3S
engine wires them (the loader's ``guard`` = the run or its ``done_req``), in one MyHDL simulation: a random ring
of loader stripes, table writes, barriers and replay runs (a loader stripe also between a run's two count
entries, so a stripe's last word can pass the ring's head right before the run entry), a stand-in core with
random stalls, a result path whose stripe count and idle move together a random number of cycles after a
stripe's last word, and a framer whose REPLAY_DONE holds the idle low from the cycle after ``done_req``.

Checked in every cycle: a run entry is taken, a table word written and a barrier taken only where the idle as
computed (core not busy, stripes sent = stripes done, results idle) is 1 -- what the registered idle must never
break (it fails with any one of the guards left out: the loader stripe in front of the run entry, ``done_req``,
the run). And every entry is taken, every run ends and every stripe comes back (the registered idle does not
wait for ever)."""
import random

from myhdl import Signal, StopSimulation, always, always_comb, block, delay, instance, intbv

from lutzip.firmware.engine.perf_counters import CounterPort
from lutzip.firmware.engine.replay import replay_unit
from lutzip.firmware.engine.table_loader import table_loader

WORDS = 64
SEED = 11


def _ring(rnd):
    """Ring entries (35 bits: replay[34] | tag[33:32] | data) and what each one is."""
    out = []

    def stripe():
        n = rnd.choice([1, 1, 2, 3, 5])
        for i in range(n):
            out.append(((1 if i == n - 1 else 0) << 32 | rnd.getrandbits(32), "word"))

    for _ in range(60):
        r = rnd.random()
        if r < 0.35:
            stripe()
        elif r < 0.5:
            out.append((2 << 32 | rnd.randrange(4) | rnd.randrange(16) << 16, "select"))
            for _ in range(rnd.choice([1, 2, 4])):
                out.append((3 << 32 | rnd.getrandbits(32), "table"))
        elif r < 0.6:
            out.append((2 << 32 | 1 << 4, "barrier"))
        else:
            n = rnd.choice([1, 2, 4, 7])
            out.append((1 << 34 | 2 << 32, "rp"))
            for i in range(n):
                out.append((1 << 34 | (1 if i == n - 1 or rnd.random() < 0.3 else 0) << 32 | rnd.getrandbits(32), "rp"))
            out.append((1 << 34 | 3 << 32 | n, "rp"))
            if rnd.random() < 0.5:
                stripe()                 # a loader stripe between the two count entries
            if rnd.random() < 0.3:
                out.append((2 << 32 | 1 << 4, "barrier"))
            out.append((1 << 34 | 3 << 32 | rnd.choice([1, 2, 3]), "run"))
            if rnd.random() < 0.4:
                # the same buffer again, its count entries right behind the run entry (taken as the run ends)
                out.append((1 << 34 | 3 << 32 | n, "rp"))
                out.append((1 << 34 | 3 << 32 | rnd.choice([1, 2]), "run"))
            if rnd.random() < 0.5:
                stripe()                 # and right behind the run entry
    return out


@block
def bench(log):
    clk = Signal(bool(0))
    rst = Signal(bool(1))
    r_tdata = Signal(intbv(0)[35:])
    r_tvalid, r_tready = Signal(bool(0)), Signal(bool(0))
    l_tdata = Signal(intbv(0)[34:])
    l_tvalid, l_tready = Signal(bool(0)), Signal(bool(0))
    ld_tdata = Signal(intbv(0)[32:])
    ld_tvalid, ld_tready, ld_tlast = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    c_tdata = Signal(intbv(0)[32:])
    c_tvalid, c_tready, c_tlast = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    o_tdata = Signal(intbv(0)[16:])
    o_tvalid, o_tready, o_tlast, o_tuser = [Signal(bool(0)) for _ in range(4)]
    res_tvalid, res_tready = Signal(bool(0)), Signal(bool(0))
    busy = Signal(bool(0))
    stripes_done = Signal(intbv(0)[16:])
    results_idle = Signal(bool(1))
    active, done = Signal(bool(0)), Signal(bool(0))
    guard = Signal(bool(0))
    tbl_we = Signal(bool(0))
    tbl_sel = Signal(intbv(0)[2:])
    tbl_addr = Signal(intbv(0)[12:])
    tbl_wdata = Signal(intbv(0)[32:])
    barrier = Signal(bool(0))
    rd = CounterPort()
    u_rp = replay_unit(clk, rst, r_tdata, r_tvalid, r_tready, l_tdata, l_tvalid, l_tready,
                       ld_tdata, ld_tvalid, ld_tready, ld_tlast, c_tdata, c_tvalid, c_tready, c_tlast,
                       o_tdata, o_tvalid, o_tready, o_tlast, o_tuser, res_tvalid, res_tready, busy, stripes_done,
                       results_idle, active, done, rd, REPLAY_WORDS=WORDS, W=16, BITS=40, PIPE=True)
    u_ld = table_loader(clk, rst, l_tdata, l_tvalid, l_tready, ld_tdata, ld_tvalid, ld_tready, ld_tlast,
                        tbl_we, tbl_sel, tbl_addr, tbl_wdata, busy, stripes_done, results_idle, barrier,
                        guard=guard, IDLE_REG=True)
    rnd = random.Random(SEED)
    entries = _ring(random.Random(SEED + 1))
    st = {"q": [], "sent": 0, "done": 0, "due": [], "res": 0, "rep": 0, "i": 0, "runs": 0, "dones": 0,
          "bad": [], "tables": 0, "barriers": 0, "stripes_in": 0, "cycle": 0}

    @always(delay(5))
    def c_clk():
        clk.next = not clk

    @always_comb
    def c_guard():
        guard.next = active or done

    @always(clk.posedge)
    def c_model():
        st["cycle"] += 1
        if rst:
            return
        idle = (not busy) and st["sent"] % 65536 == int(stripes_done) and bool(results_idle)
        # the checks: what the idle gates happens only where the idle is 1
        took = bool(r_tvalid and r_tready)
        kind = entries[st["i"]][1] if took else None
        if kind == "run":
            st["runs"] += 1
            if not idle:
                st["bad"].append(("run", st["cycle"]))
        if kind == "barrier":
            st["barriers"] += 1
            if not idle:
                st["bad"].append(("barrier", st["cycle"]))
        if tbl_we:
            st["tables"] += 1
            if not idle:
                st["bad"].append(("table", st["cycle"]))
        if took:
            st["i"] += 1
        if done:
            st["dones"] += 1
            st["rep"] = rnd.randrange(1, 6)      # REPLAY_DONE from the next cycle
        # the loader's stripes into the core
        if ld_tvalid and ld_tready and ld_tlast:
            st["sent"] += 1
            st["stripes_in"] += 1
        # stand-in core: a word out per word in, after a word's worth of latency
        q = st["q"]
        if o_tvalid and o_tready:
            w, last = q.pop(0)
            if last and not active:
                st["due"].append(rnd.randrange(0, 3))
        if c_tvalid and c_tready:
            q.append(((int(c_tdata) ^ 0x5A5A) & 0xFFFF, bool(c_tlast)))
        c_tready.next = rnd.random() < 0.7
        show = bool(q) and rnd.random() < 0.8
        o_tvalid.next = show
        if show:
            o_tdata.next = q[0][0]
            o_tlast.next = q[0][1]
        busy.next = bool(q) or bool(c_tvalid and c_tready)
        res_tready.next = rnd.random() < 0.8
        # result path: a stripe counted done a few cycles after its last word, the results busy from the same
        # cycle (the stripe count and the idle move together)
        if st["res"]:
            st["res"] -= 1
        if st["rep"] and not done:
            st["rep"] -= 1
        due = []
        for d in st["due"]:
            if d == 0:
                st["done"] += 1
                st["res"] = max(st["res"], rnd.randrange(1, 8))
            else:
                due.append(d - 1)
        st["due"] = due
        stripes_done.next = st["done"] % 65536
        results_idle.next = st["res"] == 0 and st["rep"] == 0

    @instance
    def c_drive():
        for _ in range(4):
            yield clk.posedge
        rst.next = 0
        j = 0
        for _ in range(60000):
            if j < len(entries) and rnd.random() < 0.85:
                r_tdata.next = entries[j][0]
                r_tvalid.next = 1
            elif j < len(entries) and r_tvalid:
                pass                                # a valid entry stays (the ring's register slice)
            else:
                r_tvalid.next = 0
            yield clk.posedge
            if r_tvalid and r_tready:
                j += 1
                r_tvalid.next = 0
                if j < len(entries):
                    r_tdata.next = entries[j][0]
            if j == len(entries) and not active and not busy and not st["q"] and not st["due"]:
                break
        for _ in range(50):
            yield clk.posedge
        log.update(st, taken=j, total=len(entries), n_runs=sum(1 for e in entries if e[1] == "run"),
                   n_tables=sum(1 for e in entries if e[1] == "table"),
                   n_barriers=sum(1 for e in entries if e[1] == "barrier"),
                   n_stripes=sum(1 for e in entries if e[1] == "word" and e[0] >> 32 & 1))
        raise StopSimulation

    return u_rp, u_ld, c_clk, c_guard, c_model, c_drive


def test_registered_idle_gates_runs_tables_and_barriers_as_the_idle():
    log = {}
    bench(log).run_sim(quiet=1)
    assert log["taken"] == log["total"], (log["taken"], log["total"])
    assert log["bad"] == [], log["bad"][:10]
    assert log["runs"] == log["n_runs"] == log["dones"] > 5, (log["runs"], log["n_runs"], log["dones"])
    assert log["tables"] == log["n_tables"] > 10 and log["barriers"] == log["n_barriers"] > 3
    assert log["stripes_in"] == log["n_stripes"] == log["done"] > 10
