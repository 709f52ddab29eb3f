"""What the demo's base must know: two candidate bases, both story arms trained briefly from
each, every model played on v1 and on v2 (the rename week).

    .venv/bin/python benchmarks/demo_base.py --work runs/demo-base [--steps 150,600]
        [--base-steps 600] [--episodes 45] [--bases s0,multi] [--start MODEL]
        [--arms hsa,fixed[,hsa-hi]] [--longer STEPS] [--render-profile compact-args]
        [--by-change] [--constrain-tools] [--seed N]

From the shipped `examples/models/toy-long` (generic tool use, no shop), on 2 cores:
1. the pretraining surface S0: `hat augment` v1 once with
   `examples/configs/hsa_pretrain_surface.yaml` (every name renamed, readable), "another shop's
   harness";
2. four data builds: `s0` (shop episodes on S0 only, data seed 7), `multi` (`data_cpu.yaml`
   on v1 with 1,000 training-pool surfaces, data seed 7), and the story's two arms on seed 0:
   `hsa` (`data_cpu.yaml`, 500 surfaces) and `fixed` (`data_cpu_fixed.yaml`, v1 only);
3. two candidate bases, `hat train sft` from toy-long on `s0` and on `multi` (lr 2e-3, batch
   2 x 2,048 tokens, both threads);
4. from each base, the HSA arm and the fixed arm side by side (one thread each, lr 1e-3, the
   same steps), a checkpoint at every `--steps` value;
5. `hat eval run --suites t1` of every model on v1 and on v2 (the same 45 held-out scenarios,
   3 of each kind, compact, greedy).
It prints, per model: exact first call on v1 and on v2 with Wilson 95% intervals, the change
v2 - v1 paired on the same scenarios (Bonett-Price 95% interval) and the demo's zero-shot
verdict on T1 (`examples/configs/retrain_demo.yaml`'s gates, margin 0.10); then HSA - fixed
on v2 at each step, paired. WORK/results.json holds the numbers. Steps already in WORK are
skipped, so a rerun only adds what is missing.

`--by-change` splits v2 into its single changes (`week_parts`: v1 with only v2's tool renames,
only its parameter renames, only its skill renames, only its new descriptions, only its tool
order; and v2 with every rename taken back) and plays the last step's models of each arm on
each: what each change of the week costs, paired against v1 on the same scenarios.

`--constrain-tools` evaluates with constrained decoding (`hat eval run --constrain-tools`:
tool-call names and argument keys held to the offered tools) into WORK/eval-constrained and
WORK/results-constrained.json; run it after a free run on the same WORK and nothing is
trained again, and both play the same scenarios.

`--seed N` makes a replicate: data seeds 7+N (`s0`, `multi`) and N (the arms), training seed
N, the same 45 scenarios; 0 (the default) runs the first runs' commands unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from hat_core.evaluation.call_metrics import paired_difference_interval, wilson
from hat_core.evaluation.paired import read_case_rows
from hat_core.harness.io import load_harness
from hat_core.harness.render import PROFILES
from hat_core.release.gates import evaluate_zero_shot, gate_config_from_dict

ROOT = Path(__file__).resolve().parent.parent
HAT = str(Path(sys.executable).parent / "hat")
CONFIGS = ROOT / "examples" / "configs"
HARNESSES = ROOT / "examples" / "harnesses"
# how the models decode in evaluation: free, or (--constrain-tools) held to the offered tools
DECODING: dict = {"dir": "eval", "flags": []}
TOY_LONG = ROOT / "examples" / "models" / "toy-long"


def run(cmd: list[str], log: Path, threads: int | None = None) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)} if threads else None
    print("$", " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=ROOT,
                            env=env)


def wait(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.wait() != 0:
            sys.exit(f"failed: {' '.join(map(str, proc.args))} (log {proc.stdout.name})")


# HSA with (almost) every tool and parameter renamed on every surface: the default renames
# a tool on 64% of surfaces and a parameter on 48%, so v1's own names stay the most common.
HARD_RENAMES = ["--set", "hsa.transforms.rename_tools.weight=1.0", "--set",
                "hsa.transforms.rename_params.weight=1.0", "--set",
                "hsa.probabilities.rename_element=0.95"]
ARMS = ("hsa", "fixed", "hsa-hi")


def data(work: Path, wanted: set[str], profile: str = "compact",
         seed: int = 0) -> dict[str, Path]:
    s0 = work / "s0" / "variant_000.yaml"
    if "s0" in wanted and not s0.is_file():
        wait([run([HAT, "augment", str(HARNESSES / "v1.yaml"), "-n", "1", "--seed", "777",
                   "--config", str(CONFIGS / "hsa_pretrain_surface.yaml"), "--out",
                   str(work / "s0")], work / "s0.log")])
    floor = ["--set", "validation.min_kind_share=0.0002", "--set",
             "validation.min_skill_share=0.0002"]
    builds = {
        "s0": (s0, "data_cpu_fixed.yaml", ["--set", f"seed={7 + seed}", "--set", "scenarios=9000",
                                           "--set", "catalog_size=900", *floor]),
        "multi": (HARNESSES / "v1.yaml", "data_cpu.yaml",
                  ["--set", f"seed={7 + seed}", "--set", "scenarios=6000", "--set",
                   "variants=1000", "--set", "catalog_size=600"]),
        "hsa": (HARNESSES / "v1.yaml", "data_cpu.yaml",
                ["--set", "scenarios=3000", "--set", "variants=500", *seeded(seed)]),
        "fixed": (HARNESSES / "v1.yaml", "data_cpu_fixed.yaml", seeded(seed)),
        "hsa-hi": (HARNESSES / "v1.yaml", "data_cpu.yaml",
                   ["--set", "scenarios=3000", "--set", "variants=500", *HARD_RENAMES]),
    }
    builds = {name: b for name, b in builds.items() if name in wanted}
    out = {}
    for name, (harness, config, extra) in builds.items():
        out[name] = work / f"data-{name}"
        if not (out[name] / "manifest.json").is_file():
            wait([run([HAT, "data", "build", "--harness", str(harness), "--config",
                       str(CONFIGS / config), "--out", str(out[name]), *extra,
                       "--set", f"render_profile={profile}"],
                      work / f"data-{name}.log")])
    return out


def seeded(seed: int) -> list[str]:
    """`--set seed=N` for a replicate; nothing for seed 0, so earlier runs' commands stand."""
    return ["--set", f"seed={seed}"] if seed else []


