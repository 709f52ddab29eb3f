"""The one-way dependencies of architecture.md, checked by scanning imports.

hat_core imports none of db, flows, ui, hat_cli; db imports none of flows, ui, hat_cli;
flows and ui do not import hat_cli or each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "hat_core": {"db", "flows", "ui", "hat_cli", "migrations"},
    "db": {"flows", "ui", "hat_cli"},
    "flows": {"ui", "hat_cli"},
    "ui": {"flows", "hat_cli"},
}


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


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layering(package):
    assert violations(package) == []


def test_scan_detects_a_violation(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("import db.models\nfrom flows.retrain import x\n")
    assert imported_packages(bad) >= {"db", "flows"}
