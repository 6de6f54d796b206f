// Verilator harness of the converted decoder core: Vtb <stimulus file> <output file>
// Implements the cycle protocol and file formats described in lutzip/hdl/flows/simulate.py, like the VHDL and
// Python test benches.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "Vdecoder_core.h"
#include "tb_lutzip_common.h"
#include "verilated.h"

using tbc::Cmd;
using tbc::die;

int main(int argc, char** argv) {
  tbc::prog() = "tb_lutzip_core";
  if (argc < 3) die("usage: Vtb <stimulus> <output>");
  std::vector<Cmd> cmds;
  std::vector<uint8_t> ready;
  uint64_t max_cycles = 0, drain = 16;
  tbc::read_stimulus(argv[1], [&](char k, const char* p) {
    unsigned long x = 0, y = 0;
    bool ok = false;
    if (tbc::parse_prefix(k, p, cmds, ready, ok)) return ok;
    if (k == 'C') {
      ok = std::sscanf(p, "%lu %lu", &x, &y) == 2;
      max_cycles = x;
      drain = y;
    } else if (k == 'S') {
      ok = std::sscanf(p, "%lx %lu", &x, &y) == 2;
      cmds.push_back({k, (uint32_t)x, (uint32_t)y, 0});
    }
    return ok;
  });
  FILE* fout = std::fopen(argv[2], "w");
  if (!fout) die(std::string("cannot write ") + argv[2]);
  if (max_cycles == 0) die("no C header line");
  if (ready.empty()) ready.assign(32, 1);

  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<Vdecoder_core>(ctx.get());

  size_t ci = 0;
  const Cmd* cur = nullptr;
  uint64_t left = 0, quiet = 0;
  bool ended = false;

  auto load = [&]() {
    top->s_axis_tvalid = 0;
    top->s_axis_tdata = 0;
    top->s_axis_tlast = 0;
    if (ci >= cmds.size()) {
      cur = nullptr;
      ended = true;
      tbc::drive_prefix(top.get(), cur);
      return;
    }
    cur = &cmds[ci++];
    left = tbc::drive_prefix(top.get(), cur);
    if (cur->kind == 'S') {
      top->s_axis_tvalid = 1;
      top->s_axis_tdata = cur->a;
      top->s_axis_tlast = cur->b ? 1 : 0;
    }
  };

  top->clk = 0;
  load();
  uint8_t rdy = ready[0];
  top->m_axis_tready = rdy;
  top->eval();

  for (uint64_t k = 0;; ++k) {
    // outputs are settled for cycle k: sample them (values before the edge)
    const bool mv = top->m_axis_tvalid, st = top->s_axis_tready, bz = top->busy;
    if (mv && rdy)
      std::fprintf(fout, "O %u %u %u %llu\n", (unsigned)top->m_axis_tdata, (unsigned)top->m_axis_tlast,
                   (unsigned)top->m_axis_tuser, (unsigned long long)k);
    if (top->err_valid)
      std::fprintf(fout, "E %u %llu\n", (unsigned)top->err_code, (unsigned long long)k);
    // rising edge with the inputs of cycle k
    top->clk = 1;
    top->eval();
    const bool was_ended = ended;
    if (cur) {
      bool done;
      if (cur->kind == 'S')
        done = st;
      else if (cur->kind == 'R' || cur->kind == 'I')
        done = --left == 0;
      else
        done = true;
      if (done) load();
    }
    if (was_ended) {
      quiet = (mv || bz) ? 0 : quiet + 1;
      if (quiet >= drain) {
        std::fprintf(fout, "Z %llu\n", (unsigned long long)k);
        break;
      }
    }
    if (k + 1 >= max_cycles) {
      std::fprintf(fout, "X %llu\n", (unsigned long long)k);
      break;
    }
    rdy = ready[(k + 1) % ready.size()];
    top->m_axis_tready = rdy;
    top->clk = 0;
    top->eval();
  }
  top->final();
  if (std::fclose(fout) != 0) die("cannot write the output file");
  return 0;
}
