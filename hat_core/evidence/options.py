"""The valid option values of the A/B analysis, importable without scipy or statsmodels."""

BOOTSTRAP_METHODS = ("percentile", "BCa")
CORRECTIONS = ("holm", "fdr_bh", "none")
