"""The README's annotated tree lists every tracked module (regenerate: tools/readme_tree.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import readme_tree  # noqa: E402


def test_every_module_is_in_the_readme_tree():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tree = readme.split("<!-- tree -->", 1)[1].split("<!-- /tree -->", 1)[0]
    listed = {line.split()[0] for line in tree.splitlines() if line.strip() and line[0] != "`"}
    expected = {line.split()[0] for line in readme_tree.lines()}
    assert expected - listed == set(), "run: python tools/readme_tree.py and update README.md"


def test_tree_generator_sees_git_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "hat_core/harness/model.py" in out.stdout
    assert any(line.startswith("hat_core/harness/model.py ") for line in readme_tree.lines())
