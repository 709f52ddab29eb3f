"""Evidence for release decisions: online A/B statistics, pairwise reviews, judge calibration.

Modules (see docs/evidence.md for the methods, formulas and references):
- `ab_data`: validated per-(user, day) A/B data; every problem named by column and line;
- `loader`: reading/writing CSV and Parquet (the I/O edge);
- `lift`: relative lift with Welch + delta-method and bootstrap intervals;
- `cuped`: variance reduction with a pre-period covariate;
- `srm`: the sample-ratio-mismatch check;
- `multiplicity`: Holm / Benjamini-Hochberg adjusted p-values;
- `stability`: per-day lifts and Cochran's Q across days;
- `ab`: `analyze(data, config) -> AbReport`, the whole A/B analysis;
- `ab_render`: markdown and rich tables of an `AbReport`;
- `simulate`: seeded A/B data with a known true lift;
- `pairwise`: win rate, Wilson interval and sign test; blinding and unblinding;
- `review_items`: the JSONL items (scenario, prompt, two responses) of a pairwise review;
- `review_from_runs`: review items from two evaluation runs' case rows (the shared cases);
- `run_cases`: a run's per-case rows read from MLflow (the I/O edge);
- `calibration`: per-label judge agreement and the judge gate.

Run `hat ab analyze examples/ab/sample.csv --expected-split 0.8`.
"""
