"""What the console's pages show and do, one module per subject; the pages in `ui/pages/` stay thin.

Modules: `harness` (version table rows, validation, submit, diffs), `runs` (stage rows, metric
curves, eval report, latency rows, checkpoint comparison), `mlflow_curves` (a job's metric histories
from MLflow, on demand), `mlflow_links` (links into the MLflow UI), `retrain` (starting a retrain
through a Prefect deployment), `review` (the bad-case queue and the reviewer's verdict), `episode`
(a trajectory as blocks and its drawing), `ab` (A/B upload analysis, lift table, interval chart),
`pairwise` (blind pairwise reviews), `judge` (judge calibrations and the gate), `charts` (altair
charts), `paging` (keyset paging of the tables), `markdown` (user-written text escaped for
markdown)."""
