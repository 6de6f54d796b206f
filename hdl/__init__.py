"""lutzip.hdl: the MyHDL decoder core, its stages and fronts, the N-lane decoder and the flows (convert,
simulate, synthesise, bench). Importing it makes MyHDL's elaboration skip its source look-ups
(``lutzip.hdl.elaboration``; same designs, same output, about 2.5x faster conversion)."""
from .elaboration import speed_up_myhdl_elaboration as _speed_up_myhdl_elaboration

_speed_up_myhdl_elaboration()
