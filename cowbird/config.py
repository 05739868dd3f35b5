"""Settings loading shared by the node and the front end: TOML file, environment, then overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, TomlConfigSettingsSource

S = TypeVar("S", bound=BaseSettings)

PLACEHOLDER_TOKENS = {"", "changeme", "change-me", "change_me", "secret", "token", "password", "xxx", "todo"}
MIN_TOKEN_LENGTH = 16


def read_token(path: Path | None, value: str | None, dev: bool, what: str) -> str:
    """A bearer token from ``path`` (preferred) or ``value``; placeholders are refused outside dev mode."""
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ValueError(f"cannot read the {what} file {path}: {exc.strerror}") from exc
    else:
        token = (value or "").strip()
    if not dev and (token.lower() in PLACEHOLDER_TOKENS or len(token) < MIN_TOKEN_LENGTH):
        raise ValueError(
            f"refusing to start without a real {what}: put at least {MIN_TOKEN_LENGTH} random characters in "
            "its file (for example: python -c 'import secrets; print(secrets.token_urlsafe(32))' > node.token)"
        )
    return token


def load_settings(cls: type[S], config: Path | None, overrides: dict[str, Any]) -> S:
    """``cls`` from ``overrides`` (None values ignored) over environment variables over ``config``."""
    if config is not None and not config.is_file():
        raise ValueError(f"configuration file {config} does not exist")

    class FromFile(cls):  # type: ignore[valid-type, misc]
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
            if config is not None:
                sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config))
            return tuple(sources)

    values = {k: v for k, v in overrides.items() if v is not None and v != ()}
    return cls.model_validate(FromFile(**values).model_dump())
