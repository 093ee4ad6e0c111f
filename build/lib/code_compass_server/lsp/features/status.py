"""`codeCompass/status` and `codeCompass/reindex`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from code_compass_server.engine_status import status_to_json
from code_compass_server.lsp.params import reindex_project
from code_compass_server.settings import RESOURCE_KEYS, client_values

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer


class StatusFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls

    async def status(self, params: Any = None) -> dict[str, Any]:
        ls = self.ls

        def run() -> dict[str, Any]:
            engine = ls.require_engine()
            record = engine.status()
            status = status_to_json(record)
            status["projects"] = ls.index_state(record)["projects"]
            for entry in status["projects"]:  # what this folder indexes (its own overrides)
                values = client_values(engine.settings, Path(entry["root"]))
                entry["settings"] = {k: values[k] for k in RESOURCE_KEYS}
            status["indexing"] = engine.scheduler.busy
            status["settings"] = client_values(engine.settings)  # window-wide
            return status

        return await ls.run_blocking(run)

    async def reindex(self, params: Any = None) -> dict[str, Any]:
        ls = self.ls

        def run() -> dict[str, Any]:
            engine = ls.require_engine()
            project = reindex_project(params, engine.projects())
            targets = [project] if project else sorted(engine.projects())
            for name in targets:
                engine.schedule_index(name)
            return {"started": bool(targets), "projects": targets}

        return await ls.run_bulk(run)
