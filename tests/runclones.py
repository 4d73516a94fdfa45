"""Many saved runs at once for the History and store tests: one real run saved with RunStore.save, then copied in
bulk with plain INSERTs (a save reads its files first; hundreds of saves would cost seconds)."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
from collections.abc import Callable

from sqlalchemy import insert, select

from roofcore.store.repository import new_id
from roofcore.store.schema import FileRow, RunRow


def clone_runs(store, source_id: str, n: int, *, project: str, start: dt.datetime,
               step: dt.timedelta = dt.timedelta(minutes=1), name: str = "run {i}",
               content: Callable[[int], bytes] | None = None) -> list[str]:
    """``n`` copies of run ``source_id`` in ``project``, the i-th saved at ``start + i * step`` and named
    ``name.format(i=i)``; ``content(i)``, when given, replaces the bytes of its (single) file, so each copy
    parses on its own. The new ids, oldest first."""
    with store.engine.begin() as conn:
        src = dict(conn.execute(select(RunRow.__table__).where(RunRow.id == source_id)).mappings().one())
        files = [dict(f) for f in conn.execute(select(FileRow.__table__).where(FileRow.run_id == source_id)
                                              .order_by(FileRow.position)).mappings()]
        assert content is None or len(files) == 1, "content replaces the file of a run of one file"
        ids = [new_id() for _ in range(n)]
        conn.execute(insert(RunRow.__table__), [{**src, "id": rid, "project": project, "name": name.format(i=i),
                                                 "created_at": start + i * step} for i, rid in enumerate(ids)])
        rows = []
        for i, rid in enumerate(ids):
            for f in files:
                row = {k: v for k, v in f.items() if k != "id"} | {"run_id": rid}
                if content is not None:
                    data = content(i)
                    row |= {"data": gzip.compress(data, mtime=0), "encoding": "gzip", "size": len(data),
                            "sha256": hashlib.sha256(data).hexdigest()}
                rows.append(row)
        conn.execute(insert(FileRow.__table__), rows)
    return ids
