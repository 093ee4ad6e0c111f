"""`codeCompass/status` and `codeCompass/reindex`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from code_compass.lsp.params import reindex_project

if TYPE_CHECKING:
    from code_compass.lsp.server import CodeCompassServer


class StatusFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls

    async def status(self, params: Any = None) -> dict[str, Any]:
        ls = self.ls

        def run() -> dict[str, Any]:
            status = dict(ls.require_engine().status())
            status["projects"] = ls.index_state()["projects"]
            status["indexing"] = ls.indexer.busy
            status["settings"] = {
                "embeddingsEnabled": ls.settings.current.embeddings_enabled,
                "minScore": ls.settings.current.search_min_score,
                "topK": ls.settings.current.search_top_k,
            }
            return status

        return await ls.run_blocking(run)

    async def reindex(self, params: Any = None) -> dict[str, Any]:
        ls = self.ls

        def run() -> dict[str, Any]:
            engine = ls.require_engine()
            project = reindex_project(params, engine.projects())
            targets = [project] if project else sorted(engine.projects())
            ls.indexer.request(targets)
            return {"started": bool(targets), "projects": targets}

        return await ls.run_blocking(run)
