"""Start, stop and inspect the local Elasticsearch and Bolt graph server together.

Idempotent: ``up`` on a running, healthy stack is a no-op; ``down`` stops only processes
named by our pid files whose command line carries our state directory.
"""

from __future__ import annotations

from semgraph.config import Settings
from semgraph.errors import ServiceError
from semgraph.services.bolt import BoltService
from semgraph.services.es import ElasticsearchService
from semgraph.services.service import Service, ServiceState


class Stack:
    """Both local services, driven together."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.services: list[Service] = [ElasticsearchService(settings), BoltService(settings)]

    def up(self) -> list[ServiceState]:
        self.settings.state_dir.mkdir(parents=True, exist_ok=True)
        started = [(svc, svc.start()) for svc in self.services]
        for svc, proc in started:
            try:
                svc.wait_healthy(proc, self.settings.services_start_timeout_s)
            except ServiceError:
                if proc is not None:
                    svc.stop()
                raise
        return self.status()

    def down(self) -> list[str]:
        return [svc.name for svc in self.services if svc.stop()]

    def status(self) -> list[ServiceState]:
        return [svc.state() for svc in self.services]
