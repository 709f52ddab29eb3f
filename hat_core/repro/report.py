"""The reproduction table, reported: mean ± std over seeds, a markdown table and plots.

    write_outputs(results, Path("docs/results"))  # results.json, table.md, bars.png, curves.png
    merged = merge_results([Path("s0/results.json"), Path("s1/results.json")])  # seeds run apart

`results` is what `hat_core.repro.run.run_repro` returns. Every number of the table is
computed here from the per-seed metrics in `results`; `std` is the sample standard deviation
over seeds (shown as `n=1` when there is one seed). `write_outputs` adds the multi-seed
aggregates (`hat_core.repro.aggregate`: pooled rates with Wilson intervals, paired tests
pooled over seeds, per-family breakdowns) to results.json (`aggregates`) and to table.md
(`hat_core.repro.tables`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from hat_core.errors import ConfigError, Problem
from hat_core.repro.aggregate import aggregates, mean_std
from hat_core.repro.config import ARM_LABELS, ARMS
from hat_core.repro.tables import aggregates_markdown

ARM_COLORS = {"base": "#999999", "fixed_sft": "#d62728", "hsa_sft": "#1f77b4",
              "hsa_opd": "#9467bd", "hat": "#2ca02c"}
# (column, metric key, scale); "badcase_reduction" is computed from the edit counts
COLUMNS = (
    ("T1", "t1.pass_rate", 100), ("T2", "t2.pass_rate", 100), ("T1−T2", "t2.gap", 100),
    ("T2 (v2 edit)", "t2_edit.pass_rate", 100),
    ("T1 exact 1st call", "t1.first_call_exact", 100),
    ("T2 exact 1st call", "t2.first_call_exact", 100),
    ("T2 (v2 edit) exact 1st call", "t2_edit.first_call_exact", 100),
    ("IFE-P", "ifeval.ife_p", 100), ("Tool rob.", "tool_robustness.score", 100),
    ("Prompt rob.", "prompt_robustness.score", 100),
    ("CoT tool-call (tok)", "cot_length.tool_call_mean", 1),
    ("CoT reply (tok)", "cot_length.reply_mean", 1),
    ("Bad-case red. v2–v4", "badcase_reduction", 100),
)
# graded signal beside the pass rates (the simulator's reward means, 0..1, as %)
REWARD_COLUMNS = tuple((f"{suite.upper()} {name}", f"{suite}.mean_{name}", 100)
                       for suite in ("t1", "t2")
                       for name in ("accuracy", "effectiveness", "skill_selection",
                                    "tool_rationality"))
STAGE_CURVES = (("fixed_sft", "loss"), ("hsa_sft", "loss"), ("hat_opd", "loss"))
# suites of the failure-type table (`edit` pools the edited harnesses)
FAILURE_SUITES = ("t1", "t2", "edit", "ifeval")


# config keys that may differ between merged runs: which seeds, and how many CPU threads
MERGE_FREE = ("seeds", "threads")


def merge_results(paths: list[Path]) -> dict:
    """One results document from several runs (seeds run as separate processes). A seed in
    two runs, or runs whose configs differ in anything but the seeds and threads, raise a
    `ConfigError` naming the files and keys."""
    merged: dict = {"seeds": {}, "wall_seconds": 0.0, "merged_from": [str(p) for p in paths],
                    "mlflow_uris": []}
    first: tuple[Path, dict] | None = None
    for path in paths:
        try:
            run = json.loads(Path(path).read_text(encoding="utf-8"))
            seeds = run["seeds"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot merge {path}", [Problem(
                str(path), f"not a results file: {exc}")]) from None
        clash = sorted(set(seeds) & set(merged["seeds"]))
        if clash:
            raise ConfigError(f"cannot merge {path}", [Problem(
                str(path), f"seed(s) {', '.join(clash)} appear twice")])
        config = {k: v for k, v in (run.get("config") or {}).items() if k not in MERGE_FREE}
        if first is None:
            first = (Path(path), config)
        elif config != first[1]:
            keys = sorted(k for k in config.keys() | first[1].keys()
                          if config.get(k) != first[1].get(k))
            raise ConfigError(f"cannot merge {path}", [Problem(
                str(path), f"config differs from {first[0]} in {', '.join(keys)}; only runs "
                           f"of one config merge into one table")])
        merged["seeds"] |= {k: _with_right_tool(v) for k, v in seeds.items()}
        merged["wall_seconds"] += run.get("wall_seconds", 0.0)
        merged.setdefault("run_wall_seconds", []).append(run.get("wall_seconds", 0.0))
        merged.setdefault("config", run.get("config"))
        merged["mlflow_uris"].append(run.get("mlflow_uri"))
    return merged


def arm_values(results: dict, arm: str, key: str) -> list[float]:
    """The metric `key` of `arm`, one value per seed that has it."""
    out = []
    for seed in results["seeds"].values():
        if arm not in seed["eval"]:
            continue
        value = (badcase_reduction(seed, arm) if key == "badcase_reduction"
                 else seed["eval"][arm]["metrics"].get(key))
        if value is not None:
            out.append(float(value))
    return out


def badcase_reduction(seed: dict, arm: str) -> float | None:
    """(base rate - arm rate) / base rate over the pooled edits; None for the base or when
    the base had no bad case."""
    if arm == "base":
        return None
    base, mine = _pooled(seed["eval"]["base"]["edits"]), _pooled(seed["eval"][arm]["edits"])
    return (base - mine) / base if base > 0 else None


def _pooled(edits: dict) -> float:
    cases = sum(e["cases"] for e in edits.values())
    return sum(e["bad"] for e in edits.values()) / cases if cases else 0.0


def cell(values: list[float], scale: float) -> str:
    if not values:
        return "—"
    mean, std = mean_std([v * scale for v in values])
    return f"{mean:.1f} ± {std:.1f}" if std is not None else f"{mean:.1f} (n=1)"


def markdown_table(results: dict, columns: tuple = COLUMNS) -> str:
    """One row per arm, one column per metric, `mean ± std` over seeds."""
    head = "| Setting | " + " | ".join(c for c, _, _ in columns) + " |"
    rule = "|---|" + "---|" * len(columns)
    rows = [f"| {ARM_LABELS[arm]} | "
            + " | ".join(cell(arm_values(results, arm, key), scale) for _, key, scale in columns)
            + " |" for arm in ARMS]
    seeds = ", ".join(results["seeds"])
    note = (f"\nSeeds: {seeds}. Percentages except CoT (simulator tokens: one per CJK "
            f"character or whitespace run). Wall time: {wall_note(results)}.\n")
    return "\n".join([head, rule, *rows]) + "\n" + note


def wall_note(results: dict) -> str:
    """`N s`, or for merged runs the sum and the longest run (they may have run side by
    side, so the sum is not the elapsed time)."""
    runs = results.get("run_wall_seconds")
    if not runs:
        return f"{results.get('wall_seconds', 0):.0f} s"
    return (f"{sum(runs):.0f} s summed over {len(runs)} runs (the longest {max(runs):.0f} s; "
            f"runs side by side overlap)")


def timings_table(results: dict) -> str:
    names = list(next(iter(results["seeds"].values()))["timings"])
    rows = [f"| {n} | " + " | ".join(f"{s['timings'].get(n, 0):.0f}"
                                      for s in results["seeds"].values()) + " |" for n in names]
    head = "| step | " + " | ".join(f"seed {k} (s)" for k in results["seeds"]) + " |"
    return "\n".join([head, "|---|" + "---|" * len(results["seeds"]), *rows]) + "\n"


def failure_types(results: dict, arm: str, suite: str) -> dict[str, int]:
    """The failure types of `arm` on `suite` summed over seeds (`edit` pools every edit);
    most frequent first."""
    total: dict[str, int] = {}
    for seed in results["seeds"].values():
        table = seed["eval"].get(arm, {}).get("failures", {})
        for name, counts in table.items():
            if name == suite or (suite == "edit" and name.startswith("edit:")):
                for key, n in counts.items():
                    total[key] = total.get(key, 0) + n
    return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))


def right_tool(results: dict, arm: str, suite: str) -> tuple[int, int] | None:
    """(cases with the right tools, cases) of `arm` on `suite` summed over seeds (`edit`
    pools the edits), from each seed's `right_tool` counts, else from its case files when they
    are still on disk; None when neither is there."""
    right = total = 0
    found = False
    for seed in results["seeds"].values():
        for name, (k, n) in (_right_tool_of(seed["eval"].get(arm, {})) or {}).items():
            if name == suite or (suite == "edit" and name.startswith("edit:")):
                right, total, found = right + k, total + n, True
    return (right, total) if found else None


def _with_right_tool(seed: dict) -> dict:
    """`seed` with `right_tool` counted from its case files where it lacks them and the files
    are on disk, so a merged results.json keeps them when the files are gone."""
    for entry in seed.get("eval", {}).values():
        counts = _right_tool_of(entry)
        if counts is not None:
            entry["right_tool"] = counts
    return seed


def _right_tool_of(entry: dict) -> dict | None:
    """An arm's stored `right_tool` counts, else counted from its case files (None when it
    has neither)."""
    from hat_core.repro.run import right_tool_counts

    if "right_tool" in entry:
        return entry["right_tool"]
    files = [Path(f) for f in entry.get("cases", [])]
    if not files or not all(f.is_file() for f in files):
        return None
    return right_tool_counts([json.loads(line) for f in files
                              for line in f.read_text(encoding="utf-8").splitlines()
                              if line.strip()])


def right_tool_markdown(results: dict, suites: tuple[str, ...] = ("t1", "t2", "edit")) -> str:
    """Cases with the right tools per arm and suite, `k / n` summed over seeds ("" without
    data)."""
    cells = {(a, s): right_tool(results, a, s) for a in ARMS for s in suites}
    if all(v is None for v in cells.values()):
        return ""
    head = "| Setting | " + " | ".join(suites) + " |"
    rows = [f"| {ARM_LABELS[a]} | " + " | ".join(
        f"{v[0]} / {v[1]}" if (v := cells[(a, s)]) else "—" for s in suites) + " |"
        for a in ARMS]
    return "\n".join([head, "|---|" + "---|" * len(suites), *rows]) + "\n"


def failures_markdown(results: dict, suites: tuple[str, ...] = FAILURE_SUITES,
                      top: int = 3) -> str:
    """Why cases failed: the `top` failure types per arm and suite, summed over seeds (empty
    when the results predate per-case logging)."""
    if not any("failures" in s["eval"].get(a, {}) for s in results["seeds"].values()
               for a in ARMS):
        return ""
    head = "| Setting | " + " | ".join(suites) + " |"
    rows = []
    for arm in ARMS:
        cells = []
        for suite in suites:
            counts = failure_types(results, arm, suite)
            shown = ", ".join(f"{k} {n}" for k, n in list(counts.items())[:top])
            rest = sum(list(counts.values())[top:])
            cells.append((shown + (f", other {rest}" if rest else "")) or "—")
        rows.append(f"| {ARM_LABELS[arm]} | " + " | ".join(cells) + " |")
    return "\n".join([head, "|---|" + "---|" * len(suites), *rows]) + "\n"


def write_outputs(results: dict, out: Path) -> dict[str, Path]:
    """results.json (with `aggregates`), table.md, bars.png and curves.png under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    results = {**results, "aggregates": aggregates(results)}
    files = {"results": out / "results.json", "table": out / "table.md"}
    files["results"].write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str)
                                + "\n", encoding="utf-8")
    failures, right = failures_markdown(results), right_tool_markdown(results)
    files["table"].write_text(
        markdown_table(results) + "\nReward means (%):\n\n"
        + markdown_table(results, REWARD_COLUMNS)
        + (f"\nFailure types (cases, summed over seeds; IFEval: broken instructions):\n\n"
           f"{failures}" if failures else "")
        + (f"\nRight tools (cases whose verdict lists no wrong_tool / cases, summed over "
           f"seeds):\n\n{right}" if right else "")
        + "\n" + aggregates_markdown(results)
        + "\n" + timings_table(results),
        encoding="utf-8")
    files["bars"] = plot_bars(results, out / "bars.png")
    files["curves"] = plot_curves(results, out / "curves.png")
    return files


