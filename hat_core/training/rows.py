"""Training rows at the TRL boundary: SFT conversations and OPD prompts.

- `load_sft_rows(path)`: the `train` split of a `hat data build` output (`<dir>/dataset`, an
  HF `DatasetDict` on disk), any HF dataset saved on disk, or a JSONL file of rows
  `{"messages": [...], "tools": json-string, ...metadata}`; only `messages` and `tools` reach
  TRL (the metadata columns are not the trainer's business).
- `load_opd_prompts(source, size, seed)`: `builtin` (`hat_core.data.opd_prompts`' seeded
  general instructions, whose topics differ from the IFE-P set) or the `opd/` prompt set of a
  data build, an HF dataset on disk or a JSONL file (`prompt` text or `messages`).
- `oracle_rows(harness, n, seed)`: a small SFT set played by the simulator's oracle, for tests,
  benchmarks and smoke runs when no data build exists yet.
- `file_digest(path)`: sha256 of a file or directory (the dataset hash logged with a stage).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from hat_core.errors import ConfigError, Problem

SFT_FILES = ("train.jsonl",)


def _disk_rows(path: Path) -> list[dict]:
    """The `train` split (else the first) of an HF dataset saved with `save_to_disk`."""
    from datasets import DatasetDict, load_from_disk

    data = load_from_disk(str(path))
    if isinstance(data, DatasetDict):
        data = data["train"] if "train" in data else next(iter(data.values()))
    return data.to_list()


def _sft_source(path: Path) -> list[dict]:
    if path.is_file():
        return _read_jsonl(path)
    for candidate in (path / "dataset", path):
        if (candidate / "dataset_dict.json").is_file() or \
                (candidate / "dataset_info.json").is_file():
            return _disk_rows(candidate)
    for name in SFT_FILES:
        if (path / name).is_file():
            return _read_jsonl(path / name)
    raise ConfigError(f"no SFT rows at {path}", [Problem(str(path), (
        "expected a `hat data build` output (with dataset/), an HF dataset saved on disk, "
        "or a JSONL file"))])


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path} is not valid JSONL",
                              [Problem(f"{path}:{number}", str(exc))]) from exc
    return rows


def _tools_text(tools) -> str:
    return tools if isinstance(tools, str) else json.dumps(tools or [], ensure_ascii=False)


def _messages(messages: list[dict]) -> list[dict]:
    """Tool-call arguments as JSON text (Arrow merges struct schemas across rows)."""
    out = []
    for m in messages:
        m = dict(m)
        if m.get("tool_calls"):
            m["tool_calls"] = [
                {**c, "function": {**c["function"],
                                   "arguments": _tools_text(c["function"].get("arguments"))}}
                for c in m["tool_calls"]]
        out.append(m)
    return out


def sft_row(messages: list[dict], tools) -> dict:
    """One TRL SFT row."""
    return {"messages": _messages(messages), "tools": _tools_text(tools)}


def load_sft_rows(path: str | Path, profile: str | None = None) -> list[dict]:
    """The SFT rows of a JSONL file or dataset directory (see the module docstring). Under
    a compact render profile (`profile`, else the active one) the tool schemas stay out
    of the chat template: the rows' system prompts already list the tools."""
    from hat_core.harness.render import active_profile, is_compact

    rows = _sft_source(Path(path))
    if is_compact(profile or active_profile()):
        rows = [{**r, "tools": "[]"} for r in rows]
    bad = [i for i, r in enumerate(rows, 1) if not isinstance(r.get("messages"), list)]
    if bad or not rows:
        raise ConfigError(f"{path} has no usable SFT rows",
                          [Problem(f"{path}[{i}]", "no 'messages' list") for i in bad[:10]]
                          or [Problem(str(path), "empty")])
    return [sft_row([_drop_nulls(m) for m in r["messages"]], r.get("tools")) for r in rows]


def _drop_nulls(message: dict) -> dict:
    return {k: v for k, v in message.items() if v is not None}


def load_opd_prompts(source: str, size: int, seed: int) -> list[dict]:
    """`size` prompt rows `{"prompt": [user message]}` from `source` (`builtin` or a path)."""
    from hat_core.data.opd_prompts import generate_prompts, load_prompts

    if source == "builtin":
        prompts = generate_prompts(random.Random(f"opd:{seed}"), size)
    else:
        path = Path(source)
        prompts = load_prompts(path / "opd" if (path / "opd").is_dir() else path)[:size]
    return [{"prompt": [{"role": "user", "content": p.prompt}]} for p in prompts]


def oracle_rows(harness_path: str | Path, n: int, seed: int = 0) -> list[dict]:
    """`n` SFT rows played by the simulator's oracle on the harness at `harness_path`."""
    from hat_core.harness.io import load_harness
    from hat_core.sim.batch import world
    from hat_core.sim.binding import bind
    from hat_core.sim.policy import OraclePolicy
    from hat_core.sim.runner import run_episode

    harness = load_harness(Path(harness_path))
    catalog, scenarios = world(seed, n)
    tools = bind(harness).rendered.tools
    return [sft_row(list(run_episode(harness, s, catalog, OraclePolicy()).messages), tools)
            for s in scenarios]


def file_digest(path: str | Path) -> str:
    """sha256 over a file's bytes, or over a directory's relative paths and file bytes."""
    path = Path(path)
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path.parent if path.is_file() else path)).encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def rows_digest(rows: list[dict]) -> str:
    """sha256 of rows as canonical JSON (for generated data such as builtin prompts)."""
    text = json.dumps(rows, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