def sft(base: Path, dataset: Path, out: Path, steps: int, lr: str, threads: int,
        save: int, profile: str = "compact", seed: int = 0) -> list[str]:
    return [HAT, "train", "sft", "--config", str(CONFIGS / "sft_cpu.yaml"), "--set",
            f"base={base}", "--set", f"dataset={dataset}", "--set", f"output_dir={out}",
            "--set", f"learning_rate={lr}", "--set", "warmup_steps=10", "--set",
            "per_device_train_batch_size=2", "--set", f"num_threads={threads}", "--set",
            f"save_steps={save}", "--set", "save_total_limit=20", "--set",
            f"render_profile={profile}", *seeded(seed), "--max-steps", str(steps)]


def checkpoint(out: Path, step: int) -> Path:
    return out / "checkpoints" / f"checkpoint-{step}"


def train(work: Path, sets: dict[str, Path], bases: list[str], steps: list[int],
          base_steps: int, start: Path = TOY_LONG, arms: tuple[str, ...] = ("hsa", "fixed"),
          longer: int = 0, profile: str = "compact", seed: int = 0) -> dict[str, Path]:
    models = {}
    for name in bases:
        out = work / f"base-{name}"
        if not checkpoint(out, base_steps).is_dir():
            wait([run(sft(start, sets[name], out, base_steps, "2e-3", 2, base_steps, profile,
                          seed),
                      work / f"base-{name}.log")])
        models[f"{name} base"] = checkpoint(out, base_steps)
        procs = []
        for arm in arms:
            arm_out = work / f"{name}-{arm}"
            if not checkpoint(arm_out, max(steps)).is_dir():
                save = min(steps) if all(s % min(steps) == 0 for s in steps) else 1
                procs.append(run(sft(models[f"{name} base"], sets[arm], arm_out, max(steps),
                                     "1e-3", 1, save, profile, seed),
                                 work / f"{name}-{arm}.log"))
            for step in steps:
                models[f"{name} + {arm} {step}"] = checkpoint(arm_out, step)
        wait(procs)
        if longer and "hsa" in arms:  # the HSA arm, continued on `multi`'s 1,000 surfaces
            long_out = work / f"{name}-hsa-long"
            if not checkpoint(long_out, longer).is_dir():
                wait([run(sft(checkpoint(work / f"{name}-hsa", max(steps)), sets["multi"],
                              long_out, longer, "1e-3", 2, longer // 2, profile, seed),
                          work / f"{name}-hsa-long.log")])
            for step in (longer // 2, longer):
                models[f"{name} + hsa-long {step}"] = checkpoint(long_out, step)
    return models


def evaluate(work: Path, models: dict[str, Path], episodes: int,
             profile: str = "compact") -> None:
    jobs = [(tag, model, week) for tag, model in models.items() for week in ("v1", "v2")]
    for i in range(0, len(jobs), 2):
        procs = []
        for tag, model, week in jobs[i:i + 2]:
            out = report(work, tag, week)
            if not out.with_suffix(".cases.jsonl").is_file():
                procs.append(run([HAT, "eval", "run", str(model), "--suites", "t1",
                                  "--episodes", str(episodes), "--render-profile", profile,
                                  "--max-tokens", "160", "--harness",
                                  str(HARNESSES / f"{week}.yaml"), "--out", str(out),
                                  *DECODING["flags"]],
                                 out.with_suffix(".log"), threads=1))
        wait(procs)


def report(work: Path, tag: str, week: str) -> Path:
    name = f"{tag}-{week}".replace(" + ", "-").replace(" ", "-")
    return work / DECODING["dir"] / f"{name}.json"


def exact(rows: list[dict]) -> list[bool]:
    """Exact first call per case, in scenario order (pairs line up by scenario)."""
    return [bool(r["calls"]["first_call_exact"])
            for r in sorted(rows, key=lambda r: r["scenario_id"])]


def renamed_away(old: Path, new: Path) -> set[str]:
    """The tool and parameter names of `old` that `new` no longer has (v1's names v2 renamed)."""
    def names(path: Path) -> set[str]:
        harness = load_harness(path)
        return {t.name for t in harness.tools} | {p for t in harness.tools
                                                  for p in t.param_names}
    return names(old) - names(new)


def first_call(row: dict) -> tuple[str, dict] | None:
    for message in row["transcript"]:
        if message["role"] == "assistant" and message.get("tool_calls"):
            fn = message["tool_calls"][0]["function"]
            try:
                args = json.loads(fn["arguments"])
            except (TypeError, ValueError):
                args = {}
            return fn["name"], args if isinstance(args, dict) else {}
        if message["role"] == "assistant":
            return None
    return None


def misses(rows: list[dict], stale: set[str]) -> dict[str, int]:
    """Why the cases without an exact first call missed: an old name (a tool or parameter
    name the week renamed away, i.e. the previous week remembered), another tool (a wrong
    or blended name), the right tool with wrong arguments, or no call at all."""
    out = {"old name": 0, "other tool": 0, "wrong arguments": 0, "no call": 0}
    for row in rows:
        if row["calls"]["first_call_exact"] or not row["calls"]["needs_call"]:
            continue
        call = first_call(row)
        if call is None:
            out["no call"] += 1
        elif call[0] in stale or stale & set(call[1]):
            out["old name"] += 1
        elif not row["calls"]["first_tool_right"]:
            out["other tool"] += 1
        else:
            out["wrong arguments"] += 1
    return out


def share(hits: list[bool]) -> dict:
    lo, hi = wilson(sum(hits), len(hits))
    return {"rate": sum(hits) / len(hits), "low": lo, "high": hi, "n": len(hits)}


def change(before: list[bool], after: list[bool]) -> dict:
    gained = sum(1 for a, b in zip(before, after, strict=True) if b and not a)
    lost = sum(1 for a, b in zip(before, after, strict=True) if a and not b)
    lo, hi = paired_difference_interval(gained, lost, len(before))
    return {"diff": (gained - lost) / len(before), "low": lo, "high": hi, "gained": gained,
            "lost": lost}


def results(work: Path, models: dict[str, Path], steps: list[int], bases: list[str]) -> dict:
    demo = yaml.safe_load((CONFIGS / "retrain_demo.yaml").read_text())
    gates = gate_config_from_dict(demo["gates"])
    rows = {(tag, week): read_case_rows(report(work, tag, week)) for tag in models
            for week in ("v1", "v2")}
    out = {"models": {}, "hsa_vs_fixed_on_v2": {}}
    stale = renamed_away(HARNESSES / "v1.yaml", HARNESSES / "v2.yaml")
    for tag in models:
        v1, v2 = rows[(tag, "v1")], rows[(tag, "v2")]
        check = next(c for c in evaluate_zero_shot(v2, v1, gates).checks if c.name == "t1")
        out["models"][tag] = {"v1": share(exact(v1)), "v2": share(exact(v2)),
                              "v2_minus_v1": change(exact(v1), exact(v2)),
                              "v2_misses": misses(v2, stale),
                              "zero_shot_t1": check.verdict or ("passed" if check.passed
                                                                 else "failed")}
    for name in bases:
        for arm in [a for a in ARMS if a != "fixed" and (f"{name} + {a} {steps[0]}") in models]:
            for step in steps:
                if f"{name} + fixed {step}" not in models:
                    continue
                hsa, fixed = (exact(rows[(f"{name} + {a} {step}", "v2")]) for a in
                              (arm, "fixed"))
                out["hsa_vs_fixed_on_v2"][f"{name} {arm} {step}"] = change(fixed, hsa)
    return out


def _renames(old: list[dict], new: list[dict]) -> dict[str, str]:
    by_id = {x["id"]: x["name"] for x in new}
    return {x["name"]: by_id[x["id"]] for x in old
            if x["id"] in by_id and by_id[x["id"]] != x["name"]}


def _param_renames(old: dict, new: dict) -> dict[str, str]:
    """Parameters a tool lost and gained, paired in order (`sku` -> `variant`)."""
    out = {}
    by_id = {t["id"]: t for t in new["tools"]}
    for tool in old["tools"]:
        if tool["id"] not in by_id:
            continue
        before = list((tool.get("parameters") or {}).get("properties") or {})
        after = list((by_id[tool["id"]].get("parameters") or {}).get("properties") or {})
        out.update(zip([p for p in before if p not in after],
                       [p for p in after if p not in before], strict=False))
    return out


def _swap_words(text: str, names: dict[str, str]) -> str:
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: names[m.group(1)], text)


def week_parts(old_path: Path, new_path: Path, out: Path) -> dict[str, Path]:
    """The week's single changes as harness files: the old harness with only the new tool
    names, only the new parameter names, only the new skill names, only the new tool and skill
    descriptions, only the new tool order; and the new harness with every rename taken back
    (all its other changes). Names are swapped as whole words everywhere they occur."""
    old_text, new_text = old_path.read_text(), new_path.read_text()
    old, new = yaml.safe_load(old_text), yaml.safe_load(new_text)
    tools, skills = _renames(old["tools"], new["tools"]), _renames(old["skills"], new["skills"])
    params = _param_renames(old, new)
    described = yaml.safe_load(old_text)
    for kind in ("tools", "skills"):
        text_of = {x["id"]: x["description"] for x in new[kind]}
        for item in described[kind]:
            item["description"] = text_of.get(item["id"], item["description"])
    ordered = yaml.safe_load(old_text)
    rank = {t["id"]: i for i, t in enumerate(new["tools"])}
    ordered["tools"].sort(key=lambda t: rank.get(t["id"], len(rank)))
    back = {v: k for k, v in {**tools, **skills, **params}.items()}
    texts = {"tool names": _swap_words(old_text, tools),
             "parameter names": _swap_words(old_text, params),
             "skill names": _swap_words(old_text, skills),
             "descriptions": yaml.safe_dump(described, allow_unicode=True, sort_keys=False),
             "tool order": yaml.safe_dump(ordered, allow_unicode=True, sort_keys=False),
             "all but the renames": _swap_words(new_text, back)}
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for part, text in texts.items():
        paths[part] = out / f"{part.replace(' ', '-')}.yaml"
        paths[part].write_text(text)
        load_harness(paths[part])  # a part that is not a valid harness stops the run here
    return paths


def by_change(work: Path, models: dict[str, Path], episodes: int, profile: str) -> dict:
    """Every model of `models` on each single change of v2 (see `week_parts`), paired
    against its own v1 cases."""
    parts = week_parts(HARNESSES / "v1.yaml", HARNESSES / "v2.yaml", work / "v2-parts")
    jobs = [(tag, model, part, path) for tag, model in models.items()
            for part, path in parts.items()]
    for i in range(0, len(jobs), 2):
        procs = []
        for tag, model, part, path in jobs[i:i + 2]:
            out = report(work, tag, part)
            if not out.with_suffix(".cases.jsonl").is_file():
                procs.append(run([HAT, "eval", "run", str(model), "--suites", "t1",
                                  "--episodes", str(episodes), "--render-profile", profile,
                                  "--max-tokens", "160", "--harness", str(path),
                                  "--out", str(out), *DECODING["flags"]],
                                 out.with_suffix(".log"), threads=1))
        wait(procs)
    res = {}
    for tag in models:
        v1 = exact(read_case_rows(report(work, tag, "v1")))
        res[tag] = {}
        for part in parts:
            rows = exact(read_case_rows(report(work, tag, part)))
            res[tag][part] = {**share(rows), "minus_v1": change(v1, rows)}
    return res


def pct(cell: dict) -> str:
    return f"{100 * cell['rate']:.1f} ({100 * cell['low']:.0f}-{100 * cell['high']:.0f})"


def signed(cell: dict) -> str:
    return (f"{100 * cell['diff']:+.1f} ({100 * cell['low']:+.1f}, {100 * cell['high']:+.1f}); "
            f"{cell['gained']} gained, {cell['lost']} lost")


def change_table(res: dict) -> str:
    parts = list(next(iter(res.values())))
    lines = ["| model | " + " | ".join(parts) + " |", "|---|" + "---|" * len(parts)]
    for tag, cells in res.items():
        lines.append(f"| {tag} | " + " | ".join(f"{100 * c['rate']:.1f}, {signed(c['minus_v1'])}"
                                               for c in cells.values()) + " |")
    return "\n".join(lines)


def table(res: dict) -> str:
    lines = ["| model | v1 exact first call | v2 exact first call | v2 - v1, paired | "
             "zero-shot (T1) | v2 misses: old name / other tool / wrong args / no call |",
             "|---|---|---|---|---|---|"]
    for tag, m in res["models"].items():
        why = " / ".join(str(n) for n in m["v2_misses"].values())
        lines.append(f"| {tag} | {pct(m['v1'])} | {pct(m['v2'])} | {signed(m['v2_minus_v1'])} "
                     f"| {m['zero_shot_t1']} | {why} |")
    lines += ["", "| base, arm, steps | HSA arm - fixed on v2, paired |", "|---|---|"]
    lines += [f"| {k} | {signed(v)} |" for k, v in res["hsa_vs_fixed_on_v2"].items()]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--steps", default="150,600")
    ap.add_argument("--base-steps", type=int, default=600)
    ap.add_argument("--episodes", type=int, default=45)
    ap.add_argument("--bases", default="s0,multi")
    ap.add_argument("--arms", default="hsa,fixed",
                    help=f"story arms trained from each base, of {', '.join(ARMS)}; hsa-hi "
                         "is HSA with every tool and parameter renamed on almost every surface")
    ap.add_argument("--longer", type=int, default=0,
                    help="continue the HSA arm for this many more steps on the `multi` "
                         "data (HSA, 1,000 surfaces; checkpoints half-way and at the end)")
    ap.add_argument("--start", type=Path, default=TOY_LONG,
                    help="the model each candidate base continues (default: the shipped "
                         "toy-long); e.g. a `hat base build --size toy-parts` output")
    ap.add_argument("--by-change", action="store_true",
                    help="also play the last step's models on each single change of v2")
    ap.add_argument("--constrain-tools", action="store_true",
                    help="evaluate with tool-call names and argument keys held to the offered "
                         "tools (constrained decoding); reports go to WORK/eval-constrained, "
                         "so a second run on the same WORK trains nothing and pairs with the "
                         "first")
    ap.add_argument("--seed", type=int, default=0,
                    help="a replicate: data seeds (multi 7+N, the arms N) and training seed N; "
                         "0 runs the commands of the first runs unchanged")
    ap.add_argument("--render-profile", default="compact", choices=PROFILES,
                    help="how every build, training run and evaluation shows the harness; "
                         "compact-args adds each parameter's short description")
    args = ap.parse_args()
    steps = sorted(int(s) for s in args.steps.split(","))
    bases = args.bases.split(",")
    args.work.mkdir(parents=True, exist_ok=True)
    if args.constrain_tools:
        DECODING.update(dir="eval-constrained", flags=["--constrain-tools"])
    (args.work / DECODING["dir"]).mkdir(exist_ok=True)
    arms = tuple(args.arms.split(","))
    if unknown := set(arms) - set(ARMS):
        sys.exit(f"--arms: unknown {', '.join(sorted(unknown))}; valid: {', '.join(ARMS)}")
    wanted = {*bases, *arms} | ({"multi"} if args.longer else set())
    profile = args.render_profile
    models = train(args.work, data(args.work, wanted, profile, args.seed), bases, steps,
                   args.base_steps, args.start, arms, args.longer, profile, args.seed)
    evaluate(args.work, models, args.episodes, profile)
    res = results(args.work, models, steps, bases)
    if args.by_change:
        last = {t: m for t, m in models.items() if t.endswith(f" {max(steps)}")}
        res["v2_by_change"] = by_change(args.work, last, args.episodes, profile)
    res["decoding"] = "constrained" if args.constrain_tools else "free"
    name = "results-constrained.json" if args.constrain_tools else "results.json"
    (args.work / name).write_text(json.dumps(res, indent=2) + "\n")
    print(table(res))
    if args.by_change:
        print(change_table(res["v2_by_change"]))


if __name__ == "__main__":
    main()
