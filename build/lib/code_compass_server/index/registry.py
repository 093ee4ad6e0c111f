"""The engine's projects by name: adding and removing them, finding the one a path belongs to,
and reading a workspace file's current text without ever leaving its root."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from code_compass_server.errors import WorkspaceError
from code_compass_server.index.buffers import EditorBuffers
from code_compass_server.index.project import Project
from code_compass_server.index.secret_files import is_secret
from code_compass_server.index.shared_buffers import read_published
from code_compass_server.index.textio import decode_text
from code_compass_server.records import FileText
from code_compass_server.storage import project_storage


class ProjectRegistry:
    def __init__(
        self,
        storage: Path,
        buffers: EditorBuffers,
        max_file_bytes: Callable[[Path], int],
        *,
        read_shared: bool = False,
    ) -> None:
        self._storage = storage
        self._buffers = buffers
        # True in a process without an editor (MCP, CLI): read the buffers a language server
        # on the same storage publishes (index/shared_buffers.py).
        self._read_shared = read_shared
        # A project root -> its size limit (per-folder settings); larger evidence is not read.
        self._max_file_bytes = max_file_bytes
        self._lock = threading.RLock()
        self._projects: dict[str, Project] = {}

    def open(self, root: Path, name: str | None = None) -> tuple[Project, bool]:
        """The project of this folder, opened now unless it is already; True if it is new."""
        root = Path(root).expanduser()
        if not root.is_dir():
            raise WorkspaceError(
                f"{root} is not a folder; pass --workspace DIR of an existing folder"
            )
        root = root.resolve()
        with self._lock:
            for existing in self._projects.values():
                if existing.root == root:
                    return existing, False
            project = self._create(root, name)
            self._projects[project.name] = project
            return project, True

    def _create(self, root: Path, name: str | None) -> Project:
        """Open the stores of a folder not open yet (under the lock): a name of its own."""
        base = name or root.name or "root"
        unique, n = base, 2
        while unique in self._projects:
            unique, n = f"{base}-{n}", n + 1
        return Project.open(unique, root, project_storage(self._storage, root))

    def remove(self, name: str) -> Project | None:
        """Forget a project; the caller closes it once nothing writes to it any more."""
        with self._lock:
            return self._projects.pop(name, None)

    def names(self) -> list[str]:
        with self._lock:
            return list(self._projects)

    def get(self, name: str) -> Project:
        with self._lock:
            try:
                return self._projects[name]
            except KeyError:
                raise WorkspaceError(
                    f"unknown project {name!r}; known: {', '.join(self._projects) or 'none'}"
                ) from None

    def scope(self, name: str | None) -> list[Project]:
        """One project, or all of them for None or "*"."""
        if name and name != "*":
            return [self.get(name)]
        with self._lock:
            return list(self._projects.values())

    def project_for_path(self, abs_path: Path) -> tuple[str, str] | None:
        """(project, workspace-relative path) of the innermost project holding the path."""
        p = Path(abs_path).resolve() if Path(abs_path).exists() else Path(abs_path).absolute()
        with self._lock:
            best: tuple[str, str] | None = None
            best_len = -1
            for name, proj in self._projects.items():
                try:
                    rel = p.relative_to(proj.root)
                except ValueError:
                    continue
                if len(proj.root.parts) > best_len:
                    best, best_len = (name, rel.as_posix()), len(proj.root.parts)
            return best

    def read_text(self, project: str, rel_path: str) -> str | None:
        """Current text of a workspace file: the editor buffer if open, else disk. Never outside."""
        current = self.read_current(project, rel_path)
        return current.text if current is not None else None

    def read_current(self, project: str, rel_path: str) -> FileText | None:
        """`read_text` saying where the text came from: "buffer" or "disk"."""
        proj = self.get(project)
        safe = inside(proj.root, rel_path)
        if safe is None or is_secret_path(proj.root, rel_path, safe):
            return None  # never read for anyone (docs/rules.md: secret-files-excluded)
        buffered = self._buffers.get(safe, (proj.root / rel_path).absolute())
        if buffered is not None:
            return FileText(buffered, "buffer")
        try:
            stat = safe.stat()
        except OSError:
            stat = None
        if self._read_shared:
            published = self._published(proj, safe, stat.st_mtime if stat else None)
            if published is not None:
                return FileText(published, "buffer")
        if stat is None or stat.st_size > self._max_file_bytes(proj.root):
            return None
        try:
            data = safe.read_bytes()
        except OSError:
            return None
        if len(data) > self._max_file_bytes(proj.root):
            return None
        text = decode_text(data)
        return FileText(text, "disk") if text is not None else None

    @staticmethod
    def _published(proj: Project, safe: Path, disk_mtime: float | None) -> str | None:
        rel = safe.relative_to(proj.root).as_posix()
        if is_secret(rel):  # never published; refuse one planted in the folder all the same
            return None
        record = read_published(proj.directory, rel, disk_mtime)
        return record.text if record is not None else None


def inside(root: Path, rel_path: str) -> Path | None:
    """Resolve a workspace-relative path; None if it escapes the root ('..', symlinks, absolute)."""
    if not rel_path or "\0" in rel_path or Path(rel_path).is_absolute():
        return None
    candidate = (root / rel_path).resolve()
    try:
        candidate.relative_to(root)
    except ValueError:
        return None
    return candidate


def is_secret_path(root: Path, rel_path: str, resolved: Path) -> bool:
    """A secret file by the name asked for or by the file it resolves to (a link to `.env`)."""
    target = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else rel_path
    return is_secret(rel_path.replace("\\", "/")) or is_secret(target)
