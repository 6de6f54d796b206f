// The parts the Verilator harnesses tb_lutzip_core.cpp and tb_lutzip_lanes.cpp share: reading a stimulus file
// (comment and blank lines, the Y / R / I / T lines of lutzip/hdl/flows/simulate.py's format) and driving a
// prefix command (reset, idle or table write) on the converted design's ports.
#ifndef TB_LUTZIP_COMMON_H
#define TB_LUTZIP_COMMON_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace tbc {

// a prefix command (R / I: a = cycles; T: a = sel, b = addr, c = data) or, in the core's bench, a stripe word
struct Cmd {
  char kind;
  uint32_t a, b, c;
};

// the program name in error messages (set by main)
inline const char*& prog() {
  static const char* name = "tb_lutzip";
  return name;
}

[[noreturn]] inline void die(const std::string& msg) {
  std::fprintf(stderr, "%s: error: %s\n", prog(), msg.c_str());
  std::exit(2);
}

// parse a Y / R / I / T line (kind k, fields at p) into ready / cmds; returns false for any other kind, and sets
// ok to whether the line was well formed
inline bool parse_prefix(char k, const char* p, std::vector<Cmd>& cmds, std::vector<uint8_t>& ready, bool& ok) {
  unsigned long x = 0, y = 0, z = 0;
  switch (k) {
    case 'Y':
      ok = std::sscanf(p, "%lx", &x) == 1;
      for (int b = 31; b >= 0; --b) ready.push_back((x >> b) & 1);
      return true;
    case 'R':
    case 'I':
      ok = std::sscanf(p, "%lu", &x) == 1 && x >= 1;
      cmds.push_back({k, (uint32_t)x, 0, 0});
      return true;
    case 'T':
      ok = std::sscanf(p, "%lu %lu %lx", &x, &y, &z) == 3;
      cmds.push_back({k, (uint32_t)x, (uint32_t)y, (uint32_t)z});
      return true;
    default:
      return false;
  }
}

// read the stimulus file: line(kind, fields) for every line that is not a comment or blank, which returns whether
// the line was well formed; a bad line ends the program naming it
template <class F>
void read_stimulus(const char* path, F line) {
  FILE* fin = std::fopen(path, "r");
  if (!fin) die(std::string("cannot open ") + path);
  char buf[512];
  long no = 0;
  while (std::fgets(buf, sizeof buf, fin)) {
    ++no;
    char* p = buf;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == 0) continue;
    char k = *p++;
    if (!line(k, p)) die(std::string(path) + ", line " + std::to_string(no) + ": bad stimulus line");
  }
  std::fclose(fin);
}

// drive no reset and no table write, then the prefix command c (R / I: returns its cycle count; T: one cycle)
template <class Top>
uint32_t drive_prefix(Top* top, const Cmd* c) {
  top->rst = 0;
  top->tbl_we = 0;
  top->tbl_sel = 0;
  top->tbl_addr = 0;
  top->tbl_wdata = 0;
  if (!c) return 0;
  if (c->kind == 'R' || c->kind == 'I') {
    top->rst = c->kind == 'R';
    return c->a;
  }
  if (c->kind == 'T') {
    top->tbl_we = 1;
    top->tbl_sel = c->a;
    top->tbl_addr = c->b;
    top->tbl_wdata = c->c;
  }
  return 1;
}

}  // namespace tbc

#endif
