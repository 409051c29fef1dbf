"""The CAD connection: webhook deliveries per second, the cost of signing, intake requests/s.

The receiver is the local stack's sample CAD receiver (local/cad_receiver.py) in its own
process on loopback: it checks the bearer credential, verifies every signature and timestamp
with the receiver kit, deduplicates by delivery id and parses the body. Figures:

- send path: what the dispatcher does per attempt on the wire (sign the stored body with a
  fresh timestamp, POST it over a kept-alive connection, read the answer), to the verifying
  receiver, from SENDERS threads sharing one client (as a dispatcher sends a batch's tenants
  side by side). Target >= 2 000 signed-and-verified deliveries/s.
- signed / unsigned: what signing costs the service per POST: the sender's CPU time, with
  ONE sender thread, in interleaved rounds. The unsigned baseline is the same delivery
  without what signing adds: it carries the delivery id and the event type (a receiver needs
  those to deduplicate and route whatever the authentication) but no X-SVC-Timestamp and no
  X-SVC-Signature. Both go to a path of the same receiver that takes a POST unverified but
  otherwise does the same work (bearer check, JSON parse, record), so the receiver answers
  both equally fast: measured against the verifying path, the sender's CPU grew with the
  receiver's verification time (more time blocked means colder caches and more scheduler
  work on a shared machine), which is the CAD's cost, not ours. With several sender threads
  the process's CPU time also counts GIL hand-offs. Target <= 1.2. Context printed beside
  it: the same ratio against a bare POST (Content-Type and Authorization only), and the
  wall-time ratio with four senders of verified signed POSTs to unsigned ones.
- isolation: tenant B's endpoint hangs (accepts, never answers) and B has 30 deliveries
  queued ahead of tenant A's one; two pollers (the least concurrency an SQS event source
  scales to) feed the real dispatcher handler batches of 10 from the queue. Figure: the time
  from A's update to A's receiver having it. Target <= 10 s.
- the whole dispatcher function in-process (its handler, SQS batches of 10), which adds two
  DynamoDB calls per delivery on in-process moto (the conditional claim, then one
  transaction with the attempt record): context only, as moto's emulation costs far more per
  call than DynamoDB does (and Lambda runs many dispatchers side by side).
- intake: POST /cad/v1/incidents through its handler in-process (moto DynamoDB + SQS).
"""

import contextlib
import copy
import json
import os
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from moto import mock_aws

from local.stack_process import free_port
from tools.bench.core import Options, Progress, Row, Section, median, quiet_functions, ratio_row
from tools.bench.functions import LambdaContext, function_module
from tools.bench.moto import create_template_resources, use_function_environment

ROOT = Path(__file__).resolve().parents[2]
TENANT = 1
SEND_ROUNDS, SEND_PER_ROUND = 3, 1200  # the throughput figure, SENDERS threads
CPU_POSTS = 6000  # per kind, for the CPU ratio: one sender thread, kinds alternating per POST
SENDERS = 4
DISPATCHER_DELIVERIES = 400
INTAKE_REQUESTS = 400
SEND_TARGET = 2000.0
RATIO_LIMIT = 1.2
HANGING_AHEAD = 30  # tenant B's deliveries queued before tenant A's
POLLERS = 2
ISOLATION_TARGET_SECONDS = 10.0
HEALTHY_TENANT, HANGING_TENANT = TENANT, TENANT + 1
BEARER = "bench-cad-issued-credential"
UNSIGNED_PATH = "/baseline/unsigned"
CONTEXT = LambdaContext()


def _environment() -> None:
    use_function_environment("CadIntakeFunction", "CadWorkerFunction", "WebhookDispatcherFunction")
    os.environ["WEBHOOK_LOCAL_DEV"] = "true"  # the receiver is on loopback, over http


def _load(directory: str) -> Any:
    return function_module(directory, f"bench_cad_{directory}")


