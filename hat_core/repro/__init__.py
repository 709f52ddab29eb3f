"""Reproducing the report's table: every arm trained and evaluated per seed, then one table.

Modules: `config` (`ReproConfig` and its YAML), `run` (one seed: data, the arms' training,
evaluation, MLflow), `report` (results.json, table.md, merging seeds run separately).
Nothing else in hat_core imports this package: it sits on top of training and evaluation.
"""
