"""``python -m roofcore.catalog``: rewrite the compact form of the shipped catalogs (``catalogs/parsed.json``) after
editing one of them (:mod:`roofcore.catalog.compiled`)."""

from .compiled import main

main()
