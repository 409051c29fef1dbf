"""Rule 2 of the spec's "List knowledge entries": the list is how a partner finds the `id` of
an entry no create answered (one adopted outside the API), and that id is the one the later
calls take."""

import pytest

from psap.clock import utc_now
from psap.knowledge.models import KnowledgeSource, KnowledgeType
from psap.knowledge.store import NewEntry, create_entry
from tests.support.knowledge import ALL_API, TENANT, KnowledgeApi, card_payload

pytestmark = pytest.mark.harness(api=KnowledgeApi)


@pytest.mark.spec("knowledge-list-rule-2")
def test_the_list_gives_the_id_of_an_entry_adopted_outside_the_api(api: KnowledgeApi) -> None:
    # Given a card the partner created, and one an operator loaded inside the service
    created = api.created(card_payload())
    adopted = NewEntry(
        "Radio Codes",
        "NENA",
        KnowledgeType.POLICY,
        external_id="pol-radio-codes",
        source=KnowledgeSource.API_IMPORT,
    )
    adopted_id = create_entry(TENANT, adopted, utc_now()).id
    # When the partner lists its entries
    listing = api.listing()
    # Then both are there, the adopted one found by its externalId with its id
    ids = {item["externalId"]: item["id"] for item in listing["items"]}
    assert ids == {"gc-chest-pain": created["id"], "pol-radio-codes": adopted_id}
    # ... and that id is the one an append takes: it becomes the entry's version 1
    appended = api.appended(
        ids["pol-radio-codes"],
        {"apiControl": ALL_API, "questionList": [{"questionText": "Which channel?"}]},
    )
    assert (appended["id"], appended["version"]) == (adopted_id, 1)
