"""Demo resource-center catalog for the local stack: a few hundred items for 911 work.

Coaching content (protocol refreshers and call-review scenarios per call type, call-taking,
radio, QA and wellness coaching) and help articles (CAD how-tos, mapping and location,
phones and text, platform help, quick-reference cards, troubleshooting). Deterministic: the
same records every run, so the labeled relevance set (tests/data) can name items by
externalId. Loaded through the same JSON Lines import as the admin CLI, then indexed
in-process so that search works as soon as the stack is up. The content is data:
local/demo_data/resource_center_{protocols,skills,articles,drafts}.jsonl.
"""

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local.demo_data import read_records
from psap.clock import utc_now
from psap.config import search_index_bucket
from psap.resource_center import catalog, store

if TYPE_CHECKING:
    from psap.resource_center.engine.artifact import IndexArtifact
    from psap.resource_center.models import CatalogItem, CatalogRecord

COACHING = "COACHING_CONTENT"
HELP = "HELP_ARTICLE"
SITE = "https://resources.example.com"
THUMBNAILS = "https://cdn.example.com/resource-center/thumbnails"

# Licenses the demo catalog uses (two articles also name the NG911 Toolkit in their data);
# tenant 1 holds the first two, tenant 2 none.
PROTOCOL_LICENSE = "Protocol Coaching Library"
REVIEW_LICENSE = "Call Review Library"
WELLNESS_LICENSE = "Telecommunicator Wellness Series"
DEMO_LICENSES: dict[int, tuple[str, ...]] = {0: (PROTOCOL_LICENSE, REVIEW_LICENSE), 1: ()}
# Embeddings of an earlier demo index (git-ignored): a restart re-embeds only what changed.
CACHE_FOLDER = Path(__file__).resolve().parent.parent / ".local" / "cache"
EMBEDDING_CACHE = CACHE_FOLDER / "resource-center-demo-index.npz"
# When the in-memory demo catalog says its items were written and indexed.
CATALOG_TIME = "2026-01-15T08:30:00.000Z"


@dataclass(frozen=True)
class Protocol:
    slug: str
    name: str
    also: str  # what callers and call-takers also call it
    scenario: str
    questions: tuple[str, ...]
    instructions: tuple[str, ...]
    pitfalls: tuple[str, ...]


@dataclass(frozen=True)
class Skill:
    slug: str
    category: str
    title: str
    summary: str
    body: str


@dataclass(frozen=True)
class Article:
    slug: str
    category: str
    title: str
    summary: str
    steps: tuple[str, ...]
    note: str = ""
    license: str | None = None


# The content is in local/demo_data: one protocol, coaching skill or help article a line.
PROTOCOLS: tuple[Protocol, ...] = tuple(
    Protocol(
        **{
            **record,
            "questions": tuple(record["questions"]),
            "instructions": tuple(record["instructions"]),
            "pitfalls": tuple(record["pitfalls"]),
        }
    )
    for record in read_records("resource_center_protocols")
)
SKILLS: tuple[Skill, ...] = tuple(
    Skill(**record) for record in read_records("resource_center_skills")
)
ARTICLES: tuple[Article, ...] = tuple(
    Article(**{**record, "steps": tuple(record["steps"])})
    for record in read_records("resource_center_articles")
)
# Whole records, unpublished: the drafts never searchable.
DRAFT_RECORDS: tuple[dict[str, Any], ...] = tuple(read_records("resource_center_drafts"))


def _record(
    external_id: str,
    item_type: str,
    title: str,
    *,
    summary: str,
    body: str,
    category: str,
    license_name: str | None,
) -> dict[str, Any]:
    return {
        "externalId": external_id,
        "itemType": item_type,
        "title": title,
        "summary": summary,
        "body": body,
        "category": category,
        "thumbnailUrl": f"{THUMBNAILS}/{external_id}.png",
        "url": f"{SITE}/items/{external_id}",
        "requiredLicenseName": license_name,
        "published": True,
    }


def _sentences(items: tuple[str, ...]) -> str:
    return " ".join(f"{item.rstrip('.?')}." if not item.endswith("?") else item for item in items)


