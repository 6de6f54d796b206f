"""Shared pytest fixtures (small and generic)."""
import pytest

# MyHDL's elaboration without inspect.stack()'s source look-ups (under pytest ~80 frames per @block call):
# the package applies it on import; imported here so tests that build designs with myhdl alone get it too.
import lutzip.hdl  # noqa: F401,E402


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
