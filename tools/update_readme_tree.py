"""Rewrite the annotated tree between the `<!-- tree -->` markers of README.md.

Run: python tools/update_readme_tree.py
"""

from __future__ import annotations

from pathlib import Path

import readme_tree

README = Path(__file__).resolve().parent.parent / "README.md"


def main() -> None:
    text = README.read_text(encoding="utf-8")
    head, rest = text.split("<!-- tree -->", 1)
    _, tail = rest.split("<!-- /tree -->", 1)
    tree = "\n".join(readme_tree.lines())
    README.write_text(f"{head}<!-- tree -->\n```\n{tree}\n```\n<!-- /tree -->{tail}",
                      encoding="utf-8")


if __name__ == "__main__":
    main()