def _protocol_records(protocol: Protocol) -> Iterator[dict[str, Any]]:
    name, also = protocol.name, protocol.also
    yield _record(
        f"coach-{protocol.slug}-refresher",
        COACHING,
        f"Protocol Refresher: {name}",
        summary=f"Key questions, pre-arrival instructions and common pitfalls for {name.lower()} "
        f"calls ({also}).",
        body=f"{name} calls are also reported as {also}. Verify the location and callback number "
        f"first, then work the protocol. Key questions: {_sentences(protocol.questions)} "
        f"Pre-arrival instructions: {_sentences(protocol.instructions)} "
        f"Common pitfalls: {_sentences(protocol.pitfalls)} Coaching tip: read each key "
        "question as written and give instructions step by step, confirming the caller "
        "completed each one.",
        category="Protocol Refreshers",
        license_name=PROTOCOL_LICENSE,
    )
    yield _record(
        f"coach-{protocol.slug}-scenario",
        COACHING,
        f"Call Review Scenario: {name}",
        summary=(
            f"A recorded {name.lower()} call reviewed step by step: {protocol.scenario.lower()}."
        ),
        body=f"Scenario: {protocol.scenario}. Listen to the call and score it. What went well: "
        f"the call-taker verified the address and asked: {protocol.questions[0]} "
        f"What to improve: {protocol.pitfalls[0]}. The protocol's instructions for this "
        f"call: {_sentences(protocol.instructions)} Discussion: how would you handle "
        f"a caller reporting {also.split(',')[0]}?",
        category="Call Review Scenarios",
        license_name=REVIEW_LICENSE,
    )
    yield _record(
        f"help-{protocol.slug}-quick-reference",
        HELP,
        f"Quick Reference Card: {name}",
        summary=f"Printable quick reference of the {name.lower()} key questions and instructions.",
        body=f"Open the {name} guide card from the incident's Protocol tab, or print this quick "
        f"reference for your console. Key questions: {_sentences(protocol.questions)} "
        f"Instructions: {_sentences(protocol.instructions)}",
        category="Quick Reference Cards",
        license_name=None,
    )


def _skill_record(skill: Skill) -> dict[str, Any]:
    category = skill.category
    license_name = WELLNESS_LICENSE if category == "Wellness and Resilience" else None
    return _record(
        f"coach-{skill.slug}",
        COACHING,
        skill.title,
        summary=skill.summary,
        body=skill.body,
        category=category,
        license_name=license_name,
    )


def _article_record(article: Article) -> dict[str, Any]:
    steps = " ".join(f"Step {number}: {step}." for number, step in enumerate(article.steps, 1))
    body = f"{article.summary} {steps}"
    if article.note:
        body += f" Note: {article.note}"
    return _record(
        f"help-{article.slug}",
        HELP,
        article.title,
        summary=article.summary,
        body=body,
        category=article.category,
        license_name=article.license,
    )


def catalog_records() -> list[dict[str, Any]]:
    """The demo catalog as JSON Lines records (what `resource-center import` reads)."""
    records: list[dict[str, Any]] = []
    for protocol in PROTOCOLS:
        records.extend(_protocol_records(protocol))
    records.extend(_skill_record(skill) for skill in SKILLS)
    records.extend(_article_record(article) for article in ARTICLES)
    records.extend(DRAFT_RECORDS)
    return records


def catalog_lines() -> list[str]:
    return [json.dumps(record, ensure_ascii=False) for record in catalog_records()]


def cached_index() -> "IndexArtifact | None":
    """The demo index saved by an earlier start, if it is there and readable."""
    from psap.resource_center.engine import artifact  # noqa: PLC0415 - heavy engine

    try:
        return artifact.from_bytes(EMBEDDING_CACHE.read_bytes())
    except (OSError, ValueError, KeyError):
        return None


