"""Old import path, kept for one release: the reference model is :mod:`lutzip.hdl.flows.model`, the random
vectors are :mod:`lutzip.hdl.flows.vectors`, the MyHDL driver is :mod:`lutzip.hdl.flows.simulate`."""
from lutzip.hdl.flows.model import SEL_CONFIG, table_ops  # noqa: F401
from lutzip.hdl.flows.vectors import random_stripe, random_tableset  # noqa: F401
