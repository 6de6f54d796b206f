"""Faster MyHDL elaboration, behaviour unchanged.

MyHDL 0.11's ``@block`` / ``@instance`` / ``@always`` decorators and ``instances()`` call ``inspect.stack()`` to
find their caller. They read only each record's frame and function name, but ``inspect.stack()`` also looks up
source lines (``findsource`` / ``getmodule``) for every frame on the stack, every call. Converting the default
core spent 4.5 of its 7.0 s there (cProfile, 2026-12-07); under pytest, with ~80 frames per call, it was the
bulk of every test that builds a design.

``speed_up_myhdl_elaboration()`` gives the three MyHDL modules that call it (``myhdl._block``,
``myhdl._instance``, ``myhdl._misc``) their own copy of ``inspect`` whose ``stack()`` / ``getouterframes()``
return the same records (frame, file name, line, function) with the source-context fields ``None``. The real
``inspect`` module and every other user of it are untouched. The converter's own source analysis
(``inspect.getsource`` in ``myhdl.conversion``) is not affected. Idempotent; importing ``lutzip.hdl`` does not
import MyHDL (a hook applies the patch when MyHDL is imported; the host-only install on a PYNQ board reads
``lutzip.hdl.flows.model`` without MyHDL).
"""
import importlib.abc
import importlib.util
import inspect as _inspect
import sys
import types

__all__ = ["speed_up_myhdl_elaboration"]


def _light_outer_frames(frame, context=1):
    """``inspect.getouterframes`` without the source look-ups."""
    out = []
    while frame is not None:
        code = frame.f_code
        out.append(_inspect.FrameInfo(frame, code.co_filename, frame.f_lineno, code.co_name, None, None))
        frame = frame.f_back
    return out


def _light_stack(context=1):
    """``inspect.stack`` without the source look-ups (the caller's frame first, as ``inspect.stack``)."""
    return _light_outer_frames(sys._getframe(1), context)


_LIGHT = types.ModuleType("inspect")
_LIGHT.__dict__.update(_inspect.__dict__)
_LIGHT.stack = _light_stack
_LIGHT.getouterframes = _light_outer_frames


def _patch():
    import myhdl._block
    import myhdl._instance
    import myhdl._misc
    for mod in (myhdl._block, myhdl._instance, myhdl._misc):
        mod.inspect = _LIGHT


class _AfterMyhdl(importlib.abc.MetaPathFinder):
    """Applies :func:`_patch` right after ``import myhdl`` runs, so that importing ``lutzip.hdl`` does not itself
    import MyHDL (a decode's start-up imports neither MyHDL nor numba)."""

    def find_spec(self, name, path=None, target=None):
        if name != "myhdl":
            return None
        sys.meta_path.remove(self)                  # once; the other finders find the real module
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch()
        spec.loader.exec_module = exec_module
        return spec


def speed_up_myhdl_elaboration():
    """Point MyHDL's elaboration modules at the light ``inspect``: now when MyHDL is imported (returns True), else
    as soon as it is (returns False; nothing is imported here)."""
    if "myhdl" in sys.modules:
        _patch()
        return True
    if not any(isinstance(f, _AfterMyhdl) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterMyhdl())
    return False
