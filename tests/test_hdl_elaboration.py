"""lutzip.hdl.elaboration: MyHDL's elaboration without inspect.stack()'s source look-ups gives the same
stack records (frame, file, line, function) and the same converted HDL as MyHDL with the real inspect."""
import inspect
import os
import subprocess
import sys

import myhdl._block
import myhdl._instance
import myhdl._misc
import pytest

from lutzip.hdl import elaboration

MYHDL_MODULES = (myhdl._block, myhdl._instance, myhdl._misc)


def test_importing_lutzip_hdl_patches_myhdls_elaboration_modules_only():
    for mod in MYHDL_MODULES:
        assert mod.inspect.stack is elaboration._light_stack
        assert mod.inspect.getouterframes is elaboration._light_outer_frames
    assert inspect.stack is not elaboration._light_stack  # the real module is untouched
    assert elaboration.speed_up_myhdl_elaboration() is True  # idempotent


def _records(stack_fn):
    def inner():
        return stack_fn()

    def outer():
        return inner()

    return outer()


def test_light_stack_has_the_real_stacks_frames_files_lines_and_functions():
    real = _records(inspect.stack)
    light = _records(elaboration._light_stack)
    assert len(light) == len(real) > 3
    for a, b in zip(real, light):
        # the two calls sit on different lines of this file only in this test's own frame
        assert (a.frame.f_code, a.filename, a.function) == (b.frame.f_code, b.filename, b.function)
    assert [r.function for r in light[:3]] == ["inner", "outer", "_records"]
    assert all(r.code_context is None and r.index is None for r in light)
    assert light[1].lineno == real[1].lineno  # same call site in outer()


_CONVERT = """
import inspect, sys
import lutzip.hdl
import myhdl._block, myhdl._instance, myhdl._misc
from lutzip.hdl.flows.convert import convert_core
if sys.argv[1] == "real":
    for mod in (myhdl._block, myhdl._instance, myhdl._misc):
        mod.inspect = inspect
assert (myhdl._block.inspect.stack is inspect.stack) == (sys.argv[1] == "real")
convert_core(sys.argv[2], sys.argv[3], name="core")
"""


def _body(path):
    """The converted text without MyHDL's header comments (file path and date)."""
    return "\n".join(l for l in path.read_text().splitlines()
                     if not l.startswith(("// File:", "// Date:", "-- File:", "-- Date:")))


@pytest.mark.parametrize("hdl", ["verilog", "vhdl"])
def test_the_core_converts_to_the_same_text_with_and_without_the_patch(tmp_path, hdl):
    # one conversion per process: MyHDL renames a second conversion's instances in the same process
    out = {}
    for mode in ("light", "real"):
        # sensitivity lists come out of sets: one hash seed for both runs
        subprocess.run([sys.executable, "-c", _CONVERT, mode, str(tmp_path / mode), hdl], check=True,
                       env={**os.environ, "PYTHONHASHSEED": "1"})
        out[mode] = _body(tmp_path / mode / ("core.v" if hdl == "verilog" else "core.vhd"))
    assert len(out["light"]) > 10_000
    assert out["light"] == out["real"]
