"""The named evaluation suites.

Modules: `base` (the `Suite` protocol, `SuiteResult`), `registry` (`SUITES`, `get_suite`),
`ifeval`, `qa` (`t1`, `t2`), `robustness` (`tool_robustness`, `prompt_robustness`), `cot`
(`cot_length`), `tool_calls` (BFCL-format accuracy).
"""
