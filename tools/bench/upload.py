"""Incident upload throughput: 10 000 CSV rows through the asynchronous path, end to end.

POST /api/v1/external/incidents/upload through its handler (the body goes to S3 and a job
is queued), then the worker function's handler for the queued message: it streams the file
from S3, parses and validates every row, and creates the incidents (two BatchGetItem per
100 rows, one sequence write per 100 rows, one transaction per new incident). Then the same
file again: every row UNCHANGED (reads only). In-process moto stands in for S3, SQS and
DynamoDB; moto copies a whole table for every transaction item (O(table), where DynamoDB is
O(1)), so that copy is skipped here as in the CAD section. moto's emulation costs more per
call than DynamoDB does: the figure is a floor for one worker, and Lambda runs one worker
per upload.
"""

import base64
import contextlib
import io
import json
import time
from pathlib import Path
from typing import Any

from moto import mock_aws

from tools.bench.cad import transactions_without_snapshots
from tools.bench.core import Options, Progress, Row, Section
from tools.bench.functions import LambdaContext, function_module
from tools.bench.moto import create_template_resources, use_function_environment

ROOT = Path(__file__).resolve().parents[2]
TENANT = 1
ROWS = 10_000
TARGET_ROWS_PER_SECOND = 100.0  # 50 000 rows within one worker's 15 minutes, with margin


CONTEXT = LambdaContext(memory_limit_in_mb=1024, remaining_millis=900_000)


def _environment() -> None:
    use_function_environment("IncidentUploadFunction", "IncidentUploadWorkerFunction")


def _load(directory: str) -> Any:
    return function_module(directory, f"bench_upload_{directory}")


def _csv(rows: int) -> str:
    lines = ["number,priority,incidentType,location,callerName,incidentDate,callReceivedTime\n"]
    lines += [
        f"B-{n:07d},{1 + n % 4},Medical,{100 + n} Main St,Caller {n},"
        f"2026-11-23T02:{n % 60:02d}:15Z,2026-11-23T02:{n % 60:02d}:05.250Z\n"
        for n in range(rows)
    ]
    return "".join(lines)


def _upload_event(body: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((ROOT / "events" / "incident_upload.json").read_text())
    event["body"] = base64.b64encode(body.encode()).decode()
    event["isBase64Encoded"] = True
    event["requestContext"]["authorizer"].update(tenantId=str(TENANT))
    return event


def _one_pass(upload: Any, worker: Any, body: str) -> tuple[float, dict[str, Any]]:
    """Seconds from the POST to the job's end, and the job."""
    from psap.config import incident_upload_queue_url  # noqa: PLC0415
    from psap.incidents.upload.service import get_upload  # noqa: PLC0415
    from psap.storage.sqs import sqs  # noqa: PLC0415

    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the audit line of the request
        answer = upload.handler(_upload_event(body), CONTEXT)
    if answer["statusCode"] != 202:
        raise RuntimeError(f"upload answered {answer['statusCode']}: {answer['body']}")
    upload_id = json.loads(answer["body"])["uploadId"]
    while True:
        messages = (
            sqs()
            .receive_message(QueueUrl=incident_upload_queue_url(), MaxNumberOfMessages=1)
            .get("Messages", [])
        )
        if not messages:
            break
        record = {
            "messageId": messages[0]["MessageId"],
            "receiptHandle": messages[0]["ReceiptHandle"],
            "body": messages[0]["Body"],
            "attributes": {"ApproximateReceiveCount": "1"},
            "messageAttributes": {},
            "md5OfBody": "",
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:bench",
            "awsRegion": "us-east-1",
        }
        with contextlib.redirect_stdout(io.StringIO()):
            worker.handler({"Records": [record]}, CONTEXT)
        sqs().delete_message(
            QueueUrl=incident_upload_queue_url(), ReceiptHandle=messages[0]["ReceiptHandle"]
        )
    seconds = time.perf_counter() - started
    job = get_upload(TENANT, upload_id).model_dump(mode="json", by_alias=True)
    return seconds, job


def run(options: Options) -> list[Row]:
    progress = Progress("incident-upload")
    _environment()
    body = _csv(ROWS)
    with mock_aws(), transactions_without_snapshots():
        create_template_resources()
        upload, worker = _load("incident_upload"), _load("incident_upload_worker")
        progress(f"uploading {ROWS} rows ({len(body) // 1024} KB of CSV)")
        first, job = _one_pass(upload, worker, body)
        if job["status"] != "SUCCEEDED" or job["created"] != ROWS:
            raise RuntimeError(f"the upload did not create every row: {job}")
        progress(f"created {ROWS} in {first:.1f} s; the same file again")
        again, job = _one_pass(upload, worker, body)
        if job["unchanged"] != ROWS:
            raise RuntimeError(f"the re-upload changed rows: {job}")
    created_rate, unchanged_rate = ROWS / first, ROWS / again
    return [
        Row(
            f"async upload of {ROWS} new rows (parse + validate + store), rows/s",
            f"{created_rate:.0f} ({first:.1f} s)",
            f">= {TARGET_ROWS_PER_SECOND:g}",
            created_rate >= TARGET_ROWS_PER_SECOND,
        ),
        Row(
            f"the same {ROWS} rows again (all UNCHANGED, reads only), rows/s",
            f"{unchanged_rate:.0f} ({again:.1f} s)",
        ),
    ]


SECTION = Section("incident-upload", "Incident upload throughput", run)
