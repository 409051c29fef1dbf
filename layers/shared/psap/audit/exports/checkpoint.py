"""Where a running export's file stands: what the next step of the worker goes on from."""

import json
from dataclasses import dataclass
from datetime import date

from psap.audit.chain import Link
from psap.audit.exports.models import ExportProgress
from psap.audit.store import ChainPosition
from psap.storage.s3 import UploadedPart


@dataclass
class Checkpoint:
    """Where a job's file stands after its last part: what the next step goes on from.
    Kept beside the job (the `checkpoint` attribute), never on the wire."""

    upload_id: str
    parts: list[UploadedPart]
    position: ChainPosition
    last: Link | None  # the last link in the file: its chain's head line is still due
    count: int = 0
    size: int = 0
    records_read: int = 0
    steps: int = 0

    def as_text(self) -> str:
        return json.dumps(
            {
                "uploadId": self.upload_id,
                "parts": [[part.number, part.etag] for part in self.parts],
                "day": self.position.day.isoformat(),
                "shard": self.position.shard,
                "afterSeq": self.position.after_seq,
                "last": None if self.last is None else self.last.as_json(),
                "count": self.count,
                "size": self.size,
                "recordsRead": self.records_read,
                "steps": self.steps,
            }
        )

    @classmethod
    def from_text(cls, text: str) -> "Checkpoint":
        raw = json.loads(text)
        last = raw["last"]
        return cls(
            upload_id=raw["uploadId"],
            parts=[UploadedPart(int(number), str(etag)) for number, etag in raw["parts"]],
            position=ChainPosition(
                date.fromisoformat(raw["day"]), int(raw["shard"]), int(raw["afterSeq"])
            ),
            last=None
            if last is None
            else Link(last["id"], int(last["seq"]), last["prev"], last["hash"]),
            count=int(raw["count"]),
            size=int(raw["size"]),
            records_read=int(raw["recordsRead"]),
            steps=int(raw["steps"]),
        )

    def progress(self) -> "ExportProgress":
        return ExportProgress(
            steps=self.steps,
            records_read=self.records_read,
            records_exported=self.count,
            bytes_written=self.size,
            reading_day=self.position.day,
        )
