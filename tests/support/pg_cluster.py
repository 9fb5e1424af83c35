"""Private PostgreSQL clusters (and PgBouncer in front of them) that a test may stop, fail over or pool.

The shared server on 127.0.0.1:5432 (``JOBTABLE_TEST_POSTGRES``) serves every
other test at once, so a test that needs to stop a server, promote a standby
or go through a pooler gets its own: a cluster made with ``initdb`` in a temp
folder, on a free loopback port, with trust authentication, torn down when
the test ends, pass or fail.

Each cluster lives in a folder the ``postgres`` user owns: ``data/`` (the data
directory), ``sock/`` (its Unix socket, so it never collides with the system
one in /var/run/postgresql) and ``postgres.log``. ``initdb``, ``postgres`` and
``pgbouncer`` refuse to run as root, so when the tests run as root (CI) every
one of them runs as ``postgres`` (``subprocess``'s ``user=``, the same setuid
``runuser -u postgres`` does, without a wrapper process between the test and
PgBouncer's pid).

Without the binaries, the tests that need them skip with a reason; in CI
(``CI`` set) they fail instead, like ``tests/support/postgres.py``.

Waits are on conditions with a deadline (``pg_ctl -w``, a ready probe, a
query's answer), never for a fixed time.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn, Self

import pytest

OWNER = "postgres"
"""The account the servers run as when the tests run as root."""

BIN_VARIABLE = "JOBTABLE_PG_BIN"
"""Overrides where ``initdb``, ``pg_ctl``, ``pg_basebackup`` and ``pg_isready`` are."""

PGBOUNCER_CANDIDATES = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")
SHARED_PORT = 5432
"""The machine's shared server: never chosen, never touched."""

START_TIMEOUT = 60.0
QUERY_TIMEOUT = 30.0
POLL = 0.05
"""How often a wait looks at its condition again (the wait itself ends on the condition)."""

SOCKET_PATH_LIMIT = 100
"""A Unix socket path must fit in ``sockaddr_un`` (107 bytes); ``.s.PGSQL.NNNNN`` is added."""

SERVER_SETTINGS = """
# --- tests/support/pg_cluster.py: a small, fast, private test server ---
listen_addresses = '127.0.0.1'
shared_buffers = 16MB
max_connections = 100
fsync = off
full_page_writes = off
wal_level = replica
max_wal_senders = 5
max_replication_slots = 5
wal_keep_size = 128MB
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
logging_collector = off
log_min_messages = warning
log_connections = off
include_if_exists = 'node.conf'
"""
"""Shared by a primary and its standbys (``pg_basebackup`` copies it); per node in ``node.conf``.

``fsync`` and ``full_page_writes`` only guard against the machine crashing;
``synchronous_commit`` stays on, so a commit survives ``stop("immediate")``
(a server crash) as it would in production.
"""

HBA = """
# --- tests/support/pg_cluster.py: loopback and the folder's socket only, no passwords ---
local   all             all                     trust
host    all             all     127.0.0.1/32    trust
local   replication     all                     trust
host    replication     all     127.0.0.1/32    trust
"""


class ClusterError(RuntimeError):
    """A private server or pooler did not do what it was asked; the message carries its log."""


# --- the machine -------------------------------------------------------------------


def unavailable(reason: str) -> NoReturn:
    """Skip the test, or fail it in CI, where a missing tool must never pass as green."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must provide {reason}")
    pytest.skip(f"needs {reason}")


def pg_bin() -> Path:
    """The folder with ``initdb`` and ``pg_ctl``: ``$JOBTABLE_PG_BIN``, else the newest Debian one."""
    configured = os.environ.get(BIN_VARIABLE)
    if configured:
        candidates = [Path(configured)]
    else:
        versions = sorted(
            Path("/usr/lib/postgresql").glob("*/bin"),
            key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
            reverse=True,
        )
        on_path = shutil.which("initdb")
        candidates = [*versions, *([Path(on_path).parent] if on_path else [])]
    for folder in candidates:
        if all((folder / name).is_file() for name in ("initdb", "pg_ctl", "pg_basebackup")):
            return folder
    unavailable(
        "the PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup): "
        f"install postgresql or set {BIN_VARIABLE}"
    )


def pgbouncer_binary() -> str:
    """PgBouncer's path, or skip/fail: Debian's package puts it in /usr/sbin, off a user's PATH."""
    for candidate in (shutil.which("pgbouncer"), *PGBOUNCER_CANDIDATES):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    unavailable("pgbouncer (apt-get install -y pgbouncer)")


