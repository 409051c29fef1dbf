"""The offboarding archive: one .tar.gz of JSON Lines files (one per kind), a manifest with
each file's line count and SHA-256, and an HMAC-SHA-256 signature over the manifest.

The signature covers the manifest, and the manifest covers every file's bytes, so one
altered byte anywhere fails `verify_archive`. HMAC rather than a public-key signature: the
operator holds one archive key (PSAP_ARCHIVE_KEY or a key file) and hands it to the
center with the archive over another channel; no key service is needed offline.
"""

import hashlib
import hmac
import io
import json
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

MANIFEST: Final = "manifest.json"
SIGNATURE: Final = "manifest.sig"
FORMAT: Final = "psap-tenant-archive/1"


class ArchiveTampered(Exception):
    """An archive that does not verify; the message says which part."""


@dataclass(frozen=True)
class ArchiveFile:
    name: str  # "incidents.jsonl"
    path: Path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _lines(path: Path) -> int:
    with path.open("rb") as source:
        return sum(1 for _ in source)


def sign(manifest: bytes, key: bytes) -> str:
    return hmac.new(key, manifest, hashlib.sha256).hexdigest()


def write_archive(
    out: Path, tenant_id: int, files: Sequence[ArchiveFile], *, key: bytes, created_at: str
) -> dict[str, Any]:
    """Writes the archive at `out` (through a temporary name: a crash leaves no half
    archive under the final one) and returns its manifest."""
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "tenantId": tenant_id,
        "createdAt": created_at,
        "files": {
            file.name: {"records": _lines(file.path), "sha256": _sha256(file.path)}
            for file in files
        },
    }
    manifest_bytes = json.dumps(manifest, indent=2, sort_keys=True).encode()
    partial = out.with_name(out.name + ".partial")
    with tarfile.open(partial, "w:gz") as archive:
        _add_bytes(archive, MANIFEST, manifest_bytes)
        _add_bytes(archive, SIGNATURE, sign(manifest_bytes, key).encode())
        for file in files:
            archive.add(file.path, arcname=file.name)
    partial.replace(out)
    return manifest


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def verify_archive(path: Path, key: bytes) -> Mapping[str, Any]:
    """The manifest of an intact archive; ArchiveTampered otherwise."""
    try:
        with path.open("rb") as raw:
            data = raw.read()
        members = _members(data)
    except (OSError, tarfile.TarError, EOFError, ValueError) as error:
        raise ArchiveTampered(f"{path}: not a readable archive ({error})") from error
    manifest_bytes = members.pop(MANIFEST, None)
    signature = members.pop(SIGNATURE, None)
    if manifest_bytes is None or signature is None:
        raise ArchiveTampered(f"{path}: no signed manifest")
    if not hmac.compare_digest(sign(manifest_bytes, key).encode(), signature.strip()):
        raise ArchiveTampered(f"{path}: the manifest's signature does not match this key")
    manifest: dict[str, Any] = json.loads(manifest_bytes)
    listed: dict[str, Any] = manifest["files"]
    if set(listed) != set(members):
        raise ArchiveTampered(f"{path}: the files differ from the manifest's")
    for name, expected in listed.items():
        if hashlib.sha256(members[name]).hexdigest() != expected["sha256"]:
            raise ArchiveTampered(f"{path}: {name} differs from its SHA-256 in the manifest")
    return manifest


def _members(data: bytes) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            if not member.isfile() or member.name in members:
                raise ValueError(f"unexpected member {member.name!r}")
            extracted = archive.extractfile(member)
            if extracted is None:
                raise ValueError(f"unreadable member {member.name!r}")
            members[member.name] = extracted.read()
    return members
