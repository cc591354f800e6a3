SHELL := /bin/bash
# lance-ns: two commands do all set-up on a fresh machine.
#   make demo   installs, starts the REST server on a local directory namespace
#               and runs the PySpark pipeline example end to end
#   make test   installs and runs the whole test suite (what CI runs)
#   make docs   builds the API reference into site/

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install test test-fast demo bench docs clean

install: $(STAMP)

# (the Java sources too: the package carries their jars, built at install: setup.py)
$(STAMP): pyproject.toml setup.py $(wildcard src/lance_ns/spark/bridge/*.java)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
	$(BIN)/python -m pip install -q -e '.[test]' 2>&1 | grep -v '^WARNING: Location' ; test $${PIPESTATUS[0]:-0} -eq 0
	$(BIN)/python -c "import lance, lance_ns, pyspark"
	touch $(STAMP)

# two workers: most tests wait on servers, JVMs and storage; each server's tests share one worker
# (tests/conftest.py), and the slowest 15 are reported
test: install
	$(BIN)/python -m pytest -q -n 2 --durations=15

# the quick local loop (make test is the gate): no JVM, Spark or catalog server, and the
# conformance suite over the backends that run in-process (tests/conftest.py: --fast), with
# 4 rounds of each concurrent-appends race where make test runs 20
test-fast: install
	LANCE_NS_APPEND_ROUNDS=4 $(BIN)/python -m pytest -q -n 2 -m "not slow" --fast

demo: install
	bash scripts/demo.sh

# the API reference from the docstrings, into site/ (warnings are errors; the test
# suite builds it too: tests/docs/test_api_reference.py)
docs: install
	$(BIN)/python -m mkdocs build --strict

bench: install
	$(BIN)/python benchmarks/bench_dir.py --quick
	$(BIN)/python benchmarks/bench_rest.py --quick
	$(BIN)/python benchmarks/bench_spark.py --rows 200000 --rounds 1
	$(BIN)/python benchmarks/bench_spark_streaming.py --rows 200000 --rounds 1
	$(BIN)/python benchmarks/bench_ui.py --quick

clean:
	rm -rf $(VENV) .lance-ns-demo .pytest_cache site
