"""Talking to a model: the backend protocol, local and remote backends, a local server.

Modules: `protocol` (`InferenceBackend`, `AssistantOutput`, Qwen3 output parsing),
`backends` (`TransformersBackend` in-process, `OpenAIBackend` for any OpenAI-compatible
endpoint), `server` (a `transformers serve` process on loopback).
"""
