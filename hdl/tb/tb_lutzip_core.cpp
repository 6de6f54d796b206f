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
#include "verilated.h"

namespace {

struct Cmd {
  char kind;
  uint32_t a, b, c;
};

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "tb_lutzip_core: error: %s\n", msg.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) die("usage: Vtb <stimulus> <output>");
  FILE* fin = std::fopen(argv[1], "r");
  if (!fin) die(std::string("cannot open ") + argv[1]);
  FILE* fout = std::fopen(argv[2], "w");
  if (!fout) die(std::string("cannot write ") + argv[2]);

  std::vector<Cmd> cmds;
  std::vector<uint8_t> ready;
  uint64_t max_cycles = 0, drain = 16;
  char line[512];
  long no = 0;
  while (std::fgets(line, sizeof line, fin)) {
    ++no;
    char* p = line;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == 0) continue;
    char k = *p++;
    unsigned long x = 0, y = 0, z = 0;
    int n = 0;
    switch (k) {
      case 'C':
        n = std::sscanf(p, "%lu %lu", &x, &y);
        if (n != 2) break;
        max_cycles = x;
        drain = y;
        continue;
      case 'Y':
        n = std::sscanf(p, "%lx", &x);
        if (n != 1) break;
        for (int b = 31; b >= 0; --b) ready.push_back((x >> b) & 1);
        continue;
      case 'R':
      case 'I':
        n = std::sscanf(p, "%lu", &x);
        if (n != 1 || x < 1) { n = 0; break; }
        cmds.push_back({k, (uint32_t)x, 0, 0});
        continue;
      case 'T':
        n = std::sscanf(p, "%lu %lu %lx", &x, &y, &z);
        if (n != 3) break;
        cmds.push_back({k, (uint32_t)x, (uint32_t)y, (uint32_t)z});
        continue;
      case 'S':
        n = std::sscanf(p, "%lx %lu", &x, &y);
        if (n != 2) break;
        cmds.push_back({k, (uint32_t)x, (uint32_t)y, 0});
        continue;
      default:
        break;
    }
    die(std::string(argv[1]) + ", line " + std::to_string(no) + ": bad stimulus line");
  }
  std::fclose(fin);
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
    top->rst = 0;
    top->tbl_we = 0;
    top->tbl_sel = 0;
    top->tbl_addr = 0;
    top->tbl_wdata = 0;
    top->s_axis_tvalid = 0;
    top->s_axis_tdata = 0;
    top->s_axis_tlast = 0;
    if (ci >= cmds.size()) {
      cur = nullptr;
      ended = true;
      return;
    }
    cur = &cmds[ci++];
    switch (cur->kind) {
      case 'R':
      case 'I':
        left = cur->a;
        top->rst = cur->kind == 'R';
        break;
      case 'T':
        top->tbl_we = 1;
        top->tbl_sel = cur->a;
        top->tbl_addr = cur->b;
        top->tbl_wdata = cur->c;
        break;
      default:
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
