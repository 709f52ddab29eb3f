"""Release rules: which checkpoint may take which slot, and who may put it there.

Modules: `gates` (blessing gates: may a retrained checkpoint become the challenger?),
`evidence` (one gate's paired comparison on the same cases and its verdict), `verdict`
(passed / failed / inconclusive), `rules` (promotion and rollback rules by role and gate
state), `registry` (the MLflow aliases of the A/B slot). The state change itself is
`db.promotion`.
"""