@contextlib.contextmanager
def _receiver(secret: str, port: int, path: str) -> Iterator[str]:
    environment = {**os.environ, "PYTHONPATH": f"{ROOT / 'layers' / 'shared'}{os.pathsep}{ROOT}"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "local.cad_receiver",
            "--port",
            str(port),
            "--path",
            path,
            "--secret",
            secret,
            "--bearer",
            BEARER,
            "--quiet",
            "--unsigned-path",
            UNSIGNED_PATH,
        ],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/received", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the sample CAD receiver did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextlib.contextmanager
def transactions_without_snapshots() -> Iterator[None]:
    """moto deep-copies a whole table for every item of a TransactWriteItems (its rollback
    copy), so a transaction costs O(table) there and O(1) in DynamoDB. The benchmark's
    transactions never fail, so the copy is skipped for tables while the dispatcher runs."""
    import moto.dynamodb.models as backend  # noqa: PLC0415 - moto internals, bench only
    from moto.dynamodb.models.table import Table  # noqa: PLC0415

    real = getattr(backend, "copy")  # noqa: B009 - the module moto imported as `copy`

    def deepcopy(value: Any, memo: Any = None) -> Any:
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    setattr(backend, "copy", types.SimpleNamespace(deepcopy=deepcopy))  # noqa: B010
    try:
        yield
    finally:
        setattr(backend, "copy", real)  # noqa: B010


def _timed(count: int, send: Callable[[int], int], senders: int = SENDERS) -> tuple[float, int]:
    """Seconds for `count` calls made by `senders` threads, and how many answered 200."""
    per_thread = count // senders
    accepted = [0] * senders

    def sender(number: int) -> None:
        for index in range(per_thread):
            accepted[number] += send(number * per_thread + index) == 200

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(senders)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, sum(accepted)


def run(options: Options) -> list[Row]:
    progress = Progress("cad")
    _environment()
    with mock_aws():
        create_template_resources()
        from psap.clock import utc_now  # noqa: PLC0415 - after the environment is set
        from psap.webhooks.connectors import NewConnector, create_connector  # noqa: PLC0415
        from psap.webhooks.signing import SigningProfile  # noqa: PLC0415

        port = free_port()
        path = f"/cad/{TENANT}/webhooks"
        connector = create_connector(
            TENANT,
            NewConnector(
                name="bench",
                url=f"http://127.0.0.1:{port}{path}",
                profile=SigningProfile.BASELINE,
                event_types=None,
                bearer_credential=BEARER,
                local_dev=True,
            ),
            now=utc_now(),
        )
        with _receiver(connector.signing_secret, port, path) as url:
            rows = _send_path(url, connector.connector.secret_name, progress)
            with quiet_functions():
                rows += _dispatcher(connector.connector.connector_id, progress)
                # moto copies the whole table per transaction (see above); DynamoDB does not.
                with transactions_without_snapshots():
                    rows += _isolation(connector.connector, progress)
        with quiet_functions():
            rows += _intake(progress)
    return rows


def _body() -> bytes:
    from psap.clock import utc_now  # noqa: PLC0415 - after the environment is set
    from psap.webhooks.catalogue import (  # noqa: PLC0415
        ConnectorTest,
        UpdateKind,
        WebhookUpdate,
        build_event,
        serialize,
    )

    data = ConnectorTest(connector_id="con-bench", message="x" * 600)  # ~1 KB, like updates
    return serialize(
        build_event(TENANT, WebhookUpdate(UpdateKind.CONNECTOR_TEST, data), now=utc_now())
    )


