"""What this server accepts from webhooks, read once from the settings: the secret of each
repository, the allowlist, which pushes are indexed and which clone sources are acceptable."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from semgraph.config import Settings
from semgraph.errors import ConfigError, PayloadError
from semgraph.web.payloads import PushEvent, RepoIdentity


def normalize_name(name: str) -> str:
    """Repository names and URLs compare case-insensitively, without ``.git`` or a slash."""
    text = name.strip().lower().rstrip("/")
    return text[: -len(".git")] if text.endswith(".git") else text


@dataclass(frozen=True)
class WebhookPolicy:
    default_secret: str | None
    secrets: dict[str, str]
    allowlist: frozenset[str]
    branches: tuple[str, ...]
    tag_pushes: bool
    allow_local_sources: bool
    remove_on_delete: bool = False  # a host's repository-deleted event queues its removal

    @classmethod
    def from_settings(cls, settings: Settings) -> WebhookPolicy:
        for name, secret in settings.webhook_secrets.items():
            if not secret.strip():
                raise ConfigError(f"SEMGRAPH_WEBHOOK_SECRETS: the secret for {name!r} is empty")
        if settings.webhook_secret is not None and not settings.webhook_secret.strip():
            raise ConfigError("SEMGRAPH_WEBHOOK_SECRET is set but empty")
        return cls(
            default_secret=settings.webhook_secret,
            secrets={normalize_name(k): v for k, v in settings.webhook_secrets.items()},
            allowlist=frozenset(normalize_name(n) for n in settings.webhook_allowlist),
            branches=tuple(settings.webhook_branches),
            tag_pushes=settings.webhook_tag_pushes,
            allow_local_sources=settings.webhook_allow_local_sources,
            remove_on_delete=settings.webhook_remove_on_delete,
        )

    def secret_for(self, identity: RepoIdentity) -> str | None:
        for name in identity.names:
            secret = self.secrets.get(normalize_name(name))
            if secret is not None:
                return secret
        return self.default_secret

    def allowed(self, identity: RepoIdentity) -> bool:
        if not self.allowlist:
            return True
        return any(normalize_name(n) in self.allowlist for n in identity.names)

    def ignore_reason(self, push: PushEvent) -> str | None:
        """Why we do not act on ``push``, or None when it should be indexed."""
        if push.deleted:
            return f"{push.ref} was deleted"
        if push.tag is not None:
            return None if self.tag_pushes else "tag pushes are not indexed"
        branch = push.branch
        if branch is None:
            return f"{push.ref} is neither a branch nor a tag"
        if self.branches:
            if any(fnmatch.fnmatchcase(branch, pattern) for pattern in self.branches):
                return None
            return f"branch {branch!r} does not match the configured branches"
        if push.default_branch is None:
            return "the payload does not name the default branch; configure branches"
        if branch != push.default_branch:
            return f"branch {branch!r} is not the default branch {push.default_branch!r}"
        return None

    def source_for(self, push: PushEvent) -> str:
        """The clone source for the job, refusing option-like or local ones unless allowed."""
        return self.source_for_url(push.clone_url)

    def source_for_url(self, url: str) -> str:
        """:meth:`source_for` of a clone URL (a push's, or a deleted repository's)."""
        if url.startswith("-"):
            raise PayloadError("clone URL must not start with '-'")
        lowered = url.lower()
        if lowered.startswith(("https://", "http://", "ssh://", "git://")):
            return url
        if lowered.startswith("file://") or url.startswith("/"):
            if self.allow_local_sources:
                return url
            raise PayloadError("local clone sources are not accepted by this server")
        if "@" in url and ":" in url.split("@", 1)[1]:  # scp-like git@host:org/repo.git
            return url
        raise PayloadError("clone URL must be https, http, ssh or git")
