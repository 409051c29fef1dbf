"""SRT radio-traffic parsing and checks (psap.media.subrip): the speaker convention, what
the parser tolerates, and that only the upload function imports the SRT library."""

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from psap.errors import InvalidInput
from psap.media.subrip import decode, parse

ROOT = Path(__file__).resolve().parents[2]


def one_cue(text: str) -> tuple[str | None, str]:
    (cue,) = parse(f"1\n00:00:01,000 --> 00:00:02,000\n{text}\n")
    return cue.speaker, cue.text


@pytest.mark.parametrize(
    ("text", "speaker", "rest"),
    [
        ("ENGINE 5: on scene", "ENGINE 5", "on scene"),
        ("MEDIC 12: transporting one", "MEDIC 12", "transporting one"),
        ("DISPATCH: copy", "DISPATCH", "copy"),
        ("BATTALION 2: I have command", "BATTALION 2", "I have command"),
        ("L-7/TRUCK: ladder up", "L-7/TRUCK", "ladder up"),
        ("Engine 5: lowercase is not a label", None, "Engine 5: lowercase is not a label"),
        ("10:42 on scene", None, "10:42 on scene"),
        ("ENGINE 5:no space after the colon", None, "ENGINE 5:no space after the colon"),
        ("A" * 33 + ": label over 32 characters", None, "A" * 33 + ": label over 32 characters"),
        ("on scene, no label", None, "on scene, no label"),
    ],
)
def test_speaker_convention_uppercase_label_colon_space(
    text: str, speaker: str | None, rest: str
) -> None:
    assert one_cue(text) == (speaker, rest)


def test_a_multi_line_cue_keeps_its_lines_and_the_label_of_the_first() -> None:
    assert one_cue("ENGINE 5: on scene\nsmoke showing") == ("ENGINE 5", "on scene\nsmoke showing")


def test_crlf_files_and_a_byte_order_mark_are_accepted() -> None:
    data = b"\xef\xbb\xbf1\r\n00:00:01,000 --> 00:00:02,500\r\nDISPATCH: copy\r\n"
    (cue,) = parse(decode(data))
    assert (cue.number, cue.line, cue.start, cue.end) == (
        1,
        2,
        timedelta(seconds=1),
        timedelta(seconds=2.5),
    )
    assert (cue.speaker, cue.text) == ("DISPATCH", "copy")


def test_cue_numbers_out_of_sequence_are_accepted_and_kept_in_file_order() -> None:
    text = "7\n00:00:01,000 --> 00:00:02,000\nA\n\n3\n00:00:03,000 --> 00:00:04,000\nB\n"
    assert [(cue.number, cue.line) for cue in parse(text)] == [(7, 2), (3, 6)]


def test_a_cue_without_a_number_is_named_by_its_position() -> None:
    text = "1\n00:00:01,000 --> 00:00:02,000\nA\n\n00:00:03,000 --> 00:00:04,000\nB\n"
    assert [cue.number for cue in parse(text)] == [1, 2]


def test_touching_cues_do_not_overlap() -> None:
    text = "1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n00:00:02,000 --> 00:00:03,000\nB\n"
    assert len(parse(text)) == 2


def test_a_zero_length_cue_is_refused() -> None:
    with pytest.raises(InvalidInput, match=r"SRT cue 1 \(line 2\): it ends at 00:00:01,000"):
        parse("1\n00:00:01,000 --> 00:00:01,000\nA\n")


def test_only_the_upload_function_imports_the_srt_library() -> None:
    # Given the modules the event and media GET functions import
    probe = (
        "import sys; import psap.events.reading, psap.media.reading, psap.media.store, "
        "psap.http.operations; print('srt' in sys.modules)"
    )
    # When they are imported in a fresh interpreter
    answer = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT / 'layers' / 'shared'}", "PATH": ""},
    )
    # Then srt is not among them
    assert answer.stdout.strip() == "False"
