"""Runtime configuration, read from ``PUSHDOWN_*`` environment variables and a ``.env`` file.

The defaults are the embedded set-up (SQLite under the user's data directory, local
Spark, no token), so ``pushdown serve`` works on a fresh machine with nothing
configured, and every ``pushdown`` command finds the same tables and history
whatever directory it runs in. The environment wins over ``.env`` (read from the
current directory), which wins over the defaults.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024


def user_data_dir() -> Path:
    """Where the embedded database lives by default: ``$XDG_DATA_HOME/pushdown`` or ``~/.local/share/pushdown``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "pushdown"


class Settings(BaseSettings):
    """Everything the service reads from its environment; build one per app, not a global."""

    model_config = SettingsConfigDict(
        env_prefix="PUSHDOWN_", extra="ignore", env_file=".env", env_file_encoding="utf-8"
    )

    api_token: str | None = Field(
        default=None,
        description="Bearer token every route but /healthz requires; unset or empty disables auth.",
    )
    max_body_bytes: int = Field(default=10 * MIB, gt=0, description="Largest request body accepted (413 above).")
    max_json_depth: int = Field(
        default=2500,
        gt=0,
        le=10_000,
        description="Deepest JSON nesting accepted (422 too_deep above); checked before the JSON is parsed.",
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    workers: int = Field(default=1, ge=1, le=64, description="Processes `pushdown serve` runs (sharing one database).")
    log_format: Literal["json", "text"] = Field(default="json", description="`pushdown serve`'s log lines.")
    data_dir: Path = Field(
        default_factory=user_data_dir, description="The embedded SQLite database and the analyze jobs' samples."
    )
    database_url: str | None = Field(
        default=None,
        description="History and statistics: sqlite:///path or postgresql://...; defaults to SQLite under data_dir.",
    )
    spark_master: str = "local[*]"
    analyze_sample_rows: int = Field(
        default=100_000, ge=0, description="Rows the analyze job samples per table (Bernoulli, fixed seed)."
    )
    analyze_histogram_buckets: int = Field(default=100, ge=1, le=10_000, description="Equi-depth histogram buckets.")
    analyze_mcv_count: int = Field(default=20, ge=0, le=1000, description="Most common values kept per column.")
    analyze_seed: int = Field(default=42, description="Seed of the sample, so re-analyzing unchanged data repeats it.")
    history_enabled: bool = Field(default=True, description="Record every /optimize answer for the dashboard.")
    history_queue_size: int = Field(
        default=10_000, ge=1, description="Answers waiting to be recorded; more are dropped (logged and counted)."
    )

    @field_validator("api_token")
    @classmethod
    def _empty_token_is_none(cls, value: str | None) -> str | None:
        # `PUSHDOWN_API_TOKEN=${TOKEN:-}` in compose files must mean "no auth", not "the empty token".
        return value or None

    @model_validator(mode="after")
    def _default_database(self) -> Settings:
        if not self.database_url:
            self.database_url = f"sqlite:///{(self.data_dir / 'pushdown.db').as_posix()}"
        return self
