# Every target builds its own virtual environment (.venv) on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF

.PHONY: demo test test-agents bench soak corpus fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all,test]'
	@# The grammar engines the constraint tests run (tests/constrain). xgrammar, the one vLLM and
	@# SGLang use, with PyTorch's CPU build and without its GPU-only requirement (triton);
	@# llama.cpp's own grammar parser and sampler through llama-cpp-python, compiled here (about
	@# 4 minutes on 2 cores). Where one cannot be installed, its tests skip and say so.
	$(BIN)/pip install --quiet 'torch==2.13.0' && $(BIN)/pip install --quiet --no-deps 'xgrammar>=0.2.8' \
		|| echo "make: xgrammar could not be installed: its constraint tests will skip"
	CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/pip install --quiet 'llama-cpp-python>=0.3.16' \
		|| echo "make: llama-cpp-python could not be built: its constraint tests will skip"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/toolbridge demo

test: $(STAMP)
	$(BIN)/python -m pytest

# Claude Code and Codex CLI themselves, headless, against toolbridge and a scripted upstream
# (tests/agents): installed from the npm registry into .agents/ with the system's Node and npm;
# where they are missing the tests skip and say why. CLAUDE_CODE=latest or CODEX=latest (or a
# version) tries another release.
CLAUDE_CODE ?= 2.1.197
CODEX ?= 0.171.0
test-agents: $(STAMP)
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
		echo "test-agents: Node.js and npm are not installed (apt-get install nodejs npm): Claude Code cannot be installed, its tests will skip"; \
	elif [ "$$(.agents/node_modules/.bin/claude --version 2>/dev/null | cut -d' ' -f1)" != "$(CLAUDE_CODE)" ]; then \
		npm install --prefix .agents --no-audit --no-fund @anthropic-ai/claude-code@$(CLAUDE_CODE) \
			|| echo "test-agents: npm could not install @anthropic-ai/claude-code@$(CLAUDE_CODE): its tests will skip"; \
	fi
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
		echo "test-agents: Node.js and npm are not installed (apt-get install nodejs npm): Codex CLI cannot be installed, its tests will skip"; \
	elif [ "$$(.agents/node_modules/.bin/codex --version 2>/dev/null | cut -d' ' -f2)" != "$(CODEX)" ]; then \
		npm install --prefix .agents --no-audit --no-fund @openai/codex@$(CODEX) \
			|| echo "test-agents: npm could not install @openai/codex@$(CODEX): its tests will skip"; \
	fi
	$(BIN)/python -m pytest tests/agents -m agents -rs

bench: $(STAMP)
	$(BIN)/toolbridge bench --auto --dense --gateway
	$(BIN)/toolbridge bench --speed
	$(BIN)/toolbridge bench --grammar

# 10,000 mixed requests (4 minutes at most); fails on RSS or fd growth past its stated bounds.
soak: $(STAMP)
	$(BIN)/toolbridge bench --soak

# The long fuzz run: 20,000 mutated outputs per dialect, whole and streamed, also through auto
# (make test runs a quick profile), after the marker-dense growth check (tests/linear.py: 40
# texts through auto, 10 per dialect, at n and 4n). SEED=n for another set; DIALECT=hermes narrows it.
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz --per-dialect 20000 --linear 40 --seed $(or $(SEED),0) $(if $(DIALECT),--dialect $(DIALECT))

# Conformance against ../shared/corpus (skipped when absent); DIALECT=hermes narrows it.
corpus: $(STAMP)
	$(BIN)/python -m tests.corpus_run $(if $(DIALECT),--dialect $(DIALECT))

clean:
	rm -rf $(VENV)
