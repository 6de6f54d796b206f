"""Tooling around the decoder core (no hardware): conversion, simulation, benchmarks, synthesis."""

#: The simulation levels of :mod:`lutzip.hdl.flows.simulate` (here so that the CLI's parser can offer them
#: without importing the simulators' harness).
SIMULATORS = ("myhdl", "ghdl", "icarus", "verilator")
