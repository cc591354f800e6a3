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

# (the Java sources too: the package carries their jars, built at install: setup.py).  uv, a test
# dependency anyway, installs the same pins as pip in ~49 s of a clean clone's CI run, where pip
# took ~65 s.  --compile-bytecode: where PYTHONDONTWRITEBYTECODE is set (as on our 2-core machine),
# nothing would ever write a .pyc and every process the suite starts would compile its imports
# (without it the clean-clone run took 22:17 of pytest; with it 18:07).  The package itself is
# installed editable, so its own modules are compiled here too (~0.13 CPU-s saved in every server,
# CLI and Spark worker process the suite starts; an edited module's stale .pyc is simply ignored)
$(STAMP): pyproject.toml setup.py $(wildcard src/lance_ns/spark/bridge/*.java)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q 'uv>=0.9,<1' 2>&1 | grep -v '^WARNING: Location' ; test $${PIPESTATUS[0]:-0} -eq 0
	$(BIN)/python -m uv pip install -q --compile-bytecode --python $(BIN)/python -e '.[test]'
	$(BIN)/python -m compileall -q -j 0 src >/dev/null
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
