# The two set-up commands of the README. Both install what they need first.
PY ?= python3

.PHONY: install demo test
install:
	bash .ci/install.sh

demo: install
	lutzip demo

# The default run on two worker processes, a test file per worker at a time (module fixtures, one MyHDL
# simulation per process); builds share the cache safely (lutzip.cache.atomic_dir). TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2

test: install
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile
