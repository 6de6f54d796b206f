// Verilator harness of the converted N-lane decoder: Vtb <stimulus file> <output file>
// Implements the cycle protocol and file formats of lutzip/hdl/flows/lanes_sim.py (like the Python and VHDL
// benches). Built with -DLANES=<n> -DWORD_BITS=<W>; port widths follow (narrow ports are integers, wide ones
// VlWide arrays: the bit helpers below take either).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "Vdecoder_lanes.h"
#include "tb_lutzip_common.h"
#include "verilated.h"

#ifndef LANES
#error "build with -DLANES=<n>"
#endif
#ifndef WORD_BITS
#define WORD_BITS 16
#endif

using tbc::die;

namespace {

// bits [lo, lo + n) of a port, n <= 32
template <class T>
uint32_t get_bits(const T& v, int lo, int n) {
  return (uint32_t)(((uint64_t)v >> lo) & ((n >= 32) ? 0xFFFFFFFFull : ((1ull << n) - 1)));
}
template <std::size_t N>
uint32_t get_bits(const VlWide<N>& v, int lo, int n) {
  uint32_t r = 0;
  for (int i = 0; i < n; ++i) r |= ((v[(lo + i) / 32] >> ((lo + i) % 32)) & 1u) << i;
  return r;
}
template <class T>
void set_bits(T& v, int lo, int n, uint32_t x) {
  uint64_t m = ((n >= 32) ? 0xFFFFFFFFull : ((1ull << n) - 1)) << lo;
  v = (T)(((uint64_t)v & ~m) | (((uint64_t)x << lo) & m));
}
template <std::size_t N>
void set_bits(VlWide<N>& v, int lo, int n, uint32_t x) {
  for (int i = 0; i < n; ++i) {
    uint32_t b = (x >> i) & 1u;
    uint32_t& w = v[(lo + i) / 32];
    w = (w & ~(1u << ((lo + i) % 32))) | (b << ((lo + i) % 32));
  }
}

using Pre = tbc::Cmd;
struct Word {
  uint32_t w, last, gap;
};

}  // namespace

int main(int argc, char** argv) {
  tbc::prog() = "tb_lutzip_lanes";
  if (argc < 3) die("usage: Vtb <stimulus> <output>");
  std::vector<Pre> pre;
  std::vector<std::vector<Word>> q(LANES);
  std::vector<uint8_t> ready;
  uint64_t max_cycles = 0, drain = 16;
  bool have_c = false;
  tbc::read_stimulus(argv[1], [&](char k, const char* p) {
    unsigned long x = 0, y = 0, z = 0, u = 0;
    bool ok = false;
    if (tbc::parse_prefix(k, p, pre, ready, ok)) return ok;
    if (k == 'C') {
      ok = std::sscanf(p, "%lu %lu %lu", &x, &y, &z) == 3 && z == LANES;
      max_cycles = x;
      drain = y;
      have_c = true;
    } else if (k == 'L') {
      ok = std::sscanf(p, "%lu %lx %lu %lu", &x, &y, &z, &u) == 4 && x < LANES;
      if (ok) q[x].push_back({(uint32_t)y, (uint32_t)z, (uint32_t)u});
    }
    return ok;
  });
  FILE* fout = std::fopen(argv[2], "w");
  if (!fout) die(std::string("cannot write ") + argv[2]);
  if (!have_c) die("no 'C' header line");
  if (ready.empty()) ready.assign(32, 1);

  auto* top = new Vdecoder_lanes;
  std::size_t pi = 0;
  uint32_t left = 0;
  bool stream = false;
  std::vector<std::size_t> idx(LANES, 0);
  std::vector<uint32_t> wait(LANES, 0);
  uint64_t quiet = 0;
  int lv = 0;   // tvalid bits driven this cycle

  auto lanes_drive = [&]() {
    lv = 0;
    for (int j = 0; j < LANES; ++j) {
      bool v = idx[j] < q[j].size() && wait[j] == 0;
      const Word w = v ? q[j][idx[j]] : Word{0, 0, 0};
      set_bits(top->s_axis_tdata, 32 * j, 32, w.w);
      set_bits(top->s_axis_tvalid, j, 1, v ? 1 : 0);
      set_bits(top->s_axis_tlast, j, 1, w.last);
      if (v) lv |= 1 << j;
    }
  };
  auto load = [&]() {
    if (pi >= pre.size()) {
      tbc::drive_prefix(top, (const Pre*)nullptr);
      stream = true;
      for (int j = 0; j < LANES; ++j) wait[j] = q[j].empty() ? 0 : q[j][0].gap;
      lanes_drive();
      return;
    }
    left = tbc::drive_prefix(top, &pre[pi++]);
  };
  for (int j = 0; j < LANES; ++j) {
    set_bits(top->s_axis_tdata, 32 * j, 32, 0);
    set_bits(top->s_axis_tvalid, j, 1, 0);
    set_bits(top->s_axis_tlast, j, 1, 0);
  }
  load();
  top->m_axis_tready = ready[0];
  top->clk = 0;
  top->eval();
  const int digits = LANES * WORD_BITS / 4;
  for (uint64_t k = 0;; ++k) {
    // sample the outputs before the edge
    bool mv = top->m_axis_tvalid, mr = top->m_axis_tready;
    std::string hex;
    if (mv && mr) {
      char buf[16];
      for (int d = digits - 1; d >= 0; --d) {
        std::snprintf(buf, sizeof buf, "%x", get_bits(top->m_axis_tdata, 4 * d, 4));
        hex += buf;
      }
      std::fprintf(fout, "O %s %u %u %u %llu\n", hex.c_str(), (unsigned)top->m_axis_tkeep,
                   (unsigned)top->m_axis_tlast, (unsigned)top->m_axis_tuser, (unsigned long long)k);
    }
    for (int j = 0; j < LANES; ++j)
      if (get_bits(top->err_valid, j, 1))
        std::fprintf(fout, "E %d %u %08x %llu\n", j, get_bits(top->err_code, 4 * j, 4),
                     get_bits(top->err_stripe, 32 * j, 32), (unsigned long long)k);
    uint32_t rdy[LANES];
    for (int j = 0; j < LANES; ++j) rdy[j] = get_bits(top->s_axis_tready, j, 1);
    bool busy = top->busy;
    top->clk = 1;
    top->eval();
    if (!stream) {
      const Pre& c = pre[pi - 1];
      bool done = true;
      if (c.kind == 'R' || c.kind == 'I') done = --left == 0;
      if (done) load();
    } else {
      bool ended = true;
      for (int j = 0; j < LANES; ++j) ended = ended && idx[j] >= q[j].size();
      for (int j = 0; j < LANES; ++j) {
        if (((lv >> j) & 1) && rdy[j]) {
          ++idx[j];
          wait[j] = idx[j] < q[j].size() ? q[j][idx[j]].gap : 0;
        } else if (wait[j] > 0) {
          --wait[j];
        }
      }
      lanes_drive();
      if (ended) {
        quiet = (mv || busy) ? 0 : quiet + 1;
        if (quiet >= drain) {
          std::fprintf(fout, "Z %llu\n", (unsigned long long)k);
          break;
        }
      }
    }
    if (k + 1 >= max_cycles) {
      std::fprintf(fout, "X %llu\n", (unsigned long long)k);
      break;
    }
    top->m_axis_tready = ready[(k + 1) % ready.size()];
    top->clk = 0;
    top->eval();
  }
  std::fclose(fout);
  top->final();
  delete top;
  return 0;
}
