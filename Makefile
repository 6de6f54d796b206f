# The two set-up commands of the README. Both install what they need first.
PY ?= python3

.PHONY: install demo test
install:
	bash .ci/install.sh

demo: install
	lutzip demo

test: install
	$(PY) -m pytest
