"""Settings loading shared by the node and the front end: TOML file, environment, then overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, TomlConfigSettingsSource

S = TypeVar("S", bound=BaseSettings)


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
