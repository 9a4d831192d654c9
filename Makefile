# Every target builds its own virtual environment (.venv) on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench soak corpus clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all,test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/toolbridge demo

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/toolbridge bench --auto --gateway

# 10,000 mixed requests (4 minutes at most); fails on RSS or fd growth past its stated bounds.
soak: $(STAMP)
	$(BIN)/toolbridge bench --soak

# Conformance against ../shared/corpus (skipped when absent); DIALECT=hermes narrows it.
corpus: $(STAMP)
	$(BIN)/python -m tests.corpus_run $(if $(DIALECT),--dialect $(DIALECT))

clean:
	rm -rf $(VENV)
