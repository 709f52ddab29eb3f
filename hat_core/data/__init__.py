"""Training data: teacher rollouts on original + HSA harnesses, rejection sampling, the
hook-retry policy, real-log import, splits without leakage, Great Expectations validation, and
versioned dataset directories of TRL rows. See docs/data.md.

    from hat_core.data.build import build
    from hat_core.data.config import load_data_config
    result = build(harness, load_data_config("examples/configs/data_tiny.yaml"), Path("runs/d"))

Modules: `config` (DataConfig), `teacher` (oracle / transformers / OpenAI-compatible),
`trajectory` (the one conversation type), `rollout`, `rejection`, `retry_policy`, `trl_rows`,
`logs_import`, `splits`, `validate` (the GX suite), `manifest`, `opd_prompts`, `build`.
"""
