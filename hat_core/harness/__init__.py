"""The harness h = (S, T, P, K) and its documents.

Modules: `model` (the typed harness: skills, tools, prompt template, hooks), `check` (semantic
checks of a raw document), `io` (loading, validating and dumping YAML or JSON under size,
depth and alias limits), `render` (the system prompt and tool list a model sees).
"""
