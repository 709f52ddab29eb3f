"""Offline evaluation: named suites on the simulator, IFEval, BFCL-format tool calls.

Files:
  errors.py          `EvalInputError` (an unusable input), `JudgeGateError` (a refused judge)
  judging.py         the judge of the simulator cases (rule or llm) and the judge gate
  jsonl.py           reading and writing JSONL with file:line errors
  ifeval/            IFEval prompts and verdicts, the official checker, the project's own set
  bfcl/              BFCL-format tool-call cases, candidates, verdicts and value matching
  suites/            the `Suite` protocol, the `SUITES` registry and the named suites
  report.py          evaluation reports as JSON and as a markdown summary
  policy.py          `BackendPolicy`: any inference backend as a simulator policy
  cases.py           the held-out evaluation world and playing cases under harness surfaces
  badcases.py        failed cases with failure types, and sinks (list, JSONL, tee)
  edit_check.py      bad-case rate before/after retraining on a harness edit
  evaluate.py        run a list of suites on one model into an `EvalReport`
  tracking.py        logging an evaluation report to MLflow

Inference backends live in `hat_core.inference`, latency in `hat_core.latency`, the report's
table in `hat_core.repro`.
"""