def _send_path(url: str, secret_name: str, progress: Progress) -> list[Row]:
    from psap.clock import utc_now  # noqa: PLC0415 - after the environment is set
    from psap.webhooks import secrets as vault  # noqa: PLC0415
    from psap.webhooks.signing import (  # noqa: PLC0415
        DELIVERY_ID_HEADER,
        EVENT_TYPE_HEADER,
        SignedMessage,
        SigningProfile,
        signature_headers,
    )
    from psap.webhooks.transport import OutboundClient  # noqa: PLC0415

    secrets = vault.read_secret(secret_name)
    body = _body()
    client = OutboundClient()
    plain = {"Content-Type": "application/json", "Authorization": f"Bearer {BEARER}"}

    def signed_to(target: str, index: int) -> int:
        now = utc_now()
        headers = signature_headers(
            SigningProfile.BASELINE,
            secrets.active_signing(now),
            SignedMessage(
                f"dlv-bench-{time.monotonic_ns()}-{index}",
                timestamp=int(now.timestamp()),
                body=body,
                event_type="connector.test",
            ),
        )
        return client.post(target, {**plain, **headers}, body, local_dev=True).status_code or 0

    def signed(index: int) -> int:
        """Signed, to the path that verifies the signature: the throughput figure."""
        return signed_to(url, index)

    # The baselines go to a path of the same receiver that takes a POST unverified but
    # otherwise does the same work (parses and records it).
    unsigned_url = url.rsplit("/cad/", 1)[0] + UNSIGNED_PATH

    def unsigned(index: int) -> int:
        """The same delivery without what signing adds (timestamp and signature headers)."""
        headers = {
            DELIVERY_ID_HEADER: f"dlv-bench-{time.monotonic_ns()}-{index}",
            EVENT_TYPE_HEADER: "connector.test",
        }
        return (
            client.post(unsigned_url, {**plain, **headers}, body, local_dev=True).status_code or 0
        )

    def bare(index: int) -> int:
        return client.post(unsigned_url, plain, body, local_dev=True).status_code or 0

    def signed_unverified(index: int) -> int:
        """Signed, to the path that takes it unverified: the CPU figure."""
        return signed_to(unsigned_url, index)

    for send in (signed, unsigned, bare, signed_unverified):
        _timed(400, send)
    progress(f"send path: {SEND_ROUNDS} interleaved rounds of {SEND_PER_ROUND} each way")
    signed_seconds = unsigned_seconds = 0.0
    accepted = baseline_accepted = 0
    for _ in range(SEND_ROUNDS):
        seconds, ok = _timed(SEND_PER_ROUND, signed)
        signed_seconds, accepted = signed_seconds + seconds, accepted + ok
        seconds, ok = _timed(SEND_PER_ROUND, unsigned)
        unsigned_seconds, baseline_accepted = unsigned_seconds + seconds, baseline_accepted + ok
    progress(f"sender CPU: {CPU_POSTS} POSTs of each kind, alternating one by one, 1 thread")
    kinds: list[tuple[str, Callable[[int], int]]] = [
        ("signed", signed_unverified),
        ("unsigned", unsigned),
        ("bare", bare),
    ]
    per_call: dict[str, list[float]] = {name: [] for name, _ in kinds}
    # Alternating per POST (not per round) spreads the drift of a shared machine evenly; each
    # POST's own thread CPU time, so a preemption does not count and the median is robust.
    for index in range(CPU_POSTS):
        for name, post in kinds[index % 3 :] + kinds[: index % 3]:
            started = time.thread_time()
            status = post(index)
            per_call[name].append(time.thread_time() - started)
            if status != 200:
                raise RuntimeError(f"{name}: a POST was answered {status}")
    per_post_us = {name: median(times) * 1e6 for name, times in per_call.items()}
    total = SEND_ROUNDS * SEND_PER_ROUND
    rate = total / signed_seconds
    return [
        Row(
            f"send path: signed deliveries/s, each verified by the receiver ({SENDERS} senders)",
            f"{rate:.0f}/s",
            f">= {SEND_TARGET:g}/s",
            rate >= SEND_TARGET and accepted == total,
        ),
        Row("  accepted by the receiver (signature checked)", f"{accepted}/{total}"),
        Row("unsigned POSTs/s, same client and receiver work", f"{total / unsigned_seconds:.0f}/s"),
        Row("  accepted by the receiver (unverified baseline)", f"{baseline_accepted}/{total}"),
        ratio_row(
            "signed / unsigned sender CPU per POST (1 thread, median, same receiver work: "
            "what signing costs us)",
            per_post_us["signed"],
            per_post_us["unsigned"],
            limit=RATIO_LIMIT,
        ),
        Row(
            "  sender CPU per POST: signed / unsigned / bare",
            f"{per_post_us['signed']:.0f} / {per_post_us['unsigned']:.0f} / "
            f"{per_post_us['bare']:.0f} us",
        ),
        Row(
            "  signed / bare POST (no delivery headers at all)",
            f"{per_post_us['signed'] / per_post_us['bare']:.3f}",
        ),
        Row(
            f"  signed and verified / unsigned wall time ({SENDERS} senders; the CAD's "
            "verification included)",
            f"{signed_seconds / unsigned_seconds:.3f}",
        ),
    ]


