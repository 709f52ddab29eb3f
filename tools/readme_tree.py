"""Print the README's annotated file tree: one line per tracked file, from each module's
docstring (first line) or a fixed note for non-Python files.

Run: python tools/readme_tree.py > /tmp/tree.txt, then paste it into README.md between the
`<!-- tree -->` markers (tests/test_readme_tree.py checks every module is listed).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("hat_core", "db", "migrations", "flows", "ui", "hat_cli", "benchmarks", "tools")
NOTES = {
    "pyproject.toml": "the installable project `hat-ops`: pins, extras dev and gpu, `hat` script",
    "Makefile": "the README's two commands (`make demo`, `make test`) and helpers",
    ".ci/run": "CI: runs the README's test command",
    "docker-compose.yml": ("production stack: postgres, mlflow, prefect + worker (gateway), "
                           "console; gpu: model-sync, vLLM per arm, teacher vLLM"),
    "Dockerfile": "the application image used by docker-compose",
    ".env.example": "every variable docker-compose reads",
    "alembic.ini": "Alembic for hand use; `hat db upgrade` needs no ini",
    "examples/models/toy-long/README.md": "the shipped base model (toy-long seed 0, 5.1 MB): "
                                          "how it was built, checksums in SHA256SUMS",
}


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return sorted(out.split())


def summary(path: Path) -> str:
    if path.suffix != ".py":
        return ""
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    except SyntaxError:
        return ""
    return (doc or "").strip().splitlines()[0].rstrip(".") if doc else ""


def lines() -> list[str]:
    out = []
    for name in tracked():
        top = name.split("/")[0]
        if name in NOTES:
            out.append(f"{name:<44} {NOTES[name]}")
        elif top in PACKAGES and name.endswith(".py") and not name.endswith("__init__.py"):
            out.append(f"{name:<44} {summary(ROOT / name)}")
    return out


if __name__ == "__main__":
    sys.stdout.write("\n".join(lines()) + "\n")
