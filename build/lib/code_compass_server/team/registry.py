"""The projects of an engine that serves from the team index: the local registry's reads
(evidence from the workspace's disk or editor buffers, path confinement) over TeamProjects."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

from code_compass_server.errors import InputError
from code_compass_server.index.buffers import EditorBuffers
from code_compass_server.index.project import Project
from code_compass_server.index.registry import ProjectRegistry
from code_compass_server.index.scan import ScanSettings
from code_compass_server.storage import project_storage
from code_compass_server.team.connection import safe_url
from code_compass_server.team.overlay import WorkspaceOverlay
from code_compass_server.team.remote import TeamConnections, TeamProject


class TeamRegistry(ProjectRegistry):
    def __init__(
        self,
        storage: Path,
        buffers: EditorBuffers,
        max_file_bytes: Callable[[Path], int],
        url: str,
        scan_for: Callable[[Path], ScanSettings],
        project_names: dict[Path, str],
        single_project: str = "",
    ) -> None:
        super().__init__(storage, buffers, max_file_bytes, read_shared=True)
        self.url = url
        self._scan_for = scan_for
        # workspace root -> team project name (--project; default: the folder's name)
        self._project_names = project_names
        self._single = single_project

    def _create(self, root: Path, name: str | None) -> Project:
        """A folder's project on the team index (it must exist there: a push creates it)."""
        # Named by configuration first (--project, $CODE_COMPASS_PROJECT for a single
        # folder), then by the client's folder name, then by the folder itself.
        single = self._single if not self._projects else ""
        team_name = self._project_names.get(root) or single or name or root.name
        connections = TeamConnections(self.url)
        with connections.conn() as c:
            row = c.execute("SELECT id FROM cc_projects WHERE name = %s", (team_name,)).fetchone()
        if row is None:
            connections.close()
            raise InputError(
                "project",
                f"no project {team_name!r} on the team index at {safe_url(self.url)} (or this "
                "role may not read it); push it first: code-compass index --database URL "
                f"--project {team_name}",
            )
        overlay = WorkspaceOverlay(
            root, lambda: self._scan_for(root), lambda rel: self._buffer_text(root, rel)
        )
        project = TeamProject(
            team_name, root, project_storage(self._storage, root), connections, int(row[0]),
            overlay,
        )  # fmt: skip
        return cast(Project, project)

    def _buffer_text(self, root: Path, rel: str) -> str | None:
        return self._buffers.get(root / rel, (root / rel).absolute())
