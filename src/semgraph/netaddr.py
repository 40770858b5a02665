"""Which host names and addresses are provably this machine's own."""

from __future__ import annotations

import ipaddress


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` is provably loopback: ``localhost``, 127.0.0.0/8 or ::1 (never
    ``0.0.0.0``, a host name or a routable address)."""
    text = host.strip().strip("[]")
    if text.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False
