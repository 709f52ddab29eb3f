"""The MLflow model registry's aliases: champion, challenger, previous-champion.

    registry = ModelRegistry("http://mlflow:5000")
    registry.check()                          # RegistryUnavailable in ~2 s if it does not answer
    registry.move_champion("hat-agent", "3", previous="2")
    registry.aliases("hat-agent")             # {"champion": "3", "previous-champion": "2"}

mlflow is imported on first use only: the console imports this module on every page render
and loads mlflow (seconds) only when someone promotes or asks for the aliases.
"""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from hat_core.errors import HatError, NotFoundError, Problem
from hat_core.release.rules import CHALLENGER, CHAMPION, PREVIOUS

HEALTH_TIMEOUT_S = 2.0
# how the version's release gates decoded tool calls: `free` or `constrained-tools` (held to
# the offered tools, `eval.constrain_tools`); the gateway serves the version the same way
DECODING_TAG = "hat.decoding"


class RegistryUnavailable(HatError):
    """The MLflow registry did not answer or refused an alias change; nothing was changed."""


def model_folder(root: Path) -> Path:
    """The loadable folder inside a downloaded version: `root` itself when it has
    `config.json`, else an MLflow transformers model's `model/` with its
    `components/tokenizer/` files copied in, else the one sub-folder with `config.json`."""
    if (root / "config.json").is_file():
        return root
    weights, tokenizer = root / "model", root / "components" / "tokenizer"
    if (weights / "config.json").is_file():
        for item in tokenizer.glob("*") if tokenizer.is_dir() else ():
            if not (weights / item.name).exists():
                shutil.copy2(item, weights / item.name)
        return weights
    found = sorted(p.parent for p in root.glob("*/config.json"))
    if len(found) != 1:
        raise NotFoundError(f"no model folder (config.json) in {root}")
    return found[0]


class ModelRegistry:
    """Aliases of registered models in one MLflow tracking/registry store."""

    tracking_uri: str

    def __init__(self, tracking_uri: str):
        self.tracking_uri = tracking_uri

    @property
    def client(self) -> Any:
        if getattr(self, "_client", None) is None:
            from mlflow.tracking import MlflowClient

            self._client = MlflowClient(tracking_uri=self.tracking_uri,
                                        registry_uri=self.tracking_uri)
        return self._client

    @client.setter
    def client(self, value: Any) -> None:
        self._client = value

    def check(self) -> None:
        """`RegistryUnavailable` unless an `http(s)://` server answers `/health` in 2 s (MLflow's
        own client retries for minutes); local stores are always there."""
        if not self.tracking_uri.startswith(("http://", "https://")):
            return
        url = self.tracking_uri.rstrip("/") + "/health"
        try:
            with urllib.request.urlopen(url, timeout=HEALTH_TIMEOUT_S) as answer:
                if answer.status == 200:
                    return
                problem = f"HTTP {answer.status}"
        except (urllib.error.URLError, OSError) as exc:
            problem = str(getattr(exc, "reason", exc))
        raise RegistryUnavailable(
            f"MLflow at {self.tracking_uri} is not reachable ({problem}); nothing was changed",
            [Problem("HAT_MLFLOW_TRACKING_URI", "start the MLflow server or fix the URI, "
                                                "then try again")])

    def set_alias(self, registry_name: str, alias: str, version: str) -> None:
        """Point `alias` at `version`; `RegistryUnavailable` when MLflow refuses."""
        from mlflow.exceptions import MlflowException

        try:
            self.client.set_registered_model_alias(registry_name, alias, str(version))
        except MlflowException as exc:
            raise RegistryUnavailable(
                f"MLflow could not point alias {alias!r} of {registry_name} at version "
                f"{version}: {exc.message}") from exc

    def delete_alias(self, registry_name: str, alias: str) -> None:
        if self.alias_version(registry_name, alias) is not None:
            self.client.delete_registered_model_alias(registry_name, alias)

    def alias_version(self, registry_name: str, alias: str) -> str | None:
        """The version an alias points at, or None (no such model or alias)."""
        from mlflow.exceptions import MlflowException

        try:
            return str(self.client.get_model_version_by_alias(registry_name, alias).version)
        except MlflowException:
            return None

    def aliases(self, registry_name: str) -> dict[str, str]:
        """alias -> version of a registered model ({} when it does not exist)."""
        from mlflow.exceptions import MlflowException

        try:
            return {k: str(v) for k, v in
                    self.client.get_registered_model(registry_name).aliases.items()}
        except MlflowException:
            return {}

    def decoding(self, registry_name: str, version: str) -> str:
        """How `version` was evaluated for its release gates (tag `hat.decoding`): `free` or
        `constrained-tools`; `free` for versions registered without the tag."""
        from mlflow.exceptions import MlflowException

        try:
            mv = self.client.get_model_version(registry_name, str(version))
        except MlflowException:
            return "free"
        return mv.tags.get(DECODING_TAG) or "free"

    def download(self, registry_name: str, version: str, dst: Path) -> Path:
        """A local model directory of a registered version under `dst` (downloaded once):
        the folder with `config.json`, whether the version is a bare checkpoint folder or
        an MLflow transformers model (its tokenizer copied beside the weights)."""
        from mlflow.artifacts import download_artifacts

        dst = Path(dst)
        if not dst.is_dir() or not any(dst.iterdir()):
            uri = self.client.get_model_version_download_uri(registry_name, str(version))
            dst.mkdir(parents=True, exist_ok=True)
            download_artifacts(artifact_uri=uri, dst_path=str(dst),
                               tracking_uri=self.tracking_uri)
        inside = [p for p in dst.iterdir() if p.is_dir()]
        top = (dst / "config.json").is_file() or (dst / "MLmodel").is_file()
        return model_folder(inside[0] if len(inside) == 1 and not top else dst)

    def ensure_model(self, registry_name: str) -> None:
        """Create the registered model unless it exists (safe against a concurrent create)."""
        from mlflow.exceptions import MlflowException

        try:
            self.client.get_registered_model(registry_name)
        except MlflowException:
            try:
                self.client.create_registered_model(registry_name)
            except MlflowException:  # created concurrently
                self.client.get_registered_model(registry_name)

    def move_champion(self, registry_name: str, champion: str, previous: str | None) -> None:
        """`champion` -> `champion`, `previous-champion` -> `previous`, and the `challenger`
        alias removed when it pointed at the new champion. Safe to repeat."""
        self.set_alias(registry_name, CHAMPION, champion)
        if previous is not None and previous != champion:
            self.set_alias(registry_name, PREVIOUS, previous)
        if self.alias_version(registry_name, CHALLENGER) == str(champion):
            self.delete_alias(registry_name, CHALLENGER)
