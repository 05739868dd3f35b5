"""Passwords: Argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane), lengths checked before
any hashing (a 1-MB password is refused at once), and the same work for an unknown user as for a
known one, so that neither the answer nor its timing tells whether an account exists."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MIN_PASSWORD = 10
MAX_PASSWORD_BYTES = 1024

_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1, hash_len=32, salt_len=16)
_DUMMY = _HASHER.hash("a password nobody has, to spend the same time as a real check")


class WeakPassword(ValueError):
    """A password that may not be set: too short or too long."""


def check_length(password: str) -> None:
    if len(password.encode("utf-8")) > MAX_PASSWORD_BYTES:
        raise WeakPassword(f"a password has at most {MAX_PASSWORD_BYTES} bytes")
    if len(password) < MIN_PASSWORD:
        raise WeakPassword(f"a password has at least {MIN_PASSWORD} characters")


def hash_password(password: str) -> str:
    check_length(password)
    return _HASHER.hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored`` (None: no such user — the same time is spent)."""
    if len(password.encode("utf-8")) > MAX_PASSWORD_BYTES:
        return False
    try:
        return _HASHER.verify(stored or _DUMMY, password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    return _HASHER.check_needs_rehash(stored)
