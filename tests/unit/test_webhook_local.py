"""The local stack's CAD pieces: the sample receiver's verdicts and the Schedule driver."""

import json
from typing import Any

import pytest

from local.cad_receiver import CadReceiver, Endpoint
from local.runtime import InvokeResult
from local.schedules import ScheduleDriver, schedule_events
from local.template import DEFAULT_TEMPLATE, load_template
from psap.webhooks.signing import SignedMessage, SigningProfile, presented_secret, signature_headers

RAW = bytes(range(32))
SECRET = presented_secret(RAW, SigningProfile.BASELINE)
BODY = json.dumps({"type": "incident.accepted", "data": {"receiptId": "rcpt-1"}}).encode()


def signed(delivery_id: str = "dlv-1", bearer: str = "token") -> dict[str, str]:
    import time

    headers = signature_headers(
        SigningProfile.BASELINE,
        [RAW],
        SignedMessage(
            delivery_id, timestamp=int(time.time()), body=BODY, event_type="incident.accepted"
        ),
    )
    return {
        name.lower(): value
        for name, value in {**headers, "Authorization": f"Bearer {bearer}"}.items()
    }


def receiver() -> CadReceiver:
    lines: list[str] = []
    running = CadReceiver(log=lines.append)
    running.register("/cad/1/webhooks", Endpoint(SECRET, "token"))
    return running


@pytest.mark.spec("events-duplicates-by-delivery-id", "webhook-profile-rule-4")
def test_the_sample_receiver_accepts_a_verified_delivery_then_flags_its_duplicate() -> None:
    cad = receiver()
    try:
        status, verdict = cad.judge("/cad/1/webhooks", signed(), BODY)
        assert (status, verdict.verdict) == (200, "ACCEPT")
        assert verdict.event is not None and verdict.event["type"] == "incident.accepted"
        status, again = cad.judge("/cad/1/webhooks", signed(), BODY)
        assert (status, again.verdict) == (200, "DUPLICATE")
    finally:
        cad.server.server_close()


@pytest.mark.spec("webhook-profile-rule-1", "webhook-profile-rule-4")
def test_the_sample_receiver_rejects_a_bad_signature_a_wrong_bearer_and_unknown_paths() -> None:
    cad = receiver()
    try:
        assert cad.judge("/cad/1/webhooks", signed(), BODY + b" ")[1].verdict == "REJECT"
        assert cad.judge("/cad/1/webhooks", signed(bearer="other"), BODY)[0] == 401
        assert cad.judge("/cad/2/webhooks", signed(), BODY)[0] == 404
    finally:
        cad.server.server_close()


def test_the_webhook_scheduler_runs_every_minute_locally() -> None:
    events = schedule_events(DEFAULT_TEMPLATE, load_template())
    # Every schedule of the template runs locally at its own rate: the audit sealer too.
    assert sorted((e.function_id, e.period_seconds) for e in events) == [
        ("AuditSealerFunction", 300),
        ("WebhookSchedulerFunction", 60),
    ]


def test_the_schedule_driver_invokes_the_function_with_a_scheduled_event() -> None:
    import threading

    from local.schedules import ScheduleEvent

    calls: list[tuple[str, Any]] = []
    called = threading.Event()

    def invoke(function_id: str, event: Any) -> InvokeResult:
        calls.append((function_id, event))
        called.set()
        return InvokeResult("ok")

    driver = ScheduleDriver([ScheduleEvent("Fn", "EveryTick", 0)], invoke)
    driver.start()
    assert called.wait(timeout=5)
    driver.stop()
    assert calls[0][0] == "Fn"
    assert calls[0][1]["detail-type"] == "Scheduled Event"
