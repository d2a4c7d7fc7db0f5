"""No import cycle in `planner/`: data flows one way (read, validate, build, solve, verify,
export), and an import inside a function counts as much as one at the top of a module."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "planner"


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted name -> file; a package's `__init__.py` is the module named after the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(node: ast.AST, name: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:  # relative: resolve against this module's package
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        yield module
        yield from (f"{module}.{a.name}" for a in node.names)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules it imports, anywhere in its body (`ast.walk`)."""
    mods = modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in _targets(node, name, is_package):
                # `from planner.x import f` names the module planner.x; `import planner.x.y`
                # the deepest module that exists.
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(
    tmp_path: Path,
) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from pkg import c\n")
    assert cycles(import_graph(pkg)) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph between planner's subpackages and top modules (`planner.simulate`, ...):
    importing any module of a package runs the package's `__init__.py` first, so a module
    of package A importing package B, one of whose modules imports A, is a cycle that no
    two modules show."""

    def top(m: str) -> str:
        return ".".join(m.split(".")[:2])

    out: dict[str, set[str]] = {top(m): set() for m in graph}
    for a, targets in graph.items():
        out[top(a)] |= {top(b) for b in targets if top(b) != top(a)}
    return out


def test_the_package_graph_finds_a_cycle_through_two_packages(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    for sub in ("engine", "planners"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "run.py").write_text("X = 1\n")
    (pkg / "engine" / "rolling.py").write_text("def f():\n    from pkg.planners import p\n")
    (pkg / "planners" / "p.py").write_text("from pkg.engine.run import X\n")
    graph = import_graph(pkg)
    assert cycles(graph) == []  # no two modules import each other
    assert cycles(packages(graph)) == [["pkg.engine", "pkg.planners"]]


def test_planner_has_no_import_cycle() -> None:
    graph = import_graph()
    found = cycles(graph) + cycles(packages(graph))
    assert not found, "import cycles in planner/:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_verifier_imports_only_the_data_it_checks() -> None:
    """`verify` stays independent of the planners: a planner bug cannot hide itself by
    being repeated in the checker (docs/ARCHITECTURE.md)."""
    allowed = {"planner.instance", "planner.schedule", "planner.durations", "planner.progress"}
    graph = import_graph()
    parts = [m for m in graph if m == "planner.verify" or m.startswith("planner.verify.")]
    assert len(parts) > 1  # the package and its rule modules
    for module in parts:
        outside = {m for m in graph[module] if not m.startswith("planner.verify")}
        assert outside <= allowed, (module, outside - allowed)