def _dispatcher(connector_id: str, progress: Progress) -> list[Row]:
    from psap.clock import utc_now  # noqa: PLC0415 - after the environment is set
    from psap.webhooks import store  # noqa: PLC0415
    from psap.webhooks.models import DeliveryStatus  # noqa: PLC0415

    progress(f"dispatcher handler: {DISPATCHER_DELIVERIES} deliveries in batches of 10")
    dispatcher = _load("webhook_dispatcher")
    body = _body()
    ids = [f"dlv-bench{index:06d}" for index in range(DISPATCHER_DELIVERIES)]
    for delivery_id in ids:
        new = store.NewDelivery(delivery_id, connector_id, "evt-bench", "connector.test", body)
        store.create_delivery(TENANT, new, utc_now())
    events = [
        {
            "Records": [
                _record({"tenantId": TENANT, "deliveryId": delivery_id, "attemptCount": 0})
                for delivery_id in ids[first : first + 10]
            ]
        }
        for first in range(0, len(ids), 10)
    ]
    with transactions_without_snapshots():
        started = time.perf_counter()
        for event in events:
            dispatcher.handler(event, CONTEXT)
        seconds = time.perf_counter() - started
    delivered = sum(
        store.get_delivery(TENANT, delivery_id).status is DeliveryStatus.DELIVERED
        for delivery_id in ids
    )
    return [
        Row(
            "dispatcher handler deliveries/s (+2 moto DynamoDB calls each)",
            f"{DISPATCHER_DELIVERIES / seconds:.0f}/s",
        ),
        Row("  delivered", f"{delivered}/{DISPATCHER_DELIVERIES}"),
    ]


