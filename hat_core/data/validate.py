"""Dataset validation with Great Expectations, before a dataset may be marked ready.

`flatten(rows, context)` turns TRL rows into a pandas DataFrame: metadata columns plus checks
computed into columns: `schema_ok`; `surface_known` (the row's tools are exactly those of a
harness surface the build used); `tool_calls_valid` (jsonschema against the row's own tool
schemas); `assistant_nonempty`; `ends_with_reply`; lengths; a content key for duplicates;
`leak_*` flags for held-out products / scenarios / pool names in non-test rows; the share of
each train row's skill and kind. `validate_rows` runs the expectation suite (`suite()`) on it
through an ephemeral GX context with a pandas data source and returns a `ValidationReport`
(`.markdown()`, `.to_dict()`, `.write(dir)`). Calls that a hook blocked (full-retry rows
keep them on purpose) are not held to the schema.

    report = validate_rows(rows, ValidationContext(heldout, skill_ids, original_names, cfg))
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from jsonschema import Draft202012Validator

from hat_core.data.config import ValidationConfig
from hat_core.data.splits import SPLITS, HeldOut
from hat_core.data.trajectory import conversation_text, products_in
from hat_core.hsa.heldout import name_is_heldout

ROLES = {"system", "user", "assistant", "tool"}
BLOCKED = '"blocked_by_hook"'


@dataclass(frozen=True)
class ValidationContext:
    """What the suite checks against: held-out sets, the harness's skills and names."""

    heldout: HeldOut
    skill_ids: tuple[str, ...]
    original_names: frozenset[str]
    config: ValidationConfig = ValidationConfig()
    # harness hash -> sha256 of its tools JSON: the surfaces rows may run under (None: any)
    surfaces: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Check:
    """One expectation's outcome, readable."""

    name: str
    column: str
    success: bool
    observed: str
    offending: tuple[str, ...] = ()


@dataclass(frozen=True)
class ValidationReport:
    success: bool
    rows: int
    checks: tuple[Check, ...]
    gx_result: dict = field(default_factory=dict)

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.success)

    def to_dict(self) -> dict:
        return {"success": self.success, "rows": self.rows,
                "checks": [c.__dict__ | {"offending": list(c.offending)} for c in self.checks],
                "great_expectations": self.gx_result}

    def markdown(self) -> str:
        head = "PASSED" if self.success else f"FAILED ({len(self.failed)} checks)"
        lines = [f"# Dataset validation: {head}", "", f"{self.rows} rows, "
                 f"{len(self.checks)} expectations (Great Expectations, pandas).", "",
                 "| check | column | result | observed |", "|---|---|---|---|"]
        lines += [f"| {c.name} | `{c.column}` | {'ok' if c.success else '**FAILED**'} | "
                  f"{c.observed} |" for c in self.checks]
        for c in self.failed:
            lines += ["", f"## {c.name} (`{c.column}`)", "", *(f"- {o}" for o in c.offending)]
        return "\n".join(lines) + "\n"

    def write(self, directory: Path) -> tuple[Path, Path]:
        directory.mkdir(parents=True, exist_ok=True)
        md, js = directory / "report.md", directory / "report.json"
        md.write_text(self.markdown(), encoding="utf-8")
        js.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=2, default=str)
                      + "\n", encoding="utf-8")
        return md, js


class _Tools:
    """Per distinct tools JSON text (one per harness surface): compiled validators, whether
    it shows a held-out-pool name, and a memo of argument checks."""

    def __init__(self, original_names: frozenset[str]):
        self.original_names = original_names
        self.cache: dict[str, tuple[dict | None, bool, str]] = {}
        self.checked: dict[tuple[int, str, str], bool] = {}

    def get(self, text: Any) -> tuple[dict | None, bool, str]:
        """Validators by tool name, whether a held-out-pool name shows, the text's digest."""
        if not isinstance(text, str):
            return None, False, ""
        hit = self.cache.get(text)
        if hit is None:
            tools = _parse_tools(text)
            names = set(tools or ()) - self.original_names
            hit = self.cache[text] = (tools, any(name_is_heldout(n) for n in names),
                                      hashlib.sha256(text.encode("utf-8")).hexdigest())
        return hit

    def valid(self, tools: dict, name: Any, arguments: Any) -> bool:
        key = (id(tools), str(name), str(arguments))
        hit = self.checked.get(key)
        if hit is None:
            hit = self.checked[key] = _call_valid(tools, name, arguments)
        return hit


def _parse_tools(text: str) -> dict | None:
    try:
        tools = json.loads(text)
        return {t["function"]["name"]: Draft202012Validator(t["function"]["parameters"])
                for t in tools}
    except (ValueError, KeyError, TypeError):
        return None


def _call_valid(tools: dict, name: Any, arguments: Any) -> bool:
    validator = tools.get(name)
    try:
        args = json.loads(arguments)
    except (TypeError, ValueError):
        return False
    return validator is not None and isinstance(args, dict) and validator.is_valid(args)


