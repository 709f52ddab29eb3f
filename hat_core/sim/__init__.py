"""The live-stream simulator: catalog, scenarios, tools, hooks, episodes, rewards and judge.

Run `hat sim run --harness examples/harnesses/v1.yaml --episodes 100 --seed 0`; see
docs/simulator.md. Modules: `catalog` (the shop), `scenarios` (viewer questions with ground
truth), `tools` (implementations by tool id), `binding` (a harness's names onto tool ids and
canonical parameters), `hooks` (lifecycle checks), `episode` (trajectory types and analysis),
`policy` (the policy interface, the oracle and baselines), `replies` (the oracle's
templates), `runner` (one episode), `scoring` (rewards' arithmetic), `rewards` (TRL reward
functions and the registry), `judge` (verdicts, LLM judge, calibration), `batch` (many
episodes and their summary).
"""
