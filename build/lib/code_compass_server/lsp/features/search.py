"""`codeCompass/search` -> {hits, reason?, partialIndex, tookMs}."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from code_compass_server.lsp.params import search_params
from code_compass_server.records import search_meta

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer


class SearchFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls

    async def search(self, params: Any) -> dict[str, Any]:
        ls = self.ls

        def run() -> dict[str, Any]:
            t0 = time.perf_counter()
            engine = ls.require_engine()
            checked = search_params(params, engine.settings, engine.projects())
            hits = engine.search(checked)
            return {
                "hits": [h.to_json() for h in hits],
                **search_meta(hits),
                "tookMs": round((time.perf_counter() - t0) * 1000, 2),
            }

        return await ls.run_bulk(run)