def _schema_ok(row: dict, tools: dict | None) -> bool:
    msgs = row.get("messages")
    if tools is None or not isinstance(msgs, list) or not msgs:
        return False
    if any(not isinstance(m, dict) or m.get("role") not in ROLES for m in msgs):
        return False
    roles = [m["role"] for m in msgs]
    if roles[0] not in ("system", "user") or "user" not in roles or "assistant" not in roles:
        return False
    ids: set = set()
    for m in msgs:
        ids |= {c.get("id") for c in m.get("tool_calls") or ()}
        if m["role"] == "tool" and m.get("tool_call_id") not in ids:
            return False
    return bool(row.get("scenario_id")) and row.get("split") in SPLITS


def _calls_valid(msgs: list, tools: dict | None, cache: _Tools) -> bool:
    if tools is None or not isinstance(msgs, list):
        return False
    blocked = {m.get("tool_call_id") for m in msgs
               if isinstance(m, dict) and m.get("role") == "tool"
               and BLOCKED in (m.get("content") or "")}
    for m in msgs:
        for c in (m.get("tool_calls") or ()) if isinstance(m, dict) else ():
            fn = c.get("function") or {}
            if c.get("id") not in blocked and not cache.valid(tools, fn.get("name"),
                                                              fn.get("arguments")):
                return False
    return True


def _row_text(msgs: list) -> str:
    start = 1 if msgs and msgs[0].get("role") == "system" else 0
    parts = []
    for m in msgs[start:]:
        parts.append(m.get("content") or "")
        parts.append(m.get("reasoning_content") or "")
        parts += [(c.get("function") or {}).get("arguments") or "" for c in
                  m.get("tool_calls") or ()]
    return "\n".join(parts)


def _flat(row: dict, cache: _Tools, ctx: ValidationContext) -> dict:
    msgs = row.get("messages") or []
    tools, pool_names, digest = cache.get(row.get("tools"))
    known = ctx.surfaces is None or ctx.surfaces.get(row.get("harness_hash")) == digest
    ok = _schema_ok(row, tools)
    text = _row_text(msgs) if ok else ""
    outside_test = row.get("split") != "test"
    assistants = [m for m in msgs if isinstance(m, dict) and m.get("role") == "assistant"]
    body = conversation_text(msgs, row.get("harness_hash"))
    return {
        "split": row.get("split"), "scenario_id": row.get("scenario_id"),
        "kind": row.get("kind"), "skill": row.get("skill"), "pool": row.get("pool"),
        "source": row.get("source"), "schema_ok": ok, "surface_known": known,
        "tool_calls_valid": ok and _calls_valid(msgs, tools, cache),
        "assistant_nonempty": bool(assistants) and all(
            (m.get("content") or "").strip() or m.get("tool_calls") for m in assistants),
        "ends_with_reply": bool(msgs) and isinstance(msgs[-1], dict)
        and msgs[-1].get("role") == "assistant" and bool((msgs[-1].get("content") or "").strip()),
        "n_messages": len(msgs), "n_chars": len(body),
        "content_key": hashlib.sha1(body.encode("utf-8")).hexdigest(),
        "leak_product": outside_test and bool(products_in(text) & ctx.heldout.products
                                              or row.get("product_id") in ctx.heldout.products),
        "leak_scenario": outside_test and row.get("scenario_id") in ctx.heldout.scenarios,
        "leak_pool": outside_test and (row.get("pool") == "heldout" or pool_names
                                       or row.get("harness_hash") in ctx.heldout.variant_hashes),
    }


def flatten(rows: Sequence[dict], ctx: ValidationContext) -> pd.DataFrame:
    """One DataFrame row per TRL row, with the computed check columns."""
    cache = _Tools(ctx.original_names)
    df = pd.DataFrame([_flat(r, cache, ctx) for r in rows])
    if df.empty:
        return df
    train = df["split"] == "train"
    for col in ("skill", "kind"):
        shares = df.loc[train, col].map(df.loc[train, col].value_counts(normalize=True))
        df[f"train_{col}_share"] = shares.reindex(df.index).astype(float)
    return df