def plotted_columns(results: dict, columns: tuple = COLUMNS) -> tuple[list, list[str]]:
    """The table's columns that some arm has a value for, and the titles of those no arm
    has (suites the run left out, such as the robustness ones): no empty panels."""
    kept = [c for c in columns if any(arm_values(results, a, c[1]) for a in ARMS)]
    return kept, [c[0] for c in columns if c not in kept]


def plot_bars(results: dict, path: Path) -> Path:
    """One panel per metric that was measured: a bar per arm (mean) with the std as error
    bar; the title names the columns left out."""
    plt = _pyplot()
    columns, missing = plotted_columns(results)
    rows = max(1, math.ceil(len(columns) / 4))
    fig, axes = plt.subplots(rows, 4, figsize=(17, 3.4 * rows), squeeze=False)
    for ax in axes.flat[len(columns):]:
        ax.axis("off")
    for ax, (title, key, scale) in zip(axes.flat, columns, strict=False):
        stats = [mean_std([v * scale for v in arm_values(results, a, key)])
                 if arm_values(results, a, key) else (math.nan, None) for a in ARMS]
        ax.bar(range(len(ARMS)), [m for m, _ in stats], yerr=[s or 0 for _, s in stats],
               capsize=4, color=[ARM_COLORS[a] for a in ARMS])
        ax.set_xticks(range(len(ARMS)), ["base", "fixed", "hsa", "+opd", "hat"])
        passes = key.endswith(".pass_rate") or key == "t2.gap"  # the table's plain headers
        ax.set_title(f"{title} pass rate" if passes else title, fontsize=9)
    fig.suptitle(f"Reproduction table, seeds {', '.join(results['seeds'])} (mean ± std)"
                 + (f"; not run: {', '.join(missing)}" if missing else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_curves(results: dict, path: Path) -> Path:
    """Training curves per stage and seed: SFT (fixed, HSA) and OPD loss, RL rewards."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(18, 4))
    for seed, data in results["seeds"].items():
        stages = data["stages"]
        for ax, (arm, key) in zip(axes[:3], STAGE_CURVES, strict=True):
            steps, values = _curve(stages.get(arm, {}).get("history", []), key)
            ax.plot(steps, values, label=f"seed {seed}")
            ax.set_title(f"{arm}: {key}")
        history = stages.get("hat_rl", {}).get("history", [])
        for key in sorted({k for r in history for k in r if k.startswith("rewards/")
                           and k.endswith("/mean")}):
            steps, values = _curve(history, key)
            axes[3].plot(steps, values, label=f"{key.split('/')[1]} s{seed}")
        axes[3].set_title("hat_rl: reward components (mean)")
    for ax in axes:
        ax.set_xlabel("step")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _curve(history: list[dict], key: str) -> tuple[list[int], list[float]]:
    points = [(r["step"], r[key]) for r in history if key in r and "step" in r]
    return [p[0] for p in points], [float(p[1]) for p in points]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
