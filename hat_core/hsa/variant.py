"""What HSA produces: a `Variant` (the augmented harness) and its `RenameMap`.

The rename map records every surface rename by semantic id, so a variant can be mapped back
onto the original and trajectories can be re-mapped onto the variant:

    tools:  {tool_id: (old_name, new_name)}
    skills: {skill_id: (old_name, new_name)}
    params: {tool_id: {old_param: new_param}}
    terms:  {old_token: new_token}  how mentions in free text were rewritten

`to_dict()` / `from_dict()` round-trip through JSON (`variant_000.rename.json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hat_core.errors import ConfigError
from hat_core.harness.model import Harness

DISTRACTOR_PREFIX = "distractor."


@dataclass(frozen=True)
class RenameMap:
    """Surface renames by semantic id; empty means nothing was renamed."""

    tools: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    skills: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    params: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    terms: Mapping[str, str] = field(default_factory=dict)

    def inverse(self) -> RenameMap:
        """The map that undoes this one (new names back to old)."""
        return RenameMap(
            tools={i: (new, old) for i, (old, new) in self.tools.items()},
            skills={i: (new, old) for i, (old, new) in self.skills.items()},
            params={i: {new: old for old, new in m.items()} for i, m in self.params.items()},
            terms={new: old for old, new in self.terms.items()},
        )

    def is_bijection(self) -> bool:
        """Whether every part maps distinct old names to distinct new names."""
        parts = [dict(self.tools.values()), dict(self.skills.values()), dict(self.terms)]
        parts += [dict(m) for m in self.params.values()]
        pairs_ok = (len(dict(self.tools.values())) == len(self.tools)
                    and len(dict(self.skills.values())) == len(self.skills))
        return pairs_ok and all(len(set(p.values())) == len(p) for p in parts)

    @property
    def is_empty(self) -> bool:
        return not (self.tools or self.skills or any(self.params.values()) or self.terms)

    def binding_map(self, canonical: Mapping[str, Mapping[str, str]] | None = None
                    ) -> dict[str, dict[str, str]]:
        """`{tool_id: {variant_param: canonical_param}}` for `hat_core.sim.binding.bind`.

        `canonical` maps the original harness's parameters to the simulator's canonical ones
        per tool (`{tool_id: {old_param: canonical}}`); without it old names are canonical.
        A parameter of a tool in `canonical` that has no canonical counterpart there (a
        parameter the simulator does not bind, a tool it does not implement) gives no hint.
        """
        out: dict[str, dict[str, str]] = {}
        for tool_id, renames in self.params.items():
            if canonical is not None and tool_id in canonical:
                to_canon = canonical[tool_id]
                out[tool_id] = {new: to_canon[old] for old, new in renames.items()
                                if old in to_canon}
            else:
                out[tool_id] = {new: old for old, new in renames.items()}
        return {k: v for k, v in out.items() if v}

    def to_dict(self) -> dict:
        """JSON-ready: `{tools: {id: [old, new]}, skills: ..., params: ..., terms: ...}`."""
        return {
            "tools": {i: list(p) for i, p in self.tools.items()},
            "skills": {i: list(p) for i, p in self.skills.items()},
            "params": {i: dict(m) for i, m in self.params.items()},
            "terms": dict(self.terms),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> RenameMap:
        """Rebuild from `to_dict()` output (ConfigError on a malformed document)."""
        unknown = set(data) - {"tools", "skills", "params", "terms"}
        if unknown:
            raise ConfigError(f"rename map: unknown keys {sorted(unknown)}; "
                              "valid: tools, skills, params, terms")
        try:
            return cls(
                tools={str(i): (str(p[0]), str(p[1])) for i, p in data.get("tools", {}).items()},
                skills={str(i): (str(p[0]), str(p[1]))
                        for i, p in data.get("skills", {}).items()},
                params={str(i): {str(k): str(v) for k, v in m.items()}
                        for i, m in data.get("params", {}).items()},
                terms={str(k): str(v) for k, v in data.get("terms", {}).items()},
            )
        except (AttributeError, IndexError, TypeError) as exc:
            raise ConfigError(f"rename map: malformed document ({exc})") from exc


@dataclass(frozen=True)
class Variant:
    """One augmented harness: what changed (`transforms`), how to map names back, and how to
    reproduce it (`augment(original, random.Random(seed), config)` with the same config)."""

    harness: Harness
    rename_map: RenameMap
    transforms: tuple[str, ...]
    seed: int | None = None
    pool: str = "train"
    distractors: tuple[str, ...] = ()  # ids of the added distractor tools

    def to_dict(self) -> dict:
        """The metadata written next to the variant's harness file."""
        return {"seed": self.seed, "pool": self.pool, "transforms": list(self.transforms),
                "distractors": list(self.distractors), **self.rename_map.to_dict()}
