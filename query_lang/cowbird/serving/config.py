"""Settings loading shared by the node and the front end: TOML file, environment, then overrides.

Both services read their settings the same way: a relative path written in the TOML file is taken
relative to the file's folder (so a configuration works from any working directory); a relative
path given in the environment or on the command line is taken relative to the working directory,
as usual for those.
"""

from __future__ import annotations

import os
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, TomlConfigSettingsSource

S = TypeVar("S", bound="LayeredSettings")

PLACEHOLDER_TOKENS = {"", "changeme", "change-me", "change_me", "secret", "token", "password", "xxx", "todo"}
MIN_TOKEN_LENGTH = 16


class ConfigError(ValueError):
    """The configuration cannot be used; the message says which setting (and file) and why."""


def read_token(path: Path | None, value: str | None, dev: bool, what: str) -> str:
    """A bearer token from ``path`` (preferred) or ``value``; placeholders are refused outside dev mode."""
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read the {what} file {path}: {exc.strerror}") from exc
    else:
        token = (value or "").strip()
    if not dev and (token.lower() in PLACEHOLDER_TOKENS or len(token) < MIN_TOKEN_LENGTH):
        raise ConfigError(
            f"refusing to start without a real {what}: put at least {MIN_TOKEN_LENGTH} random characters in "
            "its file (for example: python -c 'import secrets; print(secrets.token_urlsafe(32))' > node.token)"
        )
    return token


def _is_path(annotation: Any) -> bool:
    if annotation is Path:
        return True
    return any(_is_path(arg) for arg in typing.get_args(annotation) if arg is not type(None))


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds (directly, optionally, or as list items), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (list, tuple, types.UnionType, typing.Union):
        for arg in typing.get_args(annotation):
            model = _model_of(arg)
            if model is not None:
                return model
    return None


def resolve_paths(model: type[BaseModel], data: dict[str, Any], base: Path) -> dict[str, Any]:
    """``data`` (as read from a file in ``base``) with every relative path of ``model`` made absolute."""
    resolved = dict(data)
    for name, info in model.model_fields.items():
        if name not in resolved:
            continue
        value = resolved[name]
        if _is_path(info.annotation) and isinstance(value, str) and value and not Path(value).is_absolute():
            resolved[name] = os.path.normpath(base / value)
            continue
        inner = _model_of(info.annotation)
        if inner is None:
            continue
        if isinstance(value, dict):
            resolved[name] = resolve_paths(inner, value, base)
        elif isinstance(value, list):
            resolved[name] = [resolve_paths(inner, v, base) if isinstance(v, dict) else v for v in value]
    return resolved


class RelativeTomlSource(TomlConfigSettingsSource):
    """A TOML file whose relative paths are relative to the file itself."""

    def __init__(self, settings_cls: type[BaseSettings], toml_file: Path) -> None:
        self._model = settings_cls  # _read_file runs inside the base class's __init__
        super().__init__(settings_cls, toml_file=toml_file)

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        try:
            data = upgraded(self._model, super()._read_file(file_path))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{file_path}: not valid TOML ({exc})") from exc
        except ValueError as exc:
            raise ConfigError(f"{file_path}: {exc}") from exc
        return resolve_paths(self._model, data, Path(file_path).resolve().parent)


def upgraded(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the names of an earlier version of ``model`` written as today's: a settings
    class whose names changed has a static ``upgrade_keys(data) -> data`` (the front end's groups)."""
    upgrade = getattr(model, "upgrade_keys", None)
    return upgrade(data) if callable(upgrade) else data


def describe_validation_error(error: ValidationError, config: Path | None = None) -> str:
    """Pydantic's first complaint as one line: which setting, what is wrong (and in which file)."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    source = f" in {config}" if config is not None else ""
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"invalid setting {where}{source}: {message}" if where else f"invalid settings{source}: {message}"


class LayeredSettings(BaseSettings):
    """Settings read from the keyword arguments, then the environment, then ``extra_sources``
    (a service's own, such as the front end's old flat names; ``load_settings`` adds the TOML file).
    A subclass with ``from_keywords_only`` reads the keyword arguments alone (no environment)."""

    from_keywords_only: ClassVar[bool] = False

    @classmethod
    def extra_sources(cls, settings_cls: type[BaseSettings]) -> tuple[PydanticBaseSettingsSource, ...]:
        return ()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        if cls.from_keywords_only:
            return (init_settings,)
        return init_settings, env_settings, *cls.extra_sources(settings_cls)


def load_settings(cls: type[S], config: Path | None, overrides: dict[str, Any]) -> S:
    """``cls`` from ``overrides`` (None values ignored) over environment variables over ``config``.

    Every problem is a ``ConfigError`` with a one-line message.
    """
    if config is not None and not config.is_file():
        raise ConfigError(f"configuration file {config} does not exist")

    class FromFile(cls):  # type: ignore[valid-type, misc]
        @classmethod
        def extra_sources(cls, settings_cls: type[BaseSettings]) -> tuple[PydanticBaseSettingsSource, ...]:
            own = super().extra_sources(settings_cls)
            return own if config is None else (*own, RelativeTomlSource(settings_cls, toml_file=config))

    values = {k: v for k, v in overrides.items() if v is not None and v != ()}
    try:
        return cls.model_validate(FromFile(**upgraded(cls, values)).model_dump())
    except ValueError as exc:
        if not isinstance(exc, ValidationError):
            raise ConfigError(str(exc)) from exc
        raise ConfigError(describe_validation_error(exc, config)) from exc
