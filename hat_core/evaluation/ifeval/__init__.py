"""IFEval: prompts, responses and verdicts, the official checker, the project's own set.

Modules: `verdicts` (prompts, responses, per-prompt verdicts and accuracies), `checker` (the
official checker, lm-eval's port, run offline), `project_set` (the seeded generator of the
project's small IFEval-format set).
"""
