"""The local Elasticsearch: the integ-test-zip distribution resolved from Maven Central,
unpacked under the state directory and run as an unprivileged user when we are root."""

from __future__ import annotations

import os
import pwd
import zipfile
from pathlib import Path

import httpx

from semgraph.errors import ServiceError
from semgraph.services.service import Service, java_home, mvn, run_command

ES_ARTIFACT = "org.elasticsearch.distribution.integ-test-zip:elasticsearch:{version}:zip"


def _unzip(archive: Path, dest: Path) -> None:
    """Unpack keeping the executable bits that ``zipfile`` drops."""
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            target = dest / info.filename
            if not target.resolve().is_relative_to(dest.resolve()):
                raise ServiceError(f"refusing zip entry outside {dest}: {info.filename}")
            zf.extract(info, dest)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                target.chmod(mode)


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    os.chown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, gid)


class ElasticsearchService(Service):
    name = "elasticsearch"

    @property
    def url(self) -> str:
        return self.settings.es_url

    def address(self) -> tuple[str, int]:
        return self.settings.es_host, self.settings.es_port

    @property
    def dist_dir(self) -> Path:
        return self.home / f"elasticsearch-{self.settings.es_version}"

    def _user(self) -> str | None:
        return self.settings.es_user if os.geteuid() == 0 else None

    def healthy(self) -> bool:
        try:
            resp = httpx.get(f"{self.url}/_cluster/health", timeout=2.0)
            return resp.status_code == 200 and resp.json().get("status") in {"green", "yellow"}
        except (httpx.HTTPError, ValueError):
            return False

    def _resolve_zip(self) -> Path:
        cache = self.settings.state_dir / "dist"
        archive = cache / f"elasticsearch-{self.settings.es_version}.zip"
        if archive.exists():
            return archive
        cache.mkdir(parents=True, exist_ok=True)
        artifact = ES_ARTIFACT.format(version=self.settings.es_version)
        run_command(
            [
                mvn(),
                "-B",
                "-q",
                "dependency:copy",
                f"-Dartifact={artifact}",
                f"-DoutputDirectory={cache}",
                "-Dmdep.overWriteIfNewer=true",
            ],
            f"resolve {artifact} from Maven Central",
            cwd=cache,
        )
        if not archive.exists():
            raise ServiceError(f"Maven did not produce {archive}")
        return archive

    def _ensure_user(self, user: str) -> None:
        try:
            pwd.getpwnam(user)
        except KeyError:
            run_command(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
                f"create unprivileged user {user!r} for Elasticsearch",
            )

    def prepare(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        for path in (self.settings.state_dir, self.home):
            path.chmod(0o755)
        if not (self.dist_dir / "bin" / "elasticsearch").exists():
            _unzip(self._resolve_zip(), self.home)
        for sub in ("data", "logs", "tmp"):
            (self.home / sub).mkdir(exist_ok=True)
        user = self._user()
        if user is not None:
            self._ensure_user(user)
            entry = pwd.getpwnam(user)
            _chown_tree(self.home, entry.pw_uid, entry.pw_gid)

    def launch_spec(self) -> tuple[list[str], dict[str, str], str | None]:
        s = self.settings
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "ES_JAVA_HOME": str(java_home(s)),
            "ES_JAVA_OPTS": f"-Xms{s.es_heap_mb}m -Xmx{s.es_heap_mb}m",
            "ES_TMPDIR": str(self.home / "tmp"),
            "LANG": "C.UTF-8",
        }
        settings = {
            "cluster.name": "semgraph-local",
            "node.name": "semgraph-local",
            "discovery.type": "single-node",
            "network.host": s.es_host,
            "http.port": str(s.es_port),
            "transport.port": str(s.es_port + 100),
            "xpack.security.enabled": "false",
            "cluster.routing.allocation.disk.threshold_enabled": "false",
            "path.data": str(self.home / "data"),
            "path.logs": str(self.home / "logs"),
        }
        argv = [str(self.dist_dir / "bin" / "elasticsearch")]
        for key, value in settings.items():
            argv += ["-E", f"{key}={value}"]
        return argv, env, self._user()