def save_cached_index(index: "IndexArtifact") -> None:
    from psap.resource_center.engine import artifact  # noqa: PLC0415 - heavy engine

    EMBEDDING_CACHE.parent.mkdir(parents=True, exist_ok=True)
    partial = EMBEDDING_CACHE.with_name(EMBEDDING_CACHE.name + ".partial")
    partial.write_bytes(artifact.to_bytes(index))
    partial.replace(EMBEDDING_CACHE)


def seed_resource_center(tenant_ids: list[int]) -> dict[str, Any]:
    """Loads the catalog, grants the demo licenses and imports, and builds the index (the
    first start embeds ~200 documents; later starts reuse the cached vectors)."""
    from psap.resource_center.indexing import rebuild_index  # noqa: PLC0415 - heavy engine

    started = time.perf_counter()
    now = utc_now()
    # The stack starts empty: batch writes, not one transaction per item (moto copies the
    # whole table for every transaction item, which made this take seconds).
    created = store.bulk_create([catalog.parse_line(text) for text in catalog_lines()], now)
    for position, tenant_id in enumerate(tenant_ids):
        for license_name in DEMO_LICENSES.get(position, ()):
            catalog.grant_license(tenant_id, license_name, now)
    if tenant_ids:
        # Tenant 1 imported two items; one of them changed since (update available).
        first = tenant_ids[0]
        catalog.record_import(first, "coach-cardiac-arrest-refresher", now)
        catalog.record_import(first, "help-ali-rebid", now)
        changed = next(r for r in catalog_records() if r["externalId"] == "help-ali-rebid")
        changed["body"] += " Tip: rebid again if the uncertainty radius is over 300 meters."
        catalog.import_catalog([json.dumps(changed)], now)
    loaded = time.perf_counter()
    cached = cached_index()
    rebuilt, index = rebuild_index(
        search_index_bucket(), reuse=[cached] if cached is not None else []
    )
    if rebuilt.embedded and index is not None:
        save_cached_index(index)
    print(
        f"resource center: {len(catalog_records())} catalog items in "
        f"{loaded - started:.1f} s; search index of {rebuilt.documents} documents "
        f"({rebuilt.embedded} embedded, {rebuilt.reused} from the cache) "
        f"in {rebuilt.seconds:.1f} s",
        flush=True,
    )
    return {
        "catalogItems": len(created),
        "indexedDocuments": rebuilt.documents,
        "embedded": rebuilt.embedded,
        "loadSeconds": round(loaded - started, 2),
        "indexSeconds": round(rebuilt.seconds, 2),
    }


def catalog_item(item_id: int, record: "CatalogRecord") -> "CatalogItem":
    """A record as the catalog stores it, version 1, at the demo's fixed time (the in-memory
    indexes of the relevance sets and the benchmark)."""
    from psap.resource_center.models import CatalogItem  # noqa: PLC0415

    return CatalogItem(
        id=item_id,
        version=1,
        content_hash=record.content_hash(),
        record=record,
        created_at=CATALOG_TIME,
        updated_at=CATALOG_TIME,
    )


def demo_catalog_items() -> "list[CatalogItem]":
    """The published demo records as catalog items with ids 1, 2, ... in catalog order."""
    from psap.resource_center.models import CatalogRecord  # noqa: PLC0415

    records = [CatalogRecord.model_validate(record) for record in catalog_records()]
    return [
        catalog_item(number, record)
        for number, record in enumerate(records, start=1)
        if record.published
    ]


def demo_index_in_memory() -> "tuple[IndexArtifact, list[str]]":
    """The demo catalog indexed without a table or bucket (relevance test, bench), reusing
    and refreshing the same embedding cache as the local stack. Returns the artifact and the
    externalId of each of its documents, by position."""
    from psap.resource_center.engine.builder import build_artifact  # noqa: PLC0415
    from psap.resource_center.engine.encoder import document_encoder  # noqa: PLC0415

    items = demo_catalog_items()
    cached = cached_index()
    index, stats = build_artifact(
        items, 1, CATALOG_TIME, encoder=document_encoder(), reuse=[cached] if cached else []
    )
    if stats.embedded:
        save_cached_index(index)
    by_id = {item.id: item.record.external_id for item in items}
    return index, [by_id[int(item_id)] for item_id in index.ids]
