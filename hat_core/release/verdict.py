"""A gate's verdict: `passed`, `failed` or `inconclusive` (too little evidence either way).

Only `passed` lets a candidate become the challenger or be promoted without an override;
`hat_core.release.evidence` decides a paired gate's verdict, `hat_core.release.gates`
combines them (any failed: failed; else any inconclusive: inconclusive; else passed), and
`hat_core.release.rules` reads them back from the stored gate results. Kept apart so the
release rules import no evaluation code.
"""

PASSED, FAILED, INCONCLUSIVE = "passed", "failed", "inconclusive"
VERDICTS = (PASSED, FAILED, INCONCLUSIVE)
