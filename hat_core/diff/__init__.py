"""The semantic diff of two harness versions.

Modules: `api` (`diff_harnesses` and the summary), `match` (pairing the elements of two
harnesses: by id, then by schema and description), `schema` (parameter changes), `prompt`
(prompt template changes), `hooks` (hook changes), `result` (`Change`, `HarnessDiff`).
"""
