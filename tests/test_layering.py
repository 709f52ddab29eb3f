"""The one-way dependencies of architecture.md, checked by scanning imports.

Between packages: hat_core imports none of db, flows, ui, hat_cli; db imports none of flows,
ui, hat_cli; flows and ui do not import hat_cli or each other.

Inside hat_core: every subpackage has a floor (`HAT_CORE_FLOORS`) and imports only from its
own floor or lower ones, so `data` does not import `evaluation`, `evaluation` does not import
`training`, and nothing imports `repro`. And no module imports itself through a cycle,
counting imports inside functions too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "hat_core": {"db", "flows", "ui", "hat_cli", "migrations"},
    "db": {"flows", "ui", "hat_cli"},
    "flows": {"ui", "hat_cli"},
    "ui": {"flows", "hat_cli"},
}

# lower floors first; a module may import from its own floor and the floors below it
HAT_CORE_FLOORS = [
    {"errors", "settings", "events", "config_file", "cpu", "children"},
    {"harness"},
    {"diff", "inference", "latency"},
    {"sim"},
    {"hsa", "evidence"},
    {"data"},
    {"evaluation"},
    {"release", "serving"},  # the gates decide on evaluation evidence (paired per-case outcomes)
    {"basemodel"},
    {"training"},
    {"repro"},
]
FLOOR = {unit: n for n, units in enumerate(HAT_CORE_FLOORS) for unit in units}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant):
                found.add(str(node.args[0].value).split(".")[0])
    return found


def violations(package: str) -> list[str]:
    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_packages(path) & FORBIDDEN[package]
        out += [f"{path.relative_to(ROOT)} imports {name}" for name in sorted(bad)]
    return out


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, name: str, known: set[str]) -> Iterator[str]:
    """The modules of `known` that `path` (module `name`) imports, `from pkg import sub` too."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    paths = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    known = set(paths)
    return {name: set(imported_modules(p, name, known)) for name, p in paths.items()}


def unit_of(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def floor_violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            s, t = unit_of(source), unit_of(target)
            if s and t and s != t and FLOOR.get(t, 99) > FLOOR.get(s, -1):
                out.append(f"{source} imports {target} ({t} is above {s})")
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layering(package):
    assert violations(package) == []


def test_every_hat_core_subpackage_has_a_floor():
    units = {p.stem if p.is_file() else p.name for p in (ROOT / "hat_core").iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert units - set(FLOOR) == set()


def test_hat_core_imports_only_from_its_floor_or_below():
    assert floor_violations(import_graph(ROOT, "hat_core")) == []


@pytest.mark.parametrize("package", ["hat_core", "db", "flows", "ui", "hat_cli"])
def test_no_import_cycle(package):
    assert cycles(import_graph(ROOT, package)) == []


def test_scan_detects_a_violation(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("import db.models\nfrom flows.retrain import x\n")
    assert imported_packages(bad) >= {"db", "flows"}


def test_scan_detects_a_floor_violation_and_a_cycle(tmp_path):
    pkg = tmp_path / "hat_core"
    for sub in ("data", "evaluation"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "data" / "a.py").write_text("def f():\n    from hat_core.evaluation import b\n")
    (pkg / "evaluation" / "b.py").write_text("from hat_core.data.a import f\n")
    graph = import_graph(tmp_path, "hat_core")
    assert graph["hat_core.data.a"] == {"hat_core.evaluation.b"}
    assert floor_violations(graph) == [
        "hat_core.data.a imports hat_core.evaluation.b (evaluation is above data)"]
    assert cycles(graph) == [["hat_core.data.a", "hat_core.evaluation.b"]]
