# Every target creates the virtual environment it needs, so a fresh clone needs only
# python3 (>= 3.11) and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
TIME   ?= 10

.PHONY: demo test lint bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,ray]'
	$(BIN)/python -m planner.solvers.rcpsp_kernels  # compile the RCPSP kernels once
	touch $@

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/plan solve instances/demo.json --time-limit $(TIME) --jobs \
		-o out/demo-schedule.json --gantt out/demo-gantt.csv
	$(BIN)/plan check instances/demo.json out/demo-schedule.json
	$(BIN)/plan solve instances/demo.json --solver greedy --objective energy_cost,total_weighted_jct \
		-o out/demo-energy.json
	$(BIN)/plan check instances/demo.json out/demo-energy.json
	$(BIN)/plan show out/demo-schedule.json --instance instances/demo.json --colour-by tenant \
		-o out/demo-gantt.html --png out/demo-gantt.png

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check planner tests experiments scripts
	$(BIN)/ruff format --check planner tests experiments scripts
	$(BIN)/mypy planner

bench: $(STAMP)
	$(BIN)/plan bench instances/bench --solvers greedy:fifo,greedy:sjf,greedy:srsf,greedy:interleave,cpsat \
		--time-limit 10 --workers 2 --baseline greedy:fifo -o out/bench.csv

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
