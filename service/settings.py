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
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

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
    max_sql_chars: int = Field(
        default=1_000_000,
        gt=0,
        description="Longest SQL query accepted (422 sql_too_long above); parsing is the slowest part per byte.",
    )
    max_json_depth: int = Field(
        default=2500,
        gt=0,
        le=10_000,
        description="Deepest JSON nesting accepted (422 too_deep above); checked before the JSON is parsed.",
    )
    host: str = Field(default="127.0.0.1", description="Interface to bind; anything but loopback needs a token.")
    allow_no_token: bool = Field(
        default=False,
        description="Serve on a non-loopback interface without a token anyway (refused at start otherwise).",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host header names accepted besides localhost, 127.0.0.1 and [::1] (comma-separated). "
        "Bound to loopback only those are accepted (DNS rebinding); elsewhere any name unless this is set.",
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Origins allowed to call the API from a browser (comma-separated); none."
    )
    request_time_limit_s: float = Field(
        default=10.0, gt=0, le=3600, description="Longest a request may compute; 503 time_limit after that."
    )
    max_concurrent_work: int = Field(
        default=8, ge=1, le=256, description="Requests computing at once; the rest wait (within their time limit)."
    )
    heavy_workers: int = Field(
        default=2,
        ge=0,
        le=64,
        description="Worker processes for heavy requests (started with the service), so they never slow the "
        "server or /healthz and the time limit kills them; 0: heavy requests run on threads like the rest.",
    )
    heavy_request_weight: int = Field(
        default=1000,
        ge=1,
        description="A request is heavy from this weight on: JSON objects plus SQL operators counted in its body "
        "(TPC-H queries weigh 150 to 300), or its size in bytes from PUSHDOWN_HEAVY_BODY_BYTES on.",
    )
    max_request_weight: int = Field(
        default=50_000,
        ge=1,
        description="Heaviest request accepted (422 too_complex above), by the weight PUSHDOWN_HEAVY_REQUEST_WEIGHT "
        "uses: what could never finish within the time limit is refused at once instead of answering 503 later.",
    )
    heavy_body_bytes: int = Field(
        default=256 * 1024, gt=0, description="A body this large is heavy, whatever it holds."
    )
    heavy_worker_niceness: int = Field(
        default=10,
        ge=0,
        le=19,
        description="CPU priority the heavy-request workers lower themselves by (nice): when the cores are busy, "
        "the server process (/healthz, small requests) gets them first. 0 on a machine shared with busier work.",
    )
    prestart_heavy_workers: bool = Field(
        default=False,
        description="Start the heavy-request workers with the service (`pushdown serve` does); without it, heavy "
        "requests run on threads like the rest.",
    )
    port: int = Field(default=8000, ge=0, le=65535)
    workers: int = Field(default=1, ge=1, le=64, description="Processes `pushdown serve` runs (sharing one database).")
    log_format: Literal["auto", "json", "text"] = Field(
        default="auto", description="`pushdown serve`'s log lines: text on a terminal, JSON otherwise (auto)."
    )
    data_dir: Path = Field(
        default_factory=user_data_dir, description="The embedded SQLite database and the analyze jobs' samples."
    )
    database_url: str | None = Field(
        default=None,
        description="History and statistics: sqlite:///path or postgresql://...; defaults to SQLite under data_dir.",
    )
    data_roots: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Directories and URL prefixes (s3a://bucket/) analyze may read, comma-separated; "
        "default: data_dir. Anything else is refused with 403.",
    )
    spark_master: str = "local[*]"
    analyze_spark_idle_s: float = Field(
        default=300.0, ge=0, description="Stop the analyze Spark session after this long without a job."
    )
    analyze_sample_rows: int = Field(
        default=100_000, ge=0, description="Rows the analyze job samples per table (Bernoulli, fixed seed)."
    )
    analyze_histogram_buckets: int = Field(default=100, ge=1, le=10_000, description="Equi-depth histogram buckets.")
    analyze_mcv_count: int = Field(default=20, ge=0, le=1000, description="Most common values kept per column.")
    analyze_seed: int = Field(default=42, description="Seed of the sample, so re-analyzing unchanged data repeats it.")
    history_enabled: bool = Field(default=True, description="Record every /optimize answer for the dashboard.")
    history_durability: Literal["commit", "queue"] = Field(
        default="commit",
        description="commit: an answer leaves once its history record is committed (header Pushdown-History: "
        "recorded, else not-recorded); queue: it leaves at once (queued) and is written a moment later.",
    )
    history_commit_timeout_s: float = Field(
        default=5.0, gt=0, description="Longest an answer waits for its record's commit; then it says not-recorded."
    )
    history_queue_bytes: int = Field(
        default=64 * MIB, gt=0, description="Bytes of answers waiting to be recorded; more are dropped (counted)."
    )
    history_retention_days: float = Field(
        default=90, ge=0, description="Records older than this are deleted (0: kept however old)."
    )
    history_max_bytes: int = Field(
        default=1024 * MIB, ge=0, description="Stored history beyond this is deleted, oldest first (0: no limit)."
    )
    history_retention_interval_s: float = Field(default=600, gt=0, description="How often retention runs.")
    cache_enabled: bool = Field(default=True, description="Answer recurring /optimize requests from memory.")
    cache_max_entries: int = Field(default=1024, ge=0, description="Answers the request cache holds at most.")
    cache_max_bytes: int = Field(
        default=64 * MIB, ge=0, description="Bytes of answers the request cache holds at most (per process)."
    )
    cache_check_interval_s: float = Field(
        default=1.0,
        ge=0,
        description="How often the cache reads the database for statistics or feedback changed by another "
        "process (changes made by this process invalidate at once).",
    )
    shutdown_grace_s: float = Field(
        default=20, ge=0, description="On SIGTERM: how long in-flight requests may finish before the process exits."
    )

    @field_validator("api_token")
    @classmethod
    def _empty_token_is_none(cls, value: str | None) -> str | None:
        # `PUSHDOWN_API_TOKEN=${TOKEN:-}` in compose files must mean "no auth", not "the empty token".
        return value or None

    @field_validator("allowed_hosts", "cors_origins", "data_roots", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        # `PUSHDOWN_DATA_ROOTS=/data/tables,s3a://bucket/` rather than a JSON list in an environment variable.
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _defaults_under_data_dir(self) -> Settings:
        if not self.database_url:
            self.database_url = f"sqlite:///{(self.data_dir / 'pushdown.db').as_posix()}"
        if not self.data_roots:
            self.data_roots = [str(self.data_dir)]
        return self
