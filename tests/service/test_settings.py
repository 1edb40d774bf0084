"""Settings come from PUSHDOWN_* variables, with embedded defaults that work on a fresh machine."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from service.settings import Settings


@pytest.fixture(autouse=True)
def _no_pushdown_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in [k for k in os.environ if k.startswith("PUSHDOWN_")]:
        monkeypatch.delenv(name)


def test_embedded_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    s = Settings()
    assert s.api_token is None
    assert s.max_body_bytes == 10 * 1024 * 1024
    assert s.max_json_depth == 2500
    assert (s.host, s.port) == ("127.0.0.1", 8000)
    # not the current directory: every command finds the same tables wherever it runs
    assert s.data_dir == tmp_path / "share" / "pushdown"
    assert s.database_url == f"sqlite:///{tmp_path}/share/pushdown/pushdown.db"
    assert s.spark_master == "local[*]"


def test_environment_overrides_with_the_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUSHDOWN_API_TOKEN", "t0k")
    monkeypatch.setenv("PUSHDOWN_MAX_BODY_BYTES", "1024")
    monkeypatch.setenv("PUSHDOWN_PORT", "9001")
    monkeypatch.setenv("PUSHDOWN_DATA_DIR", "/var/lib/pushdown")
    monkeypatch.setenv("PUSHDOWN_SPARK_MASTER", "spark://master:7077")
    monkeypatch.setenv("API_TOKEN", "ignored-without-prefix")
    s = Settings()
    assert s.api_token == "t0k"
    assert s.max_body_bytes == 1024
    assert s.port == 9001
    assert s.database_url == "sqlite:////var/lib/pushdown/pushdown.db"
    assert s.spark_master == "spark://master:7077"


def test_an_explicit_database_url_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUSHDOWN_DATABASE_URL", "postgresql://u@db/pushdown")
    assert Settings().database_url == "postgresql://u@db/pushdown"


def test_an_empty_token_disables_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUSHDOWN_API_TOKEN", "")
    assert Settings().api_token is None


@pytest.mark.parametrize(
    ("name", "value"), [("PUSHDOWN_MAX_BODY_BYTES", "0"), ("PUSHDOWN_MAX_JSON_DEPTH", "100000"), ("PUSHDOWN_PORT", "x")]
)
def test_invalid_values_are_refused_at_start_up(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError):
        Settings()


def test_a_dot_env_file_is_read_and_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("PUSHDOWN_PORT=9100\nPUSHDOWN_API_TOKEN=from-file\nPOSTGRES_PASSWORD=other\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PUSHDOWN_API_TOKEN", "from-env")
    s = Settings()
    assert (s.port, s.api_token) == (9100, "from-env")


def test_without_xdg_the_data_dir_is_under_the_home_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert Settings().data_dir == Path.home() / ".local" / "share" / "pushdown"
