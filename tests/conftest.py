"""Shared pytest fixtures (small and generic)."""
import inspect as _inspect
import sys
import types

import pytest


def _light_outer_frames(frame, context=1):
    """``inspect.getouterframes`` without the source look-ups: MyHDL's elaboration (``_getCallInfo`` in
    myhdl._block / myhdl._instance, ``instances()``) only reads each record's frame and function name, but the
    real call reads source context for every frame of the stack -- under pytest ~80 frames per ``@block`` /
    ``@instance`` / ``@always`` call, the bulk of the time to build a big design (a proto_engine took ~40 s
    CPU in a test worker). Records keep inspect.FrameInfo's layout; filename and line are real, the source
    context fields are None."""
    out = []
    while frame is not None:
        out.append(_inspect.FrameInfo(frame, frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name,
                                      None, None))
        frame = frame.f_back
    return out


def _light_stack(context=1):
    return _light_outer_frames(sys._getframe(1), context)


def _speed_up_myhdl_elaboration():
    try:
        import myhdl._block
        import myhdl._instance
        import myhdl._misc
    except ImportError:  # pragma: no cover
        return
    light = types.ModuleType("inspect")
    light.__dict__.update(_inspect.__dict__)
    light.stack = _light_stack
    light.getouterframes = _light_outer_frames
    for mod in (myhdl._block, myhdl._instance, myhdl._misc):
        mod.inspect = light


_speed_up_myhdl_elaboration()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The default run's budget: a test module may define ``default_run_excludes(item)``; the cases it
    returns True for get the ``slow`` marker (they run with ``-m slow``). Runs before ``-m`` deselects."""
    for item in items:
        rule = getattr(item.module, "default_run_excludes", None)
        if rule is not None and rule(item):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _myhdl_simulation_released():
    """Make sure no MyHDL simulation outlives its test (only one may exist per process). MyHDL keeps every
    Signal ever made in ``myhdl._simulator._signals`` and each ``quit_sim`` resets (deep-copies) all of them,
    each new Simulation scans them: the signals made during this test are dropped from that list after it, so
    a worker's later simulations do not pay for all earlier designs (signals of module fixtures, made before
    the test, stay)."""
    try:
        from myhdl import _simulator
        from myhdl._Simulation import Simulation
    except ImportError:  # pragma: no cover
        yield
        return
    mark = len(_simulator._signals)
    yield
    if Simulation._no_of_instances:
        Simulation._no_of_instances = 0
    del _simulator._signals[mark:]


@pytest.fixture(scope="session")
def hdl_cache():
    """Directory for converted HDL and simulator builds: the build cache's ``hdl`` folder (outside git;
    ``$LUTZIP_CACHE`` / ``$XDG_CACHE_HOME`` move it, see lutzip.cache)."""
    from lutzip.cache import cache_dir
    return cache_dir("hdl")
