"""Demo data for the local stack: two tenants, so tenant isolation is visible.

Loaded through the data-access layer (never raw table items), into the tables named by the
environment (AUTH_TABLE, KNOWLEDGE_TABLE) that the local stack sets from template.yaml.
"""

from datetime import timedelta
from typing import Any

from local.demo_cad import seed_cad_connector
from local.demo_knowledge import seed_knowledge_cards
from local.demo_media import seed_media
from local.demo_resource_center import seed_resource_center
from local.demo_sample_events import seed_sample_event_records
from local.demo_tenant_data import seed_tenant_data
from psap.auth import store as credentials
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.issuing import ADMIN_EXPIRY_DEFAULT_DAYS
from psap.auth.permissions import Permission
from psap.clock import utc_now
from psap.knowledge.models import KnowledgeSource, KnowledgeType
from psap.knowledge.store import NewEntry, create_entry

P = Permission
# One credential of each kind a partner demo needs; names are the keys of stack.json.
DEMO_CREDENTIALS: dict[str, tuple[CredentialKind, frozenset[Permission]]] = {
    "admin": (CredentialKind.PARTNER, frozenset(Permission)),
    "readOnly": (
        CredentialKind.PARTNER,
        frozenset({P.VIEW_KNOWLEDGE, P.BROWSE_EVENTS, P.VIEW_QA}),
    ),
    "noKnowledge": (
        CredentialKind.PARTNER,
        frozenset({P.MANAGE_USERS, P.MANAGE_PHASES, P.BROWSE_EVENTS}),
    ),
    "cad": (CredentialKind.CAD, frozenset()),
}

G, IC = KnowledgeType.GUIDE_CARD, KnowledgeType.INSTRUCTION_CARD
DEMO_KNOWLEDGE: dict[str, list[tuple[str, str, KnowledgeType, str]]] = {
    "Riverside County 911": [
        ("Abdominal Pain", "NENA-Standards", G, "gc-abdominal-pain"),
        ("Breathing Problems", "NENA-Standards", G, "gc-breathing"),
        ("Cardiac Arrest", "NENA-Standards", G, "gc-cardiac-arrest"),
        ("Chest Pain", "NENA-Standards", G, "gc-chest-pain"),
        ("Choking", "NENA-Standards", G, "gc-choking"),
        ("Structure Fire", "NENA-Standards", G, "gc-structure-fire"),
        ("Traffic Collision", "NENA-Standards", G, "gc-traffic-collision"),
        ("CPR Instructions (Adult)", "NENA-Standards", IC, "ic-cpr-adult"),
        ("Bleeding Control", "NENA-Standards", IC, "ic-bleeding-control"),
        ("Childbirth Instructions", "NENA-Standards", IC, "ic-childbirth"),
        ("Flood Evacuation Routes", "Riverside-Internal", KnowledgeType.POLICY, "pol-flood"),
        (
            "Shift Briefing: Highway 9 Closure",
            "Riverside-Internal",
            KnowledgeType.MEMO_BRIEFING,
            "memo-hwy9",
        ),
    ],
    "Lakeshore Emergency Communications": [
        ("Water Rescue", "Lakeshore-Internal", G, "gc-water-rescue"),
        ("Ice Rescue", "Lakeshore-Internal", G, "gc-ice-rescue"),
        ("Drowning: Rescue Breathing", "Lakeshore-Internal", IC, "ic-rescue-breathing"),
    ],
}


def seed() -> dict[str, Any]:
    """Creates the demo tenants and returns the facts stack.json publishes."""
    tenants: list[dict[str, Any]] = []
    for name, entries in DEMO_KNOWLEDGE.items():
        tenant = credentials.create_tenant(name)
        tokens: dict[str, str] = {}
        credential_ids: dict[str, str] = {}
        for label, (kind, permissions) in DEMO_CREDENTIALS.items():
            issued = credentials.issue_credential(
                tenant.tenant_id,
                kind,
                permissions,
                label=f"demo {label}",
                # Every credential expires; a local stack lives far shorter than this.
                expires_at=utc_now() + timedelta(days=ADMIN_EXPIRY_DEFAULT_DAYS),
                issued_by=OPERATOR,
            )
            tokens[label] = issued.token
            credential_ids[label] = issued.credential.credential_id
        ids = []
        for title, provider, knowledge_type, external_id in entries:
            entry = create_entry(
                tenant.tenant_id,
                NewEntry(title, provider, knowledge_type, external_id=external_id),
                utc_now(),
            )
            ids.append(entry.id)
        ids.extend(seed_knowledge_cards(tenant.tenant_id, name))
        # Adopted inside the service, not through the API: the list must not show it.
        create_entry(
            tenant.tenant_id,
            NewEntry(
                f"{name} Radio Procedures",
                "Service-Internal",
                KnowledgeType.GENERAL_KNOWLEDGE,
                source=KnowledgeSource.SERVICE,
            ),
            utc_now(),
        )
        tenants.append(
            {"id": tenant.tenant_id, "name": name, "credentials": tokens, "knowledgeIds": ids}
        )
        tenants[-1]["tenantData"] = seed_tenant_data(tenant.tenant_id, len(tenants) - 1)
        tenants[-1]["cadConnector"] = seed_cad_connector(tenant.tenant_id, name)
        tenants[-1]["media"] = seed_media(tenant.tenant_id, tenants[-1]["tenantData"]["eventIds"])
        if len(tenants) == 1:
            connector = tenants[-1]["cadConnector"] or {}
            tenants[-1]["sampleEvents"] = seed_sample_event_records(
                tenant.tenant_id, credential_ids["admin"], connector.get("connectorId")
            )
    resource_center = seed_resource_center([tenant["id"] for tenant in tenants])
    return {"tenants": tenants, "resourceCenter": resource_center}
