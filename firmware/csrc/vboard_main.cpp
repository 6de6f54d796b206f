// Verilator harness of the lutzip virtual board (lutzip.vboard.verilator).
// Fast mode (default): the bytes of file descriptor FD feed proto_engine's byte streams (s_axis_* in, m_axis_* out).
// Pin mode (-DPIN_MODE -DCLKS_PER_BIT=n): the bytes are serialised 8N1 onto uart_top's rx pin and its tx pin
// is deserialised back, bit by bit, as a UART would.
// Two clock domains (-DLINK_PS=a -DCORE_PS=b, fast mode): proto_engine_cdc, the byte streams at clk (period a ps)
// and the engine at core_clk (period b ps), the PLL's simulation model: both clocks run from time 0, edges in time
// order, coincident edges together.
// Usage: vboard FD      (FD: the pseudo-terminal master; exits when stdin reaches EOF or FD hangs up)
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <vector>
#include "Vtop.h"
#include "verilated.h"

static std::vector<unsigned char> inbuf, outbuf;
static size_t inpos = 0, outpos = 0;
static int fd = -1;
static unsigned long long cycles = 0;

static bool service_io(int timeout_ms) {
    // returns false when the session is over
    struct pollfd p[2] = {{fd, POLLIN, 0}, {0, POLLIN, 0}};
    if (outpos < outbuf.size()) p[0].events |= POLLOUT;
    int r = poll(p, 2, timeout_ms);
    if (r < 0) return errno == EINTR;
    if (p[1].revents & (POLLIN | POLLHUP)) {
        char c;
        if (read(0, &c, 1) <= 0) return false;  // parent closed our stdin
    }
    if (p[0].revents & POLLIN) {
        if (inpos == inbuf.size()) { inbuf.clear(); inpos = 0; }
        else if (inpos > (1u << 20)) { inbuf.erase(inbuf.begin(), inbuf.begin() + inpos); inpos = 0; }
        unsigned char tmp[65536];
        for (int k = 0; k < 64; k++) {  // drain what the pty holds (it hands out a few KiB per read)
            ssize_t n = read(fd, tmp, sizeof tmp);
            if (n <= 0) break;
            inbuf.insert(inbuf.end(), tmp, tmp + n);
        }
    }
    if (outpos < outbuf.size() && (p[0].revents & POLLOUT)) {
        ssize_t n = write(fd, outbuf.data() + outpos, outbuf.size() - outpos);
        if (n > 0) outpos += n;
        if (outpos == outbuf.size()) { outbuf.clear(); outpos = 0; }
    }
    if ((p[0].revents & (POLLERR | POLLNVAL))) return false;
    return true;
}

int main(int argc, char** argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FD\n", argv[0]); return 2; }
    fd = atoi(argv[1]);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    Verilated::commandArgs(1, argv);
    Vtop* top = new Vtop;
    top->clk = 0;
    top->rst = 1;
#ifdef PIN_MODE
    top->uart_rx = 1;
#else
    top->m_axis_tready = 1;
    top->s_axis_tvalid = 0;
#endif
#ifdef CORE_PS
    unsigned long long t_link = 0, t_core = 0;   // time of each clock's next rising edge (ps)
    top->core_clk = 0;
    // the reset reaches the core domain's synchroniser through core clock edges too
    for (int i = 0; i < 8; i++) {
        while (t_core < t_link) { top->core_clk = 1; top->eval(); top->core_clk = 0; top->eval(); t_core += CORE_PS; }
        top->clk = 1; if (t_core == t_link) { top->core_clk = 1; t_core += CORE_PS; }
        top->eval(); top->clk = 0; top->core_clk = 0; top->eval(); t_link += LINK_PS;
    }
#else
    for (int i = 0; i < 8; i++) { top->clk = 1; top->eval(); top->clk = 0; top->eval(); }
#endif
    top->rst = 0;
#ifdef PIN_MODE
    // host-side UART models
    int tx_bit = -1, tx_cnt = 0; unsigned tx_sh = 0;          // host -> board serialiser
    int rx_state = -1, rx_cnt = 0; unsigned rx_sh = 0;         // board -> host deserialiser
#endif
    const int BATCH = 4096;
    for (;;) {
        bool starving = inpos == inbuf.size();
        if (starving && top->idle && outpos == outbuf.size()) {
            if (!service_io(50)) break;
            continue;
        }
        if (!service_io(0)) break;
        bool throttle = outbuf.size() - outpos > (1u << 22);
        for (int i = 0; i < BATCH; i++) {
#ifdef PIN_MODE
            if (tx_bit < 0 && inpos < inbuf.size()) { tx_sh = (1u << 9) | (inbuf[inpos++] << 1); tx_bit = 0; tx_cnt = 0; }
            top->uart_rx = tx_bit < 0 ? 1 : ((tx_sh >> tx_bit) & 1);
            top->clk = 1; top->eval();
            top->clk = 0; top->eval();
            cycles++;
            if (tx_bit >= 0 && ++tx_cnt == CLKS_PER_BIT) { tx_cnt = 0; if (++tx_bit == 10) tx_bit = -1; }
            int line = top->uart_tx;
            if (rx_state < 0) {
                if (!line) { rx_state = 0; rx_cnt = 0; rx_sh = 0; }
            } else if (++rx_cnt == CLKS_PER_BIT / 2 + rx_state * CLKS_PER_BIT) {
                if (rx_state >= 1 && rx_state <= 8) rx_sh |= (unsigned)line << (rx_state - 1);
                if (rx_state == 9) { outbuf.push_back((unsigned char)rx_sh); rx_state = -1; }
                else rx_state++;
            }
            if (tx_bit < 0 && inpos == inbuf.size() && top->idle && rx_state < 0) break;
#else
            bool v = inpos < inbuf.size();
            top->s_axis_tvalid = v;
            if (v) top->s_axis_tdata = inbuf[inpos];
            top->m_axis_tready = !throttle;
            top->eval();
            bool rxhs = v && top->s_axis_tready;
            bool txhs = top->m_axis_tvalid && top->m_axis_tready;
            unsigned char d = top->m_axis_tdata;
#ifdef CORE_PS
            // core edges before this link edge: they change only core-domain registers, so the link-side
            // handshake sampled above still holds at the link edge
            while (t_core < t_link) { top->core_clk = 1; top->eval(); top->core_clk = 0; top->eval(); t_core += CORE_PS; }
            top->clk = 1; if (t_core == t_link) { top->core_clk = 1; t_core += CORE_PS; }
            top->eval();
            top->clk = 0; top->core_clk = 0; t_link += LINK_PS;
#else
            top->clk = 1; top->eval();
            top->clk = 0;
#endif
            cycles++;
            if (rxhs) inpos++;
            if (txhs) outbuf.push_back(d);
            if (inpos == inbuf.size() && top->idle) break;
#endif
        }
    }
    top->final();
    delete top;
    return 0;
}