class _HangingEndpoint:
    """Accepts connections and reads requests; never answers until closed."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.closing = threading.Event()
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"

    def _serve(self) -> None:
        while not self.closing.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self) -> None:
        self.closing.set()
        self.listener.close()
        for connection in self.held:
            connection.close()


def _isolation(healthy: Any, progress: Progress) -> list[Row]:
    """Tenant A's delay while tenant B's endpoint hangs, through the real dispatcher handler
    fed by POLLERS pollers from the (moto) webhook queue."""
    from psap.clock import utc_now  # noqa: PLC0415 - after the environment is set
    from psap.config import webhook_queue_url  # noqa: PLC0415
    from psap.storage.sqs import sqs  # noqa: PLC0415
    from psap.webhooks import store  # noqa: PLC0415
    from psap.webhooks.catalogue import ConnectorTest, UpdateKind, WebhookUpdate  # noqa: PLC0415
    from psap.webhooks.connectors import NewConnector, create_connector  # noqa: PLC0415
    from psap.webhooks.deliveries import emit_update  # noqa: PLC0415
    from psap.webhooks.models import DeliveryStatus  # noqa: PLC0415
    from psap.webhooks.signing import SigningProfile  # noqa: PLC0415

    progress(
        f"isolation: {HANGING_AHEAD} deliveries to a hanging endpoint queued ahead of another "
        f"tenant's one, {POLLERS} pollers"
    )
    dispatcher = _load("webhook_dispatcher")
    hanging = _HangingEndpoint()
    hanging_connector = create_connector(
        HANGING_TENANT,
        NewConnector(
            name="bench hanging",
            url=hanging.url,
            profile=SigningProfile.BASELINE,
            event_types=None,
            bearer_credential=BEARER,
            local_dev=True,
        ),
        now=utc_now(),
    ).connector
    connectors = {HANGING_TENANT: hanging_connector, HEALTHY_TENANT: healthy}

    def update(tenant: int, seed: str) -> str:
        (delivery_id,) = emit_update(
            tenant,
            WebhookUpdate(
                UpdateKind.CONNECTOR_TEST,
                ConnectorTest(connector_id=connectors[tenant].connector_id, message=seed),
            ),
            seed=seed,
            now=utc_now(),
            only_connector=connectors[tenant],
        )
        return delivery_id

    queue = webhook_queue_url()
    sqs().purge_queue(QueueUrl=queue)
    for index in range(HANGING_AHEAD):
        update(HANGING_TENANT, f"isolation-hang-{time.time_ns()}-{index}")
    produced = time.perf_counter()
    wanted = update(HEALTHY_TENANT, f"isolation-healthy-{time.time_ns()}")
    stop = threading.Event()

    def poller() -> None:
        while not stop.is_set():
            answer = sqs().receive_message(
                QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=0
            )
            messages = answer.get("Messages", [])
            if not messages:
                stop.wait(0.05)
                continue
            event = {
                "Records": [
                    {
                        **_record(json.loads(m["Body"])),
                        "messageId": m["MessageId"],
                        "body": m["Body"],
                    }
                    for m in messages
                ]
            }
            dispatcher.handler(event, CONTEXT)
            for message in messages:
                sqs().delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])

    threads = [threading.Thread(target=poller, daemon=True) for _ in range(POLLERS)]
    for thread in threads:
        thread.start()
    delay = float("inf")
    deadline = produced + 120
    while time.perf_counter() < deadline:
        delivery = store.get_delivery(HEALTHY_TENANT, wanted)
        if delivery.status is DeliveryStatus.DELIVERED and delivery.delivered_at is not None:
            delay = time.perf_counter() - produced
            break
        time.sleep(0.02)
    stop.set()
    hanging.close()
    for thread in threads:
        thread.join(timeout=30)
    return [
        Row(
            "isolation: tenant A's delivery delay while tenant B's endpoint hangs",
            f"{delay:.1f} s",
            f"<= {ISOLATION_TARGET_SECONDS:g} s",
            delay <= ISOLATION_TARGET_SECONDS,
        ),
        Row(f"  (B's deliveries queued ahead of A's: {HANGING_AHEAD}; pollers: {POLLERS})", "-"),
    ]


def _intake(progress: Progress) -> list[Row]:
    progress(f"intake: {INTAKE_REQUESTS} requests through the handler")
    intake = _load("cad_intake")
    template_event = json.loads((ROOT / "events" / "cad_intake.json").read_text())
    submission = json.loads(template_event["body"])
    template_event["requestContext"]["authorizer"]["tenantId"] = str(TENANT)
    submission["tenantId"] = TENANT

    def submit(index: int) -> int:
        event = json.loads(json.dumps(template_event))
        event["body"] = json.dumps({**submission, "id": f"bench-{index}"})
        status = int(intake.handler(event, CONTEXT)["statusCode"])
        return 200 if status == 202 else status

    submit(-1)
    # One at a time: a Lambda container handles one event at a time, and the handler's
    # request state (the resolver's context, the logger's keys) assumes it.
    seconds, accepted = _timed(INTAKE_REQUESTS, submit, senders=1)
    return [
        Row("intake requests/s in-process (moto)", f"{INTAKE_REQUESTS / seconds:.0f}/s"),
        Row("  answered 202", f"{accepted}/{INTAKE_REQUESTS}"),
        Row("  latency per request", f"{seconds / INTAKE_REQUESTS * 1000:.1f} ms"),
    ]


def _record(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "messageId": body["deliveryId"],
        "receiptHandle": "bench",
        "body": json.dumps(body),
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:bench-WebhookQueue",
        "awsRegion": "us-east-1",
    }


SECTION = Section("cad", "CAD connection: webhook deliveries and intake", run)
