"""The arm of a user: a salted hash of the user id against the experiment's split.

    experiment = Experiment(id=1, name="wk49", salt="9f2c", treatment_share=0.2)
    experiment.arm("u123")        # "control" or "treatment", the same on every call

Sticky by construction: the arm depends on (salt, user id, share) only, so every gateway
process, restart or replica agrees without shared state. A new salt reshuffles the users.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from hat_core.errors import ConfigError, Problem

CONTROL, TREATMENT = "control", "treatment"
ARMS = (CONTROL, TREATMENT)
_BUCKET_BITS = 60


def bucket(salt: str, user_id: str) -> float:
    """A uniform number in [0, 1) fixed by the salt and the user id (sha256)."""
    digest = hashlib.sha256(f"{salt}\x00{user_id}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") >> (64 - _BUCKET_BITS)) / 2**_BUCKET_BITS


@dataclass(frozen=True)
class Experiment:
    """An A/B experiment of a slot: control serves the champion, treatment the challenger."""

    id: int
    name: str
    salt: str
    treatment_share: float
    slot: str = "ab"

    def __post_init__(self) -> None:
        if not 0 < self.treatment_share < 1:
            raise ConfigError(f"bad split of experiment {self.name!r}",
                              [Problem("treatment_share",
                                       f"{self.treatment_share}: strictly between 0 and 1")])

    @property
    def control_share(self) -> float:
        """The expected share of users in control (what the SRM check expects)."""
        return 1.0 - self.treatment_share

    def arm(self, user_id: str) -> str:
        """`treatment` for the users whose bucket falls below the treatment share."""
        return TREATMENT if bucket(self.salt, user_id) < self.treatment_share else CONTROL
