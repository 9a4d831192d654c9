# Every target builds its own virtual environment (.venv) on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench soak corpus fuzz clean

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
	$(BIN)/toolbridge bench --auto --dense --gateway

# 10,000 mixed requests (4 minutes at most); fails on RSS or fd growth past its stated bounds.
soak: $(STAMP)
	$(BIN)/toolbridge bench --soak

# The long fuzz run: 20,000 mutated outputs per dialect, whole and streamed, also through auto
# (make test runs a quick profile). SEED=n for another set; DIALECT=hermes narrows it.
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz --per-dialect 20000 --seed $(or $(SEED),0) $(if $(DIALECT),--dialect $(DIALECT))

# Conformance against ../shared/corpus (skipped when absent); DIALECT=hermes narrows it.
corpus: $(STAMP)
	$(BIN)/python -m tests.corpus_run $(if $(DIALECT),--dialect $(DIALECT))

clean:
	rm -rf $(VENV)
