"""Concurrent appends against a real moto server (`aws_server`), the way concurrent Lambda
invocations race: version numbers stay contiguous, none lost, none duplicated."""

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

from psap.knowledge import store
from psap.knowledge.authoring import append_version, create_knowledge
from psap.knowledge.content import KnowledgeAppendRequest, KnowledgeCreateRequest
from psap.knowledge.reading import get_knowledge
from psap.knowledge.records import KnowledgeVersion
from tests.support.knowledge import ALL_API, TENANT, card_payload

WRITERS = 20


def test_20_concurrent_appends_get_exactly_versions_2_to_21_each_readable(aws_server: str) -> None:
    # Given an entry at version 1
    entry = create_knowledge(TENANT, KnowledgeCreateRequest.model_validate(card_payload()), "test")
    kept = entry.spoken_instructions[0].reference_id
    start = Barrier(WRITERS)

    def append(writer: int) -> int:
        payload = {
            "apiControl": ALL_API,
            "questionList": [{"questionText": f"Written by writer {writer}"}],
            # Every writer keeps the same item: its id is in whichever version is previous
            "spokenInstructions": [{"referenceId": kept, "instructionText": f"Writer {writer}"}],
        }
        start.wait()
        result = append_version(
            TENANT,
            entry.id,
            KnowledgeAppendRequest.model_validate(payload),
            author=f"writer-{writer}",
        )
        assert result.version is not None
        return result.version

    # When 20 writers append at the same moment
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        versions = list(pool.map(append, range(WRITERS)))
    # Then each got its own number, exactly 2..21
    assert sorted(versions) == list(range(2, WRITERS + 2))
    assert get_knowledge(TENANT, entry.id, None).latest_version == WRITERS + 1
    # And every version is stored and readable, each with one writer's content, none lost
    writers = set()
    for version in range(2, WRITERS + 2):
        read = get_knowledge(TENANT, entry.id, KnowledgeVersion(version))
        assert read.version == version
        assert read.spoken_instructions[0].reference_id == kept
        writers.add(read.question_list[0].question_text)
        assert store.read_version_item(TENANT, entry.id, version) is not None
    assert writers == {f"Written by writer {writer}" for writer in range(WRITERS)}
    assert store.read_version_item(TENANT, entry.id, WRITERS + 2) is None
