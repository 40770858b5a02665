"""Push events of GitHub, GitLab and Gitea, parsed into one :class:`PushEvent`, and their
repository-deleted events (GitHub and Gitea ``repository`` with action ``deleted``,
GitLab's system hook ``project_destroy``) into :class:`RepoDeleted`.

Parsing is strict: a field we act on that is missing or of the wrong type is a
:class:`~semgraph.errors.PayloadError` (the web layer answers 400), never a guess.
Events we do not act on become :class:`Ignored` with a reason; ``ping`` becomes :class:`Ping`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from semgraph.errors import PayloadError

HOSTS = ("github", "gitlab", "gitea")
ZERO_SHA = re.compile(r"^0+$")
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_NAME_CHARS = 512
MAX_URL_CHARS = 2048
MAX_REF_CHARS = 1024


@dataclass(frozen=True)
class RepoIdentity:
    """Who a delivery claims to be about: used to pick the secret and check the allowlist."""

    full_name: str | None
    urls: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every name this repository may be configured under (full name first)."""
        return ((self.full_name,) if self.full_name else ()) + self.urls


@dataclass(frozen=True)
class PushEvent:
    host: str
    full_name: str
    clone_url: str
    ref: str
    commit: str
    deleted: bool
    default_branch: str | None
    urls: tuple[str, ...] = field(default=())

    @property
    def branch(self) -> str | None:
        return self.ref[len("refs/heads/") :] if self.ref.startswith("refs/heads/") else None

    @property
    def tag(self) -> str | None:
        return self.ref[len("refs/tags/") :] if self.ref.startswith("refs/tags/") else None


@dataclass(frozen=True)
class RepoDeleted:
    """The host deleted a repository. ``clone_url`` is None when the event names none
    (GitLab's ``project_destroy`` carries only ``path_with_namespace``)."""

    host: str
    full_name: str
    clone_url: str | None
    urls: tuple[str, ...] = field(default=())
    commit: None = None  # what an answer about a push reports; a deletion names no commit


@dataclass(frozen=True)
class Ping:
    host: str


@dataclass(frozen=True)
class Ignored:
    reason: str


Hook = PushEvent | RepoDeleted | Ping | Ignored


