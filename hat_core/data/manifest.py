"""The dataset manifest: content hash, version, counts, rejection statistics, harness, config.

The content hash covers the rows (every split, in order), the config and the harness hash, so
"same dataset?" is one comparison; the version is its first 12 hex digits. `status` is
`ready` only after validation passed; training must refuse anything else (`require_ready`).

    manifest = make_manifest(rows_by_split, config_dict, harness_hash, stats)
    write_manifest(out, manifest); read_manifest(out)
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hat_core.errors import ConfigError, NotFoundError

MANIFEST = "manifest.json"
FORMAT = "hat-data/1"


def content_hash(rows_by_split: Mapping[str, Sequence[dict]], config: Mapping[str, Any],
                 harness_hash: str) -> str:
    """sha256 over the rows, the config and the harness hash.

    Each row is hashed as its JSON with the `tools` text replaced by that text's own digest
    (computed once per distinct text), keys in sorted order."""
    h = hashlib.sha256()
    h.update(f"{FORMAT}|{harness_hash}|".encode())
    h.update(json.dumps(config, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    tool_digests: dict[str, str] = {}
    for split in sorted(rows_by_split):
        h.update(f"|{split}|".encode())
        for row in rows_by_split[split]:
            tools = row.get("tools")
            if isinstance(tools, str) and tools not in tool_digests:
                tool_digests[tools] = hashlib.sha256(tools.encode("utf-8")).hexdigest()
            slim = {k: (tool_digests.get(v, v) if k == "tools" else v)
                    for k, v in sorted(row.items())}
            h.update(json.dumps(slim, ensure_ascii=False, default=str).encode("utf-8"))
            h.update(b"\n")
    return h.hexdigest()


def counts(rows_by_split: Mapping[str, Sequence[dict]]) -> dict:
    """Rows per split, and per skill, kind, source and retry mode over all splits."""
    out: dict[str, Any] = {"splits": {k: len(v) for k, v in rows_by_split.items()}}
    for col in ("skill", "kind", "source", "retry_mode", "variant_id"):
        c = Counter(r.get(col) for rows in rows_by_split.values() for r in rows)
        out[col] = dict(sorted((str(k), v) for k, v in c.items()))
    return out


def make_manifest(rows_by_split: Mapping[str, Sequence[dict]], config: Mapping[str, Any],
                  harness_hash: str, **extra: Any) -> dict:
    """The manifest document (status `pending` until validation says otherwise)."""
    digest = content_hash(rows_by_split, config, harness_hash)
    return {"format": FORMAT, "version": digest[:12], "content_hash": digest,
            "status": "pending", "harness_hash": harness_hash,
            "counts": counts(rows_by_split), "config": dict(config), **extra}


def write_manifest(directory: Path, manifest: Mapping[str, Any]) -> Path:
    path = directory / MANIFEST
    path.write_text(json.dumps(manifest, ensure_ascii=False, indent=2, default=str) + "\n",
                    encoding="utf-8")
    return path


def read_manifest(directory: str | Path) -> dict:
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise NotFoundError(f"{directory}: not a dataset directory (no {MANIFEST})")
    return json.loads(path.read_text(encoding="utf-8"))


def require_ready(directory: str | Path) -> dict:
    """The manifest of a dataset that passed validation (ConfigError otherwise)."""
    manifest = read_manifest(directory)
    if manifest.get("status") != "ready":
        raise ConfigError(f"{directory}: dataset status is {manifest.get('status')!r}, not "
                          "'ready'; see validation/report.md")
    return manifest
