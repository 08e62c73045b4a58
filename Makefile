# clm_nb: the two commands a new machine needs (each installs the environment on first use).
#   make study   run a study notebook (default STUDY=dataset_ranking; the eight are in docs/studies.md) into results/$(STUDY)/
#   make test    check notebooks are clean (tools/clean_nbs.py) and exported, run the inline notebook tests, then pytest
#   make docs    the documentation site into _docs/ (notebooks, measure reference, API, executed studies, leaderboard)
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STUDY ?= dataset_ranking
OUT ?= results/$(STUDY)
PARAMS ?=
DOCS_STUDIES ?= quick

.PHONY: study test docs check-sync nbtest pytest install jupyter-config clean

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	# the project's kernel: its display name equals its name, so nbdev-clean (which sets display_name to the
	# kernel's name) and JupyterLab (which writes the running kernel's spec) agree on the notebooks' metadata
	$(BIN)/python -m ipykernel install --sys-prefix --name clm_nb --display-name clm_nb >/dev/null
	$(MAKE) --no-print-directory jupyter-config
	# numba compiles the kernels at their first call: once here for every measure (`clm-nb warm --all`, about 4 min on
	# 2 cores), into its cache, instead of in the tests, which call every measure
	$(BIN)/clm-nb --quiet warm --all
	touch $@

install: $(VENV)/.installed

# The venv's own Jupyter config (never ~/.jupyter): `.venv/bin/jupyter lab` cleans each notebook of nbs/ as it saves
# it and keeps the stored outputs of unchanged cells (tools/jupyter_server_config.py), so running a notebook and
# saving it leaves git status clean. A config of the user's own at that place is left alone, with a note.
JUPYTER_CONFIG := $(VENV)/etc/jupyter/jupyter_server_config.py
jupyter-config:
	@mkdir -p "$(dir $(JUPYTER_CONFIG))"
	@if [ -e "$(JUPYTER_CONFIG)" ] && [ ! -L "$(JUPYTER_CONFIG)" ]; then \
		echo "note: $(JUPYTER_CONFIG) exists and is not ours: add tools/jupyter_server_config.py's hook to it by hand"; \
	else ln -sfn "$(abspath tools/jupyter_server_config.py)" "$(JUPYTER_CONFIG)"; fi

study: $(VENV)/.installed
	mkdir -p "$(OUT)"
	test -f "nbs/studies/$(STUDY).ipynb" || { echo "no study nbs/studies/$(STUDY).ipynb"; exit 1; }
	CLM_NB_PROGRESS=$${CLM_NB_PROGRESS:-text} $(BIN)/papermill --log-output "nbs/studies/$(STUDY).ipynb" "$(OUT)/$(STUDY).ipynb" \
		-p out_dir "$(abspath $(OUT))" $(PARAMS)   # --log-output and text bars: the study's progress in the terminal
	$(BIN)/jupyter trust "$(OUT)/$(STUDY).ipynb"   # signed, so JupyterLab renders its charts (SVG) and HTML tables
	@echo "study written to $(OUT)/ (executed notebook, tables, charts/)"

test: $(VENV)/.installed check-sync nbtest pytest

# DOCS_STUDIES=quick runs each study with the small parameters of docs/studies_quick.json (cached in _docs_build/);
# DOCS_STUDIES=results shows the full runs of `make study` from results/ where they exist; none leaves them out.
docs: $(VENV)/.installed
	$(BIN)/python tools/build_docs.py --out _docs --studies $(DOCS_STUDIES)
	$(BIN)/python tools/check_links.py _docs

# Fails when cleaning or nbdev-export would change a file: notebooks are the source and must be clean,
# and clm_nb/ must be exactly what they export. tools/clean_nbs.py is nbdev-clean plus the kernel metadata
# JupyterLab writes (kernelspec, language_info), so a notebook does not show as modified when opened.
check-sync: $(VENV)/.installed
	@snap=$$(mktemp -d); cp -r nbs clm_nb "$$snap"/; \
	$(BIN)/python tools/clean_nbs.py && $(BIN)/nbdev-export || exit 1; \
	if ! diff -r -q -x __pycache__ "$$snap/nbs" nbs || ! diff -r -q -x __pycache__ "$$snap/clm_nb" clm_nb; then \
		echo "FAIL: tools/clean_nbs.py or nbdev-export changed the files above: run them, review and commit."; exit 1; fi; \
	echo "notebooks clean, clm_nb/ in sync with nbs/"

nbtest: $(VENV)/.installed
	$(BIN)/nbdev-test --timing

pytest: $(VENV)/.installed
	$(BIN)/python -m pytest

clean:
	rm -rf results .pytest_cache .hypothesis _docs _docs_build