def _as_root() -> bool:
    return os.geteuid() == 0


def _owner() -> pwd.struct_passwd | None:
    """The ``postgres`` account when running as root (servers refuse root), else None: run as us."""
    if not _as_root():
        return None
    try:
        return pwd.getpwnam(OWNER)
    except KeyError:
        unavailable(f"a {OWNER!r} user to run PostgreSQL as (the tests run as root)")


def _owner_kwargs() -> dict[str, Any]:
    """``subprocess`` arguments that run a child as the owner, with only its own groups."""
    owner = _owner()
    if owner is None:
        return {}
    return {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}


def _child_env() -> dict[str, str]:
    """Our environment without PG* variables, so no tool can drift to the shared server."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    owner = _owner()
    if owner is not None:
        env.update(HOME=owner.pw_dir, USER=owner.pw_name, LOGNAME=owner.pw_name)
    env["LC_ALL"] = "C"
    return env


def _run(
    args: Sequence[str | Path], *, cwd: Path, timeout: float = START_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL tool as the owner; a failure raises with its output."""
    command = [str(arg) for arg in args]
    result = subprocess.run(
        command,
        cwd=cwd,
        env=_child_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **_owner_kwargs(),
    )
    if result.returncode != 0:
        raise ClusterError(
            f"{shlex.join(command)} exited {result.returncode}\n{result.stdout}{result.stderr}"
        )
    return result


