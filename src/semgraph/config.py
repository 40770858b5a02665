"""One settings object for the whole process.

Every field can be set from the environment with the ``SEMGRAPH_`` prefix (for example
``SEMGRAPH_BOLT_URI``). Defaults point at the local service stack (``semgraph services up``).
Nothing here is read at import time: call :func:`load_settings` and pass the object down;
child processes rebuild an identical object from the same environment.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from semgraph.errors import ConfigError

_REPO_ROOT = Path(__file__).resolve().parents[2]


def _default_state_dir() -> Path:
    # /var/tmp is world-traversable, so the unprivileged Elasticsearch user can reach its
    # files even when the invoking user is root (whose home is not traversable).
    return Path("/var/tmp") / f"semgraph-{os.getuid()}"


class Settings(BaseSettings):
    """semgraph configuration (env prefix ``SEMGRAPH_``)."""

    model_config = SettingsConfigDict(env_prefix="SEMGRAPH_", extra="ignore")

    # -- graph server (Bolt) -------------------------------------------------------------
    bolt_uri: str = "bolt://127.0.0.1:7687"
    bolt_user: str = ""
    bolt_password: str = ""
    bolt_database: str | None = None
    bolt_connect_timeout_s: float = Field(default=5.0, gt=0, le=300)

    # -- Elasticsearch ----------------------------------------------------------------------
    es_url: str = "http://127.0.0.1:9200"
    es_request_timeout_s: float = Field(default=30.0, gt=0, le=3600)

    # -- local service stack ----------------------------------------------------------------
    state_dir: Path = Field(default_factory=_default_state_dir)
    ops_dir: Path = _REPO_ROOT / "ops"
    es_version: str = "8.19.21"
    es_heap_mb: int = Field(default=512, ge=128, le=1024)
    es_user: str = "semgraph"
    neo4j_heap_mb: int = Field(default=1024, ge=128, le=8192)
    java_home: Path | None = None
    services_start_timeout_s: float = Field(default=180.0, gt=0, le=3600)

    # -- alerts -----------------------------------------------------------------------------
    alert_webhook_url: str | None = None
    alert_webhook_style: str = Field(default="generic", pattern="^(generic|slack)$")
    alert_webhook_attempts: int = Field(default=3, ge=1, le=10)
    alert_webhook_timeout_s: float = Field(default=5.0, gt=0, le=60)

    # -- logging ------------------------------------------------------------------------------
    log_level: str = "INFO"
    log_json: bool = False

    @field_validator("bolt_uri")
    @classmethod
    def _check_bolt_uri(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}:
            raise ValueError(f"bolt_uri must be a bolt:// or neo4j:// URI, got {value[:200]!r}")
        if not parts.hostname:
            raise ValueError(f"bolt_uri has no host: {value[:200]!r}")
        if len(parts.hostname) > 253:
            raise ValueError("bolt_uri host name is longer than 253 characters")
        return value

    @field_validator("es_url")
    @classmethod
    def _check_es_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"es_url must be an http(s) URL with a host, got {value[:200]!r}")
        if len(parts.hostname) > 253:
            raise ValueError("es_url host name is longer than 253 characters")
        return value.rstrip("/")

    @field_validator("log_level")
    @classmethod
    def _check_level(cls, value: str) -> str:
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError(f"log_level must be a logging level name, got {value!r}")
        return level

    @property
    def bolt_port(self) -> int:
        return urlsplit(self.bolt_uri).port or 7687

    @property
    def bolt_host(self) -> str:
        return urlsplit(self.bolt_uri).hostname or "127.0.0.1"

    @property
    def es_port(self) -> int:
        return urlsplit(self.es_url).port or 9200

    @property
    def es_host(self) -> str:
        return urlsplit(self.es_url).hostname or "127.0.0.1"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment (plus explicit overrides), with a clear error."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"SEMGRAPH_{'_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from exc
