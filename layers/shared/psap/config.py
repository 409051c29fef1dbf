"""The environment a function runs in, read once at cold start."""

import os


class ConfigurationError(RuntimeError):
    """A required environment variable is missing: a deployment mistake, not bad input."""


def required_env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is not set")
    return value


def auth_table() -> str:
    return required_env("AUTH_TABLE")


def knowledge_table() -> str:
    return required_env("KNOWLEDGE_TABLE")
