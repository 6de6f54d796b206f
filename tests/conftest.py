"""Shared pytest fixtures (small and generic)."""
import pytest


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
    """Make sure no MyHDL simulation outlives its test (only one may exist per process)."""
    yield
    try:
        from myhdl._Simulation import Simulation
    except ImportError:  # pragma: no cover
        return
    if Simulation._no_of_instances:
        Simulation._no_of_instances = 0


@pytest.fixture(scope="session")
def hdl_cache():
    """Directory for converted HDL and simulator builds: the build cache's ``hdl`` folder (outside git;
    ``$LUTZIP_CACHE`` / ``$XDG_CACHE_HOME`` move it, see lutzip.cache)."""
    from lutzip.cache import cache_dir
    return cache_dir("hdl")