def free_port() -> int:
    """A loopback port nobody listens on now: the kernel's pick for a socket bound to port 0.

    Another process may take it before the server binds; ``PrivateCluster.create``
    and ``PgBouncer.start`` try again with a new port when that happens.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    if port == SHARED_PORT:  # cannot happen for an ephemeral port; never risk the shared server
        return free_port()
    return port


def own_folder(folder: Path) -> Path:
    """Make ``folder`` (and its parents), give it to the owner, and check the owner can reach it.

    pytest's ``tmp_path`` is under a root-only ``/tmp/pytest-of-root``, which
    ``postgres`` cannot enter: use ``temp_folder()`` for a folder that works.
    """
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    owner = _owner()
    if owner is not None:
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        reachable = subprocess.run(
            ["test", "-w", str(folder), "-a", "-x", str(folder)],
            env=_child_env(),
            cwd="/",
            check=False,
            **_owner_kwargs(),
        )
        if reachable.returncode != 0:
            raise ClusterError(
                f"{OWNER} cannot enter {folder}: a parent folder is closed to it "
                "(pytest's tmp_path is, when run as root); use temp_folder()"
            )
    if len(str(folder / "sock" / ".s.PGSQL.65535")) > SOCKET_PATH_LIMIT:
        raise ClusterError(f"{folder} is too long a path for a Unix socket; use temp_folder()")
    return folder


@contextlib.contextmanager
def temp_folder(prefix: str = "pgc-") -> Iterator[Path]:
    """A short-named folder in the system temp dir that the owner can use; removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)  # mkdtemp makes it 0700; the owner must be able to enter it
    try:
        yield own_folder(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _tail(path: Path, lines: int = 30) -> str:
    """The end of a log, for an error message."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return f"--- {path} ---\n" + "\n".join(text.splitlines()[-lines:])


def wait_until(
    condition: Callable[[], bool], *, timeout: float, what: str, log: Path | None = None
) -> None:
    """Return once ``condition()`` is true; raise ``ClusterError`` naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return
        if time.monotonic() >= deadline:
            detail = f"\n{_tail(log)}" if log is not None else ""
            raise ClusterError(f"gave up after {timeout:.0f} s waiting until {what}{detail}")
        time.sleep(POLL)


# --- PostgreSQL ---------------------------------------------------------------------


class PrivateCluster:
    """One PostgreSQL server of the test's own: start, stop, restart, promote, destroy at will.

    ``create`` and ``standby_of`` return it running. Use it as a context
    manager (or call ``destroy``) so the server is stopped and its folder
    removed however the test ends.
    """

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self.bin = pg_bin()

    # where things are
    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def socket_dir(self) -> Path:
        return self.folder / "sock"

    @property
    def log(self) -> Path:
        return self.folder / "postgres.log"

    @property
    def url(self) -> str:
        """The ``postgres`` database as the ``postgres`` superuser, over loopback TCP."""
        return self.url_for("postgres")

    def url_for(self, dbname: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def __repr__(self) -> str:
        return f"PrivateCluster(port={self.port}, folder={str(self.folder)!r})"

    # making one
    @classmethod
    def create(cls, folder: Path, *, attempts: int = 3) -> PrivateCluster:
        """``initdb`` a new cluster in ``folder``, start it, and create the database ``test``.

        The port is picked free at the last moment; should another process bind
        it first, the start fails and a new port is tried (``attempts`` times).
        """
        pg_bin()  # skip (or fail in CI) before making anything
        folder = own_folder(folder)
        cluster = cls(folder, free_port())
        cluster.socket_dir.mkdir(exist_ok=True)
        own_folder(cluster.socket_dir)
        try:
            _run(
                [
                    cluster.bin / "initdb",
                    "--pgdata",
                    cluster.data,
                    "--username",
                    "postgres",
                    "--auth",
                    "trust",
                    "--encoding",
                    "UTF8",
                    "--locale",
                    "C",
                    "--no-sync",
                    "--no-instructions",
                ],
                cwd=folder,
            )
            cluster._append(cluster.data / "postgresql.conf", SERVER_SETTINGS)
            cluster._write(cluster.data / "pg_hba.conf", HBA)
            cluster._start_on_a_free_port(attempts)
            with cluster.connect() as conn:
                conn.execute("CREATE DATABASE test")
        except BaseException:
            cluster.destroy()
            raise
        return cluster

    @classmethod
    def standby_of(
        cls, primary: PrivateCluster, folder: Path, *, attempts: int = 3
    ) -> PrivateCluster:
        """A streaming standby of ``primary``: ``pg_basebackup -R`` into ``folder``, started.

        Hot standby: it answers read-only queries, and ``pg_is_in_recovery()``
        is true until ``promote``.
        """
        pg_bin()
        folder = own_folder(folder)
        standby = cls(folder, free_port())
        standby.socket_dir.mkdir(exist_ok=True)
        own_folder(standby.socket_dir)
        try:
            _run(
                [
                    standby.bin / "pg_basebackup",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(primary.port),
                    "--username",
                    "postgres",
                    "--pgdata",
                    standby.data,
                    "--write-recovery-conf",
                    "--wal-method",
                    "stream",
                    "--checkpoint",
                    "fast",
                    "--no-sync",
                ],
                cwd=folder,
            )
            standby._start_on_a_free_port(attempts)
        except BaseException:
            standby.destroy()
            raise
        return standby

    # running it
    def start(self) -> None:
        """Start the server and return once it accepts connections on its port."""
        self._write(
            self.data / "node.conf",
            f"port = {self.port}\n"
            f"unix_socket_directories = '{self.socket_dir}'\n"
            f"cluster_name = 'pgc{self.port}'\n",
        )
        self.log.touch()
        if _as_root():
            owner = _owner()
            assert owner is not None
            os.chown(self.log, owner.pw_uid, owner.pw_gid)
        try:
            _run(
                [
                    self.bin / "pg_ctl",
                    "--pgdata",
                    self.data,
                    "--log",
                    self.log,
                    "--wait",
                    "--timeout",
                    str(int(START_TIMEOUT)),
                    "start",
                ],
                cwd=self.folder,
                timeout=START_TIMEOUT + 10,
            )
        except ClusterError as error:
            raise ClusterError(f"{error}\n{_tail(self.log)}") from None
        self.wait_ready()

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``smart``, ``fast`` or ``immediate``) and return once it is gone."""
        try:
            _run(
                [
                    self.bin / "pg_ctl",
                    "--pgdata",
                    self.data,
                    "--mode",
                    mode,
                    "--wait",
                    "--timeout",
                    str(int(START_TIMEOUT)),
                    "stop",
                ],
                cwd=self.folder,
                timeout=START_TIMEOUT + 10,
            )
        except ClusterError as error:
            raise ClusterError(f"{error}\n{_tail(self.log)}") from None

    def restart(self, mode: str = "fast") -> None:
        """Stop and start again on the same port and data, as a crash-free server restart."""
        self.stop(mode)
        self.start()

    def is_running(self) -> bool:
        """Whether a postmaster runs on this data directory (``pg_ctl status``)."""
        if not (self.data / "postmaster.pid").exists():
            return False
        status = subprocess.run(
            [str(self.bin / "pg_ctl"), "--pgdata", str(self.data), "status"],
            cwd=self.folder,
            env=_child_env(),
            capture_output=True,
            check=False,
            timeout=30,
            **_owner_kwargs(),
        )
        return status.returncode == 0

    def accepts_connections(self) -> bool:
        """One ``pg_isready`` over loopback TCP, as a client would come."""
        probe = subprocess.run(
            [
                str(self.bin / "pg_isready"),
                "--quiet",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dbname",
                "postgres",
                "--username",
                "postgres",
                "--timeout",
                "2",
            ],
            env=_child_env(),
            check=False,
            timeout=10,
        )
        return probe.returncode == 0

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        wait_until(
            self.accepts_connections,
            timeout=timeout,
            what=f"the server on 127.0.0.1:{self.port} accepts connections",
            log=self.log,
        )

    def connect(self, dbname: str = "postgres", **kwargs: Any) -> Any:
        """A psycopg connection (autocommit unless told), straight to this server."""
        import psycopg

        kwargs.setdefault("autocommit", True)
        kwargs.setdefault("connect_timeout", 5)
        return psycopg.connect(self.url_for(dbname), **kwargs)

    def query(self, sql: str, dbname: str = "postgres") -> Any:
        """The first column of the first row of ``sql``, on a connection of its own."""
        with self.connect(dbname) as conn:
            row = conn.execute(sql).fetchone()
        return None if row is None else row[0]

    # replication
    def in_recovery(self) -> bool:
        return bool(self.query("SELECT pg_is_in_recovery()"))

    def wait_caught_up(self, primary: PrivateCluster, timeout: float = QUERY_TIMEOUT) -> None:
        """Return once this standby has replayed everything ``primary`` had written when called.

        Everything committed on the primary before the call is then on the
        standby too: stopping the primary after this loses none of it.
        """
        target = str(primary.query("SELECT pg_current_wal_insert_lsn()"))

        def replayed() -> bool:
            with self.connect() as conn:
                row = conn.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,)
                ).fetchone()
            return bool(row and row[0])

        wait_until(
            replayed,
            timeout=timeout,
            what=f"the standby on port {self.port} replayed the primary's WAL up to {target}",
            log=self.log,
        )

    def promote(self, timeout: float = START_TIMEOUT) -> None:
        """Make this standby a primary, and return once it takes writes."""
        _run(
            [
                self.bin / "pg_ctl",
                "--pgdata",
                self.data,
                "--wait",
                "--timeout",
                str(int(timeout)),
                "promote",
            ],
            cwd=self.folder,
            timeout=timeout + 10,
        )
        wait_until(
            lambda: not self.in_recovery(),
            timeout=timeout,
            what=f"the server on port {self.port} left recovery",
            log=self.log,
        )

    # ending it
    def destroy(self) -> None:
        """Stop the server if it runs (fast, then immediate), then remove its folder."""
        try:
            if self.is_running():
                try:
                    self.stop("fast")
                except (ClusterError, subprocess.TimeoutExpired):
                    self.stop("immediate")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.destroy()

    # inside
    def _start_on_a_free_port(self, attempts: int) -> None:
        """Start; when the port was taken meanwhile, pick another (only before the first start)."""
        for attempt in range(attempts):
            try:
                self.start()
                return
            except ClusterError as error:
                taken = "could not bind" in str(error) or "Address already in use" in str(error)
                if not taken or attempt == attempts - 1:
                    raise
                self.port = free_port()

    def _write(self, path: Path, text: str) -> None:
        path.write_text(text)
        owner = _owner()
        if owner is not None:
            os.chown(path, owner.pw_uid, owner.pw_gid)

    def _append(self, path: Path, text: str) -> None:
        with path.open("a") as file:
            file.write(text)


@contextlib.contextmanager
def private_cluster() -> Iterator[PrivateCluster]:
    """A running private cluster in a temp folder, destroyed at the end: the usual fixture body."""
    with temp_folder() as folder, PrivateCluster.create(folder / "primary") as cluster:
        yield cluster


@contextlib.contextmanager
def primary_and_standby() -> Iterator[tuple[PrivateCluster, PrivateCluster]]:
    """A private primary and a streaming standby of it, both destroyed at the end."""
    with (
        temp_folder() as folder,
        PrivateCluster.create(folder / "primary") as primary,
        PrivateCluster.standby_of(primary, folder / "standby") as standby,
    ):
        yield primary, standby


# --- PgBouncer ----------------------------------------------------------------------


class PgBouncer:
    """PgBouncer on a free loopback port in front of one private cluster, stopped at the end.

    Its own config, pid and log files in its folder, its own port, no Unix
    socket: it never meets a system pgbouncer the Debian package may run
    (/etc/pgbouncer, port 6432). Any database name is passed through to the
    cluster under the same name.

    In ``transaction`` mode (the default), PgBouncer 1.18 keeps no prepared
    statements, so psycopg needs ``prepare_threshold=None``, and LISTEN
    cannot work through it. It also refuses the ``options`` startup
    parameter, which is how a ``search_path`` usually travels: ignoring it
    instead would silently drop the search_path, so it is refused unless a
    test asks otherwise with ``ignore_startup_parameters``.
    """

    def __init__(
        self,
        folder: Path,
        cluster: PrivateCluster,
        port: int,
        *,
        pool_mode: str,
        ignore_startup_parameters: Sequence[str],
    ) -> None:
        self.folder = folder
        self.cluster = cluster
        self.port = port
        self.pool_mode = pool_mode
        self.ignore_startup_parameters = tuple(ignore_startup_parameters)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        return self.folder / "pgbouncer.ini"

    @property
    def log(self) -> Path:
        return self.folder / "pgbouncer.log"

    @property
    def url(self) -> str:
        return self.url_for("postgres")

    def url_for(self, dbname: str) -> str:
        """A database of the cluster, through PgBouncer (``pgbouncer`` is its admin console)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def __repr__(self) -> str:
        return f"PgBouncer(port={self.port}, cluster={self.cluster!r})"

    @classmethod
    def start(
        cls,
        cluster: PrivateCluster,
        folder: Path,
        *,
        pool_mode: str = "transaction",
        ignore_startup_parameters: Sequence[str] = ("extra_float_digits",),
        attempts: int = 3,
    ) -> PgBouncer:
        """Start PgBouncer in front of ``cluster`` and return once it serves a query."""
        binary = pgbouncer_binary()
        folder = own_folder(folder)
        bouncer = cls(
            folder,
            cluster,
            free_port(),
            pool_mode=pool_mode,
            ignore_startup_parameters=ignore_startup_parameters,
        )
        bouncer._write(folder / "userlist.txt", '"postgres" ""\n')
        for attempt in range(attempts):
            try:
                bouncer._launch(binary)
                return bouncer
            except ClusterError as error:
                bouncer.stop()
                taken = "Address already in use" in str(error)
                if not taken or attempt == attempts - 1:
                    raise
                bouncer.port = free_port()
        raise AssertionError("unreachable")

    def retarget(self, cluster: PrivateCluster) -> None:
        """Send new server connections to ``cluster`` (after a failover); old ones are closed.

        ``RELOAD`` on the admin console: PgBouncer closes the server
        connections of a database whose settings changed, once they are idle.
        """
        self.cluster = cluster
        self._write_config()
        self.admin("RELOAD")

    def admin(self, command: str) -> list[tuple[Any, ...]]:
        """A command on PgBouncer's admin console (``SHOW POOLS``, ``RELOAD``, ...)."""
        import psycopg

        with psycopg.connect(
            self.url_for("pgbouncer"), autocommit=True, prepare_threshold=None, connect_timeout=5
        ) as conn:
            cursor = conn.execute(command)
            return list(cursor.fetchall()) if cursor.description else []

    def stop(self) -> None:
        """SIGTERM (immediate shutdown) to the PgBouncer we started; SIGKILL if it lingers."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def destroy(self) -> None:
        """Stop, then remove the folder."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.destroy()

    # inside
    def _launch(self, binary: str) -> None:
        """Run PgBouncer in the foreground as our own child, so it is stopped by its pid.

        Its log goes to stderr, which is ``pgbouncer.log`` (no ``logfile``, or each line twice).
        """
        self._write_config()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [binary, str(self.config)],
                cwd=self.folder,
                env=_child_env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                **_owner_kwargs(),
            )
        wait_until(
            self._serves,
            timeout=START_TIMEOUT,
            what=f"PgBouncer on 127.0.0.1:{self.port} answers",
            log=self.log,
        )

    def _serves(self) -> bool:
        process = self.process
        if process is None or process.poll() is not None:
            code = None if process is None else process.returncode
            raise ClusterError(f"PgBouncer exited ({code}) before it answered\n{_tail(self.log)}")
        import psycopg

        try:
            self.admin("SHOW VERSION")
        except psycopg.OperationalError:
            return False
        return True

    def _write_config(self) -> None:
        ignored = ",".join(self.ignore_startup_parameters)
        self._write(
            self.config,
            "[databases]\n"
            f"* = host=127.0.0.1 port={self.cluster.port}\n"
            "\n[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            f"pidfile = {self.folder / 'pgbouncer.pid'}\n"
            "auth_type = trust\n"
            f"auth_file = {self.folder / 'userlist.txt'}\n"
            "admin_users = postgres\n"
            "stats_users = postgres\n"
            f"pool_mode = {self.pool_mode}\n"
            "max_client_conn = 100\n"
            "default_pool_size = 20\n"
            f"ignore_startup_parameters = {ignored}\n"
            # A server that was down is tried again within a second, not 15.
            "server_login_retry = 1\n"
            "server_connect_timeout = 5\n",
        )

    def _write(self, path: Path, text: str) -> None:
        path.write_text(text)
        owner = _owner()
        if owner is not None:
            os.chown(path, owner.pw_uid, owner.pw_gid)


@contextlib.contextmanager
def pgbouncer_for(cluster: PrivateCluster, **options: Any) -> Iterator[PgBouncer]:
    """PgBouncer in front of ``cluster`` in a temp folder of its own, stopped at the end."""
    with temp_folder("pgb-") as folder, PgBouncer.start(cluster, folder, **options) as bouncer:
        yield bouncer
