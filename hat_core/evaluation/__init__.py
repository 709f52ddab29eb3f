"""Offline evaluation: named suites, IFEval scoring, BFCL-format tool-call matching, latency.

Files:
  errors.py          `EvalInputError`: an input file or row that cannot be used
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
"""