def suite(ctx: ValidationContext) -> list:
    """The expectations, each with a readable `meta["check"]`."""
    import great_expectations.expectations as gxe

    c = ctx.config

    def meta(text: str) -> dict:
        return {"check": text}

    out = [gxe.ExpectColumnValuesToBeInSet(column=col, value_set=[True], meta=meta(text))
           for col, text in (("schema_ok", "row schema (roles, tool results, tools JSON, split)"),
                             ("surface_known", "tools are those of a harness surface built"),
                             ("tool_calls_valid", "tool calls: JSON that matches the schemas"),
                             ("assistant_nonempty", "no empty assistant turn"),
                             ("ends_with_reply", "ends with an assistant reply"))]
    out += [gxe.ExpectColumnValuesToBeInSet(column=col, value_set=[False], meta=meta(text))
            for col, text in (("leak_product", "no held-out product outside test"),
                              ("leak_scenario", "no held-out scenario outside test"),
                              ("leak_pool", "no held-out variant or pool name outside test"))]
    out += [
        gxe.ExpectColumnValuesToBeInSet(column="split", value_set=list(SPLITS),
                                        meta=meta("split is train/validation/test")),
        gxe.ExpectColumnValuesToNotBeNull(column="skill", meta=meta("every row has a skill")),
        gxe.ExpectColumnValuesToBeBetween(column="n_messages", min_value=c.min_messages,
                                          max_value=c.max_messages, meta=meta("message count")),
        gxe.ExpectColumnValuesToBeBetween(column="n_chars", min_value=c.min_chars,
                                          max_value=c.max_chars, meta=meta("length in chars")),
        gxe.ExpectColumnProportionOfUniqueValuesToBeBetween(
            column="content_key", min_value=1 - c.max_duplicate_rate,
            meta=meta(f"duplicate rate <= {c.max_duplicate_rate}")),
        gxe.ExpectColumnValuesToBeBetween(column="train_skill_share", min_value=c.min_skill_share,
                                          max_value=c.max_skill_share,
                                          meta=meta("skill balance (train)")),
        gxe.ExpectColumnValuesToBeBetween(column="train_kind_share", min_value=c.min_kind_share,
                                          max_value=c.max_kind_share,
                                          meta=meta("intent balance (train)")),
    ]
    if c.require_all_skills and ctx.skill_ids:
        out.append(gxe.ExpectColumnDistinctValuesToContainSet(
            column="skill", value_set=list(ctx.skill_ids), meta=meta("every skill present")))
    return out


def run_suite(df: pd.DataFrame, expectations: list) -> dict:
    """Run expectations on a DataFrame in an ephemeral GX context; the result as a dict."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False,
                                                         metric_calculations=False)
    batch_def = (context.data_sources.add_pandas("hat_data").add_dataframe_asset("rows")
                 .add_batch_definition_whole_dataframe("all"))
    gx_suite = context.suites.add(gx.ExpectationSuite(name="hat_training_data"))
    for e in expectations:
        gx_suite.add_expectation(e)
    result = batch_def.get_batch(batch_parameters={"dataframe": df}).validate(gx_suite)
    return result.to_json_dict()


def validate_rows(rows: Sequence[dict], ctx: ValidationContext) -> ValidationReport:
    """Flatten, run the suite, and read the result into a report."""
    df = flatten(rows, ctx)
    if df.empty:
        return ValidationReport(False, 0, (Check("dataset is not empty", "*", False, "0 rows"),))
    result = run_suite(df, suite(ctx))
    checks = tuple(_check(r, df) for r in result["results"])
    return ValidationReport(bool(result["success"]), len(df), checks, result)


def _check(r: dict, df: pd.DataFrame) -> Check:
    cfg = r["expectation_config"]
    column = cfg["kwargs"].get("column", "")
    res = r.get("result") or {}
    if "unexpected_count" in res:
        observed = f"{res['unexpected_count']} of {res['element_count']} unexpected"
    else:
        observed = str(res.get("observed_value", ""))[:120]
    offending = []
    for i in (res.get("partial_unexpected_index_list") or [])[:10]:
        row = df.loc[i]
        value = row[column].item() if hasattr(row[column], "item") else row[column]
        offending.append(f"row {i}: scenario {row['scenario_id']} ({row['split']}, "
                         f"{column}={value!r})")
    if not offending and res.get("partial_unexpected_list"):
        offending = [f"value {v!r}" for v in res["partial_unexpected_list"][:10]]
    if column == "content_key" and not r["success"]:
        dup = Counter(df[column]).most_common(3)
        offending = [f"{n} rows share one conversation (e.g. scenario "
                     f"{df.loc[df[column] == k, 'scenario_id'].iloc[0]})" for k, n in dup if n > 1]
    return Check(cfg.get("meta", {}).get("check", cfg["type"]), column, bool(r["success"]),
                 observed, tuple(offending))


def validate_dir(directory: str | Path) -> ValidationReport:
    """Re-run the suite on a dataset directory; write its report and update the manifest's
    status (`ready` or `failed`)."""
    from datasets import load_from_disk

    from hat_core.data.config import config_from_data
    from hat_core.data.manifest import read_manifest, write_manifest
    from hat_core.harness.io import load_harness

    path = Path(directory)
    manifest = read_manifest(path)
    harness = load_harness(path / "harness.yaml")
    config = config_from_data(manifest.get("config") or {}, source=str(path / "manifest.json"))
    heldout = HeldOut.from_dict(json.loads((path / "heldout.json").read_text(encoding="utf-8")))
    data = load_from_disk(str(path / "dataset")) if (path / "dataset").is_dir() else {}
    rows = [r for split in SPLITS if split in data for r in data[split].to_list()]
    ctx = ValidationContext(heldout, tuple(s.id for s in harness.skills),
                            frozenset(t.name for t in harness.tools), config.validation,
                            manifest.get("surfaces"))
    report = validate_rows(rows, ctx)
    report.write(path / "validation")
    manifest["status"] = "ready" if report.success else "failed"
    manifest["validation"] = {"success": report.success,
                              "failed": [c.name for c in report.failed],
                              "report": "validation/report.md"}
    write_manifest(path, manifest)
    return report
