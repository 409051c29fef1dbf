"""SRT (SubRip) radio-traffic transcripts: decoding, parsing with the `srt` library, and
the checks a transcript must pass before anything is stored.

Only the upload function imports this module (and with it `srt`, which ships in that
function's own package): no other function pays for it at cold start.

Rules (each failure is InvalidInput naming the cue number, as written in the file or else
its position, and the line of the cue's times):
- UTF-8, with or without a byte-order mark; anything else names the first bad byte.
- At least one cue; a file of whitespace only is empty.
- Every cue must parse (index line optional, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, text);
  negative times cannot be written in SRT and are named as such.
- A cue ends after it starts; a cue starts at or after the previous cue's end (one channel
  carries one transmission at a time). Cue numbers out of sequence are accepted: the file's
  order is the order.
- Cue text follows the text policy (psap.text): no control character but tab and newlines.
- Speaker convention: text beginning with an uppercase label of at most 32 letters, digits,
  spaces, `-` or `/`, then `:` and a space (`ENGINE 5: on scene`, `DISPATCH: copy`) names the
  speaker; the label is taken out of the text. Otherwise the speaker is null.
"""

import bisect
import re
from dataclasses import dataclass
from datetime import timedelta

import srt

from psap.errors import InvalidInput
from psap.text import text_problem

SPEAKER_LABEL = re.compile(r"^([A-Z][A-Z0-9 \-/]{0,31}):\s+")
_NEGATIVE_TIME = re.compile(r"(^|[\s>])-\s*\d")
# SRT's timing arrow as srt accepts it (`-->`, `- >`).
_ARROW = re.compile(r"-[ -] *>")
_SNIPPET_CHARS = 60


@dataclass(frozen=True)
class Cue:
    number: int  # as written in the file; its position when the file gives none
    line: int  # 1-based line of its timing line
    start: timedelta
    end: timedelta
    speaker: str | None
    text: str


def decode(data: bytes) -> str:
    """The file's text. A byte-order mark is dropped; invalid UTF-8 names its byte and line."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InvalidInput(
            f"The SRT file is not UTF-8 text: byte {error.start} (line {line}) cannot be "
            "decoded; save it as UTF-8"
        ) from error
    if not text.strip():
        raise InvalidInput("The SRT file is empty: it has no cues")
    return text


def parse(text: str) -> list[Cue]:
    """The cues of a transcript, checked (see the module's rules)."""
    lines = _LineIndex(text)
    cues: list[Cue] = []
    try:
        for position, (subtitle, match) in enumerate(
            zip(srt.parse(text), srt.SRT_REGEX.finditer(text), strict=True), start=1
        ):
            cues.append(_cue(subtitle, position, lines.line_of(match.start(2))))
    except srt.SRTParseError as error:
        raise _unparseable(error, lines, len(cues)) from error
    except srt.TimestampParseError as error:
        number = len(cues) + 1
        raise InvalidInput(f"SRT cue {number}: a time cannot be read ({error})") from error
    except OverflowError as error:
        # `99999999999:00:00,000` parses as SRT but is beyond any timedelta.
        number = len(cues) + 1
        raise InvalidInput(f"SRT cue {number}: a time is out of range") from error
    if not cues:
        raise InvalidInput("The SRT file is empty: it has no cues")
    _check_times(cues)
    return cues


def _cue(subtitle: srt.Subtitle, position: int, line: int) -> Cue:
    _check_no_timing_in_text(subtitle.content, position, line)
    problem = text_problem(subtitle.content, free_text=True)
    if problem is not None:
        raise InvalidInput(f"SRT cue {position} (line {line + 1}): the text {problem}")
    text = subtitle.content.strip()
    speaker = None
    label = SPEAKER_LABEL.match(text)
    if label is not None:
        speaker = label.group(1).strip()
        text = text[label.end() :]
    number = subtitle.index if isinstance(subtitle.index, int) else position
    return Cue(number, line, subtitle.start, subtitle.end, speaker, text)


def _check_no_timing_in_text(content: str, position: int, line: int) -> None:
    """srt keeps a block it cannot read (say `-00:00:02,000 --> ...`) as text of the cue
    before it, when a good cue or the end follows: a timing arrow in a cue's text is that."""
    rows = content.split("\n")
    for offset, row in enumerate(rows):
        if _ARROW.search(row) is None:
            continue
        above = rows[offset - 1].strip() if offset > 0 else ""
        number = int(above) if above.isdigit() else position + 1
        problem = "has a negative time" if _NEGATIVE_TIME.search(row) else "is not a cue"
        snippet = row.strip()
        if len(snippet) > _SNIPPET_CHARS:
            snippet = snippet[: _SNIPPET_CHARS - 1] + "…"
        raise InvalidInput(f"SRT cue {number} (line {line + 1 + offset}) {problem}: '{snippet}'")


def _check_times(cues: list[Cue]) -> None:
    previous: Cue | None = None
    for cue in cues:
        if cue.end <= cue.start:
            raise InvalidInput(
                f"SRT cue {cue.number} (line {cue.line}): it ends at {_clock(cue.end)}, "
                f"not after its start {_clock(cue.start)} (a negative or empty duration)"
            )
        if previous is not None and cue.start < previous.end:
            raise InvalidInput(
                f"SRT cue {cue.number} (line {cue.line}) overlaps cue {previous.number} "
                f"(line {previous.line}): it starts at {_clock(cue.start)}, before "
                f"{_clock(previous.end)} where cue {previous.number} ends"
            )
        previous = cue


def _unparseable(error: srt.SRTParseError, lines: "_LineIndex", parsed: int) -> InvalidInput:
    unmatched: str = error.unmatched_content
    offset = error.expected_start + len(unmatched) - len(unmatched.lstrip())
    block = unmatched.strip().splitlines()
    first = block[0].strip() if block else ""
    # The cue names itself when its first line is its number.
    number = int(first) if first.isdigit() else parsed + 1
    problem = "is not a cue (expected a number line, then `start --> end`, then text)"
    # Named by the line of its times, as every other cue error is.
    numbered = first.isdigit() and len(block) > 1
    timing = block[1] if numbered else first
    line = lines.line_of(offset) + (1 if numbered else 0)
    if _NEGATIVE_TIME.search(timing):
        problem = "has a negative time"
    snippet = " / ".join(part.strip() for part in block[:2])
    if len(snippet) > _SNIPPET_CHARS:
        snippet = snippet[: _SNIPPET_CHARS - 1] + "…"
    return InvalidInput(f"SRT cue {number} (line {line}) {problem}: '{snippet}'")


def _clock(moment: timedelta) -> str:
    return srt.timedelta_to_srt_timestamp(moment)  # type: ignore[no-any-return]


class _LineIndex:
    """Character offset -> 1-based line number, by binary search over the newlines."""

    def __init__(self, text: str) -> None:
        self._newlines = [match.start() for match in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self._newlines, offset) + 1
