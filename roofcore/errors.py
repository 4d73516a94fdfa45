"""One error family: every error the engine raises on purpose is a :class:`RoofcoreError`, so a caller catches them
all with one ``except``. Each also derives from the builtin that fits what went wrong, so code that knows nothing
of roofcore catches it too: bad input (:class:`LocatedError` and its kinds, :class:`LimitError`) is a
``ValueError``, an unknown hardware id (:class:`UnknownHardwareError`) a ``KeyError``. Errors of the optional run
store (``roofcore.store.StoreError``) are only ``RoofcoreError``.

Messages say what to fix: where (file, row or key path), what was expected, what was found, and a hint.
"""

from __future__ import annotations


class RoofcoreError(Exception):
    """Base of every error the engine raises on purpose."""


def compose(where: str | None, expected: str | None, found: str | None, hint: str | None, text: str | None) -> str:
    parts = []
    if where:
        parts.append(f"{where}:")
    if text:
        parts.append(text)
    if expected is not None:
        parts.append(f"expected {expected}, found {found}.")
    if hint:
        parts.append(f"Hint: {hint}")
    return " ".join(parts)


class LocatedError(RoofcoreError, ValueError):
    """An error about a place in some input: ``where`` is ``file: $.key.path`` or ``file: row 12``."""

    def __init__(
        self,
        text: str | None = None,
        *,
        where: str | None = None,
        expected: str | None = None,
        found: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.where, self.expected, self.found, self.hint, self.text = where, expected, found, hint, text
        super().__init__(compose(where, expected, found, hint, text))


class UnitError(LocatedError):
    """A quantity with a missing, unknown or wrong unit."""


class CatalogError(LocatedError):
    """A hardware catalog that cannot be loaded or does not validate."""


class InputError(LocatedError):
    """A workload input (inventory, profiler export) that cannot be read."""


class UnknownHardwareError(RoofcoreError, KeyError):
    """A hardware id not in the loaded catalogs; the message lists the closest ids."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class LimitError(RoofcoreError, ValueError):
    """An input beyond a configured limit; the message names the limit and how to raise it."""
