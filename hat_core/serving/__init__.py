"""Serving the A/B slot: sticky assignment, arms and their backends, the gateway, exposures.

Modules: `assignment` (the arm of a user: a salted hash and the split), `exposure` (the
record of one request and the batched writer that stores them), `arms` (what each arm serves
now, and backends: in-process transformers or any OpenAI-compatible URL), `switch` (follow
the slot's promotions and swap the arms without a restart), `gateway` (the OpenAI-compatible
HTTP app), `runner` (uvicorn in a thread); production on GPU hosts: `model_sync` (download
each arm's slot version to the serving volume and point the arm at it) and `arm_server`
(one arm's vLLM, moved blue-green to the version its pointer names).
"""
