"""The semantic diff of two harness versions.

Modules: `api` (`diff_harnesses` and the summary), `match` (pairing the elements of two
harnesses: by id, then by schema and description), `param_match` (pairing two tools'
parameters by name, checked hints and combined evidence; the simulator's binding uses it
too), `schema` (parameter changes), `prompt`
(prompt template changes), `hooks` (hook changes), `result` (`Change`, `HarnessDiff`).
"""
