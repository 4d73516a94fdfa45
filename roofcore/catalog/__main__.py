"""``python -m roofcore.catalog``: rewrite the compact form of the shipped catalogs (``catalogs/parsed.json``) after
editing one of them (:mod:`roofcore.catalog.compiled`)."""

from __future__ import annotations

from .compiled import main

main()