def decode_json(body: bytes) -> dict[str, Any]:
    """The JSON object in ``body`` (UTF-8), or :class:`PayloadError`."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PayloadError("body is not UTF-8 JSON") from exc
    except RecursionError as exc:
        raise PayloadError("body is nested too deeply") from exc
    except ValueError as exc:
        raise PayloadError(f"body is not valid JSON ({str(exc)[:120]})") from exc
    if not isinstance(data, dict):
        raise PayloadError(f"body must be a JSON object, not {type(data).__name__}")
    return data


def _text(data: dict[str, Any], key: str, where: str, limit: int, required: bool = True) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value:
        raise PayloadError(f"missing or non-string field {where}{key}")
    if len(value) > limit or _CONTROL.search(value):
        raise PayloadError(f"field {where}{key} is too long or has control characters")
    return value


def _obj(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise PayloadError(f"missing or non-object field {key}")
    return value


def _clean(value: object, limit: int) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value) <= limit and not _CONTROL.search(value)


def _optional_urls(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for key in keys:
        value = obj.get(key)
        if _clean(value, MAX_URL_CHARS):
            out.append(value)
    return tuple(out)


def _sha(data: dict[str, Any], key: str) -> str:
    value = _text(data, key, "", 64).lower()
    if not _SHA.match(value):
        raise PayloadError(f"field {key} is not a commit id")
    return value


def _ref(data: dict[str, Any]) -> str:
    ref = _text(data, "ref", "", MAX_REF_CHARS)
    if not ref.startswith("refs/"):
        raise PayloadError("field ref must be a full ref name (refs/...)")
    return ref


_REPO_KEYS = {
    "github": ("repository", "full_name", ("clone_url", "ssh_url", "html_url", "git_url")),
    "gitea": ("repository", "full_name", ("clone_url", "ssh_url", "html_url")),
    "gitlab": ("project", "path_with_namespace", ("git_http_url", "git_ssh_url", "web_url")),
}


def repo_identity(host: str, data: dict[str, Any]) -> RepoIdentity:
    """The repository a delivery names (for any event type; empty when it names none)."""
    container, name_key, url_keys = _REPO_KEYS[host]
    repo = data.get(container)
    if host == "gitlab" and repo is None and data.get("event_name") == "project_destroy":
        repo = data  # a system hook names the project at the top level
    if not isinstance(repo, dict):
        return RepoIdentity(None)
    name = repo.get(name_key)
    full_name = name if _clean(name, MAX_NAME_CHARS) else None
    return RepoIdentity(full_name, _optional_urls(repo, url_keys))


def _push(host: str, data: dict[str, Any], deleted: bool) -> PushEvent:
    container, name_key, url_keys = _REPO_KEYS[host]
    repo = _obj(data, container)
    full_name = _text(repo, name_key, f"{container}.", MAX_NAME_CHARS)
    clone_url = _text(repo, url_keys[0], f"{container}.", MAX_URL_CHARS)
    default = repo.get("default_branch")
    ref = _ref(data)
    commit = "0" * 40 if deleted else _sha(data, "after")
    return PushEvent(
        host=host,
        full_name=full_name,
        clone_url=clone_url,
        ref=ref,
        commit=commit,
        deleted=deleted,
        default_branch=default if isinstance(default, str) and default else None,
        urls=_optional_urls(repo, url_keys),
    )


def _deleted(host: str, data: dict[str, Any]) -> RepoDeleted:
    container, name_key, url_keys = _REPO_KEYS[host]
    repo = data if host == "gitlab" else _obj(data, container)
    where = "" if host == "gitlab" else f"{container}."
    full_name = _text(repo, name_key, where, MAX_NAME_CHARS)
    clone_url = None if host == "gitlab" else _text(repo, url_keys[0], where, MAX_URL_CHARS)
    return RepoDeleted(host, full_name, clone_url, _optional_urls(repo, url_keys))


def _after_is_zero(data: dict[str, Any]) -> bool:
    after = data.get("after")
    return isinstance(after, str) and bool(ZERO_SHA.match(after))


def parse_github(event: str | None, data: dict[str, Any]) -> Hook:
    if event == "ping":
        return Ping("github")
    if event == "repository" and data.get("action") == "deleted":
        return _deleted("github", data)
    if event != "push":
        return Ignored(f"GitHub event {str(event)[:64]!r} is not acted on")
    deleted = data.get("deleted") is True or _after_is_zero(data)
    return _push("github", data, deleted)


def parse_gitea(event: str | None, data: dict[str, Any]) -> Hook:
    if event == "repository" and data.get("action") == "deleted":
        return _deleted("gitea", data)
    if event != "push":
        return Ignored(f"Gitea event {str(event)[:64]!r} is not acted on")
    return _push("gitea", data, _after_is_zero(data))


def parse_gitlab(event: str | None, data: dict[str, Any]) -> Hook:
    if event not in {"Push Hook", "Tag Push Hook", "System Hook"}:
        return Ignored(f"GitLab event {str(event)[:64]!r} is not acted on")
    kind = data.get("object_kind", data.get("event_name"))
    if event == "System Hook" and kind == "project_destroy":
        return _deleted("gitlab", data)
    if kind not in {"push", "tag_push"}:
        return Ignored(f"GitLab object_kind {str(kind)[:64]!r} is not acted on")
    return _push("gitlab", data, _after_is_zero(data))


PARSERS = {"github": parse_github, "gitlab": parse_gitlab, "gitea": parse_gitea}


def parse_event(host: str, event: str | None, data: dict[str, Any]) -> Hook:
    """The hook a delivery carries (``PayloadError`` when a push lacks what we need)."""
    return PARSERS[host](event, data)
