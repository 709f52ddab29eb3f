"""The one settings object: deployment endpoints and paths, read from `HAT_*` variables.

Entry points (the CLI, flows, the console) call `load_settings()` once and pass values on;
library code never reads the environment. Stage hyper-parameters live in YAML configs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Where HAT Ops keeps its state. Defaults are the embedded, zero-setup stores."""

    model_config = SettingsConfigDict(env_prefix="HAT_", env_file=None, extra="ignore")

    home: Path = Field(default=Path(".hat"), description="root of the embedded stores")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default a SQLite file under home"
    )
    mlflow_tracking_uri: str | None = Field(
        default=None, description="MLflow tracking URI; default a SQLite store under home"
    )
    mlflow_ui_url: str | None = Field(
        default=None,
        description="MLflow UI address a browser can open (console links); default the "
                    "tracking URI when it is http(s)",
    )
    prefect_api_url: str | None = Field(
        default=None, description="Prefect API; default a local/ephemeral API"
    )
    cache_dir: Path | None = Field(
        default=None, description="cache of built base models; default `cache/` under home"
    )
    base_model: Path | None = Field(
        default=None, description="base model directory; default the embedded tiny model"
    )
    teacher_endpoint: str | None = Field(
        default=None, description="OpenAI-compatible endpoint of an LLM teacher or judge"
    )

    sso_metadata_url: str | None = Field(
        default=None, description="console SSO: the OIDC provider's discovery document "
                                  "(`.../.well-known/openid-configuration`); SSO is on when set"
    )
    sso_client_id: str | None = Field(default=None, description="console SSO: OIDC client id")
    sso_client_secret: SecretStr | None = Field(
        default=None, description="console SSO: OIDC client secret"
    )
    sso_redirect_uri: str | None = Field(
        default=None, description="console SSO: the console's public URL + `/oauth2callback`, "
                                  "registered at the provider"
    )
    sso_cookie_secret: SecretStr | None = Field(
        default=None, description="console SSO: signs the identity cookie (32+ characters)"
    )
    sso_claim: str = Field(
        default="email", description="console SSO: the ID-token claim that names the user "
                                     "(`email` or `sub`), matched to `hat user set-sso`"
    )
    sso_only: bool = Field(
        default=False, description="console SSO: hide and refuse the console's password form"
    )

    judge_min_kappa: float = Field(
        default=0.6, description="judge gate: the least Cohen's kappa against human labels"
    )
    judge_min_items: int = Field(
        default=100, description="judge gate: the fewest labelled items it is judged on"
    )

    def resolved_database_url(self) -> str:
        """The configured database URL, or the embedded SQLite file under `home`."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.home / 'hat.db').resolve()}"

    def resolved_cache_dir(self) -> Path:
        """The configured cache root, or `cache/` under `home` (base models in its
        `base-models/`), so that removing the home resets everything a run wrote."""
        return self.cache_dir or self.home / "cache"

    def resolved_mlflow_uri(self) -> str:
        """The configured MLflow URI, or a local SQLite store under `home`."""
        if self.mlflow_tracking_uri:
            return self.mlflow_tracking_uri
        return f"sqlite:///{(self.home / 'mlflow.db').resolve()}"


def load_settings() -> Settings:
    """Read the settings from the environment (called by entry points only)."""
    return Settings()
