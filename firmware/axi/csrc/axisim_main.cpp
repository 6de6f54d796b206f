// Verilator harness of lutzip_axi (lutzip.firmware.axi.sim.AxiSim): an AXI4-Lite master, an MM2S source and an
// S2MM sink around the converted top, cycle by cycle, driven by commands on stdin; replies on stdout.
//   W off val                          AXI4-Lite write (wstrb 0xF)           -> "OK cycles"
//   S off val strb                     AXI4-Lite write with a byte strobe     -> "OK cycles"
//   R off                              AXI4-Lite read                         -> "V value cycles"
//   T n cap rprob vprob seed idle stop  MM2S transfer of n words (4n raw LE bytes follow the line), S2MM until
//                                      tlast or `idle` cycles without a handshake; stop>=0: feed only that many
//                                      words -> "X nbytes tlast cycles sent" + nbytes raw bytes
//   I n                                n idle cycles                          -> "OK n"
//   Q                                  quit
// `cycles` = clock cycles the command took. Probabilities are per cycle (xorshift64* seeded by `seed`).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "Vtop.h"
#include "verilated.h"

static Vtop* top;
static unsigned long long total_cycles = 0;

static void tick() {  // inputs are set and evaluated; one rising edge
    top->aclk = 1; top->eval();
    top->aclk = 0; top->eval();
    total_cycles++;
}

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) { if (!s) s = 1; }
    double next() {
        s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
        return (double)((s * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
    }
};

static long lite_write(unsigned off, uint32_t val, unsigned strb) {
    long c = 0;
    top->s_axi_ctrl_awaddr = off; top->s_axi_ctrl_wdata = val; top->s_axi_ctrl_wstrb = strb;
    top->s_axi_ctrl_awvalid = 1; top->s_axi_ctrl_wvalid = 1; top->s_axi_ctrl_bready = 1;
    bool aw = false;
    for (int i = 0; i < 10000; i++) {
        top->eval();
        bool awhs = !aw && top->s_axi_ctrl_awready;
        bool bhs = aw && top->s_axi_ctrl_bvalid;
        tick(); c++;
        if (awhs) { aw = true; top->s_axi_ctrl_awvalid = 0; top->s_axi_ctrl_wvalid = 0; }
        if (bhs) { top->s_axi_ctrl_bready = 0; top->eval(); return c; }
    }
    return -1;
}

static long lite_read(unsigned off, uint32_t* val) {
    long c = 0;
    top->s_axi_ctrl_araddr = off; top->s_axi_ctrl_arvalid = 1; top->s_axi_ctrl_rready = 1;
    bool ar = false;
    for (int i = 0; i < 10000; i++) {
        top->eval();
        bool arhs = !ar && top->s_axi_ctrl_arready;
        bool rhs = ar && top->s_axi_ctrl_rvalid;
        uint32_t d = top->s_axi_ctrl_rdata;
        tick(); c++;
        if (arhs) { ar = true; top->s_axi_ctrl_arvalid = 0; }
        if (rhs) { *val = d; top->s_axi_ctrl_rready = 0; top->eval(); return c; }
    }
    return -1;
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    top = new Vtop;
    top->aclk = 0; top->aresetn = 0;
    top->s_axis_tvalid = 0; top->m_axis_tready = 0;
    top->s_axi_ctrl_awvalid = 0; top->s_axi_ctrl_wvalid = 0; top->s_axi_ctrl_bready = 0;
    top->s_axi_ctrl_arvalid = 0; top->s_axi_ctrl_rready = 0;
    top->eval();
    for (int i = 0; i < 4; i++) tick();
    top->aresetn = 1; top->eval(); tick();
    const int OB = OUT_BYTES;
    char line[512];
    std::vector<uint32_t> in;
    std::vector<unsigned char> out;
    while (fgets(line, sizeof line, stdin)) {
        char cmd = line[0];
        if (cmd == 'Q') break;
        if (cmd == 'W' || cmd == 'S') {
            unsigned off; unsigned long val; unsigned strb = 0xF;
            if (cmd == 'W') sscanf(line + 1, "%u %lu", &off, &val);
            else sscanf(line + 1, "%u %lu %u", &off, &val, &strb);
            long c = lite_write(off, (uint32_t)val, strb);
            printf(c < 0 ? "E write timeout\n" : "OK %ld\n", c);
        } else if (cmd == 'R') {
            unsigned off; uint32_t v = 0;
            sscanf(line + 1, "%u", &off);
            long c = lite_read(off, &v);
            if (c < 0) printf("E read timeout\n"); else printf("V %u %ld\n", v, c);
        } else if (cmd == 'I') {
            long n = 0;
            sscanf(line + 1, "%ld", &n);
            for (long i = 0; i < n; i++) { top->eval(); tick(); }
            printf("OK %ld\n", n);
        } else if (cmd == 'T') {
            long n, cap, idle_max, stop; double rp, vp; unsigned long long seed;
            sscanf(line + 1, "%ld %ld %lf %lf %llu %ld %ld", &n, &cap, &rp, &vp, &seed, &idle_max, &stop);
            in.resize(n);
            if (n && fread(in.data(), 4, n, stdin) != (size_t)n) break;
            long n_in = (stop >= 0 && stop < n) ? stop : n;
            out.clear();
            Rng rng(seed);
            long i = 0, idle = 0, c = 0;
            bool last = false;
            while (!last && idle < idle_max) {
                bool v = i < n_in && (vp >= 1.0 || rng.next() < vp);
                bool r = (rp >= 1.0 || rng.next() < rp) && (long)out.size() < cap;
                top->s_axis_tvalid = v;
                if (v) { top->s_axis_tdata = in[i]; top->s_axis_tlast = (i == n - 1); }
                top->m_axis_tready = r;
                top->eval();
                bool hs = false;
                if (v && top->s_axis_tready) { i++; hs = true; }
                if (r && top->m_axis_tvalid) {
                    uint64_t d = top->m_axis_tdata;
                    unsigned k = top->m_axis_tkeep;
                    for (int b = 0; b < OB; b++) if ((k >> b) & 1) out.push_back((unsigned char)(d >> (8 * b)));
                    last = top->m_axis_tlast;
                    hs = true;
                }
                idle = hs ? 0 : idle + 1;
                tick(); c++;
            }
            top->s_axis_tvalid = 0; top->m_axis_tready = 0; top->eval();
            printf("X %zu %d %ld %ld\n", out.size(), last ? 1 : 0, c, i);
            fflush(stdout);
            if (!out.empty()) fwrite(out.data(), 1, out.size(), stdout);
        } else {
            printf("E unknown command\n");
        }
        fflush(stdout);
    }
    top->final();
    delete top;
    return 0;
}
