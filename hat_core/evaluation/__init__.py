"""Offline evaluation: named suites, IFEval scoring, BFCL-format tool-call matching, latency.

Files:
  errors.py          `EvalInputError` (an unusable input), `JudgeGateError` (a refused judge)
  judging.py         the judge of the simulator cases (rule or llm) and the judge gate
  jsonl.py           reading and writing JSONL with file:line errors
  ifeval_checker.py  the official IFEval checker (lm-eval's port), imported and run offline
  ifeval.py          IFEval prompts, responses, per-prompt verdicts and accuracies
  ifeval_set.py      the project's own small IFEval-format set (seeded generator)
  tool_calls.py      BFCL-format cases, candidates and per-case verdicts
  tool_values.py     BFCL-style value and type matching for one argument
  percentile.py      nearest-rank percentiles and latency summaries
  gates.py           latency gate profiles and their evaluation
  server.py          a `transformers serve` process on loopback
  latency.py         streaming replay of harness requests at several concurrency levels
  inference.py       the `InferenceBackend` protocol, `AssistantOutput`, Qwen3 output parsing
  backends.py        `TransformersBackend` (local) and `OpenAIBackend` (any endpoint)
  registry.py        the `Suite` protocol, `SuiteResult` and the `SUITES` registry
  report.py          evaluation reports as JSON and as a markdown summary
  policy.py          `BackendPolicy`: any inference backend as a simulator policy
  cases.py           the held-out evaluation world and playing cases under harness surfaces
  suite_qa.py        `t1` (live harness) and `t2` (held-out HSA variants) Live-Stream QA
  suite_robustness.py  `tool_robustness` and `prompt_robustness` families
  suite_cot.py       `cot_length`: reasoning tokens of tool-call and reply turns
  suite_tool_calls.py  `tool_calls`: BFCL-format accuracy through the call matcher
  badcases.py        failed cases with failure types, and sinks (list, JSONL, tee)
  edit_check.py      bad-case rate before/after retraining on a harness edit
  evaluate.py        run a list of suites on one model into an `EvalReport`
  tracking.py        logging an evaluation report to MLflow
"""
