"""The package's imports draw from top to bottom: no circles, no private names across modules,
and no layer importing a layer above it.

Every ``import`` statement in the package counts, wherever it stands (inside a function, under
``TYPE_CHECKING``): a circle hidden in a function body is still a circle.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "toolbridge"

# The layers, bottom first. A module may import its own layer and those below it.
LAYERS = [
    ("errors", "events", "limits", "pieces"),
    ("_quickcheck", "freeform", "tools"),
    ("syntax",),
    ("dialects",),
    ("openai",),
    ("parsing",),
    ("render",),
    ("constrain",),
    ("gateway",),
    ("bench",),
    ("cli",),
    ("__init__", "__main__"),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = ("toolbridge", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str) -> list[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import in ``module`` of the package."""
    tree = ast.parse(MODULES[module].read_text())
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names if a.name.startswith("toolbridge")]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if not target.startswith("toolbridge"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub, None) if sub in MODULES else (target, alias.name))
    return found


def graph() -> dict[str, set[str]]:
    return {m: {target for target, _ in imports(m) if target != m} for m in MODULES}


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of modules, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_walk_sees_the_package() -> None:
    assert "toolbridge.parsing.stream" in MODULES and "toolbridge.gateway.app" in MODULES
    assert "toolbridge.syntax.dialect" in graph()["toolbridge.parsing.stream"]


def test_no_import_circles() -> None:
    assert find_cycle(graph()) is None, " -> ".join(find_cycle(graph()) or [])


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_private_names_across_modules() -> None:
    bad = []
    for module in MODULES:
        for target, name in imports(module):
            if name is not None and name.startswith("_") and target != module:
                bad.append(f"{module} imports {name} from {target}")
            private = [p for p in target.split(".") if p.startswith("_") and p != "__init__"]
            package = target.rsplit(".", 1)[0]
            if private and not module.startswith(package + ".") and module != package:
                bad.append(f"{module} imports the private module {target}")
    assert not bad, "\n".join(bad)


def test_layers_import_downwards() -> None:
    assert set(RANK) >= {layer(m) for m in MODULES}, "a new top-level module needs a layer here"
    bad = [f"{m} ({layer(m)}) imports {t} ({layer(t)})"
           for m, targets in graph().items() for t in targets if t in MODULES and RANK[layer(t)] > RANK[layer(m)]]
    assert not bad, "\n".join(bad)


# What ``pip install toolbridge`` (no extras) gives must work without the gateway's, the
# renderer's and the demo's packages: they are hidden from this interpreter.
WITHOUT_EXTRAS = textwrap.dedent("""
    import importlib.abc, sys
    HIDDEN = {"httptools", "uvloop", "orjson", "jinja2", "openai", "markupsafe"}

    class Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                raise ImportError(f"{name} is hidden: not installed without extras")
            return None

    sys.meta_path.insert(0, Hide())
    import toolbridge
    from toolbridge import ChunkEncoder, StreamParser, assemble, parse
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"days": {"type": "integer"}}}}}]
    text = '<tool_call>{"name": "get_weather", "arguments": {"days": 2}}</tool_call>'
    result = parse(text, "auto", tools)
    assert result.finish_reason == "tool_calls", result
    parser, encoder = StreamParser("hermes", tools), ChunkEncoder()
    deltas = [d for piece in text for d in encoder.encode(parser.feed(piece))]
    deltas += encoder.encode(parser.close()) + encoder.finish()
    assert assemble(deltas)["tool_calls"][0]["function"]["arguments"] == '{"days": 2}'
    from toolbridge.cli.main import main
    assert main(["dialects"]) == 0
    code = main(["serve", "--upstream", "http://127.0.0.1:9/v1"])
    assert code == 2, code
    print("library ok")
""")


def test_the_library_runs_without_extras() -> None:
    done = subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS], capture_output=True, text=True,
                          cwd=ROOT.parent, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "library ok" in done.stdout
    assert "pip install 'toolbridge[serve]'" in done.stderr


def test_extras_are_declared() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    for package in ("httptools", "orjson", "uvloop", "jinja2"):
        assert package not in core, f"{package} is not needed by the library"
    assert {"serve", "render", "all"} <= set(extras)
    assert "httptools" in " ".join(extras["serve"]) and "jinja2" in " ".join(extras["render"])


def test_a_venv_without_extras_has_the_library(tmp_path: Path) -> None:
    """``pip install toolbridge`` into a fresh virtual environment: the library imports and
    parses, and the gateway command names the extra it lacks (no extra was installed)."""
    venv, source = tmp_path / "venv", tmp_path / "source"
    # Built from a copy: a build writes build/ and *.egg-info beside the sources it reads.
    shutil.copytree(ROOT, source / "toolbridge", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT.parent / name, source / name)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "--quiet", str(source)],
                             capture_output=True, text=True, timeout=600)
    if install.returncode and "No matching distribution" in install.stderr:
        pytest.skip("no package index reachable to install the core dependencies")
    assert install.returncode == 0, install.stderr
    listed = subprocess.run([python, "-m", "pip", "list", "--format=freeze"], capture_output=True,
                            text=True, check=True).stdout.lower()
    assert "jsonschema" in listed
    assert not any(f"{p}==" in listed for p in ("httptools", "orjson", "uvloop", "jinja2", "openai"))
    code = WITHOUT_EXTRAS.split("import toolbridge", 1)[1]  # the same checks, nothing hidden
    done = subprocess.run([python, "-c", "import toolbridge" + code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "library ok" in done.stdout and "pip install 'toolbridge[serve]'" in done.stderr
