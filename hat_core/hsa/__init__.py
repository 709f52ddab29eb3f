"""Harness-State Augmentation (HSA): many surface forms of one harness, same semantics.

    import random
    from hat_core.hsa import HsaConfig, augment, Remapper, semantic_fingerprint, map_back
    variant = augment(harness, random.Random(0), HsaConfig())
    rows = Remapper(variant, harness).messages(trajectory)

Modules: `config` (HsaConfig, YAML), `vocab` (train / held-out pools), `names` (name
generation), `mentions` (names inside text), `variant` (Variant, RenameMap), `rename`,
`reorder`, `describe` (paraphrasers), `prompt_template`, `hooks`, `distractors` (the
transforms), `augment` (the pipeline), `remap` (trajectories), `fingerprint` (semantics hash,
map back), `heldout` (which pool a variant used), `edit_aware` (weights from a diff).
See docs/hsa.md.
"""

from hat_core.hsa.augment import augment, augment_many, variant_seed
from hat_core.hsa.config import TRANSFORMS, HsaConfig, TransformConfig, load_config
from hat_core.hsa.describe import OpenAIParaphraser, Paraphraser, TemplateParaphraser
from hat_core.hsa.edit_aware import edit_aware_config, transform_votes
from hat_core.hsa.fingerprint import map_back, semantic_fingerprint
from hat_core.hsa.heldout import uses_heldout, uses_train
from hat_core.hsa.remap import Remapper, remap_arguments
from hat_core.hsa.rename import apply_renames
from hat_core.hsa.variant import RenameMap, Variant

__all__ = [
    "TRANSFORMS", "HsaConfig", "OpenAIParaphraser", "Paraphraser", "Remapper", "RenameMap",
    "TemplateParaphraser", "TransformConfig", "Variant", "apply_renames", "augment",
    "augment_many", "edit_aware_config", "load_config", "map_back", "remap_arguments",
    "semantic_fingerprint", "transform_votes", "uses_heldout", "uses_train", "variant_seed",
]
