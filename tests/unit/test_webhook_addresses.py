"""Outbound address safety (DESIGN section 6): https only, no loopback, private, link-local,
CGNAT, unspecified, mapped or oddly spelled addresses, checked on every resolved address."""

import socket
from typing import Any

import pytest

from psap.webhooks.addresses import (
    UnsafeDestination,
    check_address,
    parse_destination,
    resolve,
)
from psap.webhooks.retry_policy import ErrorClass
from psap.webhooks.transport import OutboundClient


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",  # loopback
        "https://127.1.2.3/hook",
        "https://[::1]/hook",
        "https://10.0.0.8/hook",  # private
        "https://172.16.5.4/hook",
        "https://192.168.1.1/hook",
        "https://[fd00::1]/hook",
        "https://169.254.169.254/latest/meta-data",  # link-local: cloud metadata
        "https://[fe80::1]/hook",
        "https://100.64.0.1/hook",  # CGNAT
        "https://0.0.0.0/hook",  # unspecified
        "https://[::]/hook",
        "https://[::ffff:127.0.0.1]/hook",  # IPv4-mapped
        "https://[::ffff:10.0.0.1]/hook",
        "https://[::7f00:1]/hook",  # IPv4-compatible
        "https://[64:ff9b::a00:1]/hook",  # NAT64 of 10.0.0.1
        "https://[2002:a00:1::]/hook",  # 6to4 of 10.0.0.1
        "https://224.0.0.1/hook",  # multicast
        "https://240.0.0.1/hook",  # reserved
        "https://198.18.0.1/hook",  # benchmarking
        "https://192.0.2.10/hook",  # documentation
        "https://2130706433/hook",  # decimal 127.0.0.1
        "https://0177.0.0.1/hook",  # octal
        "https://0x7f.0.0.1/hook",  # hex
        "https://0x7f000001/hook",
        "https://127.1/hook",  # short form
        "https://010.0.0.1/hook",  # leading zero
    ],
)
def test_unsafe_addresses_are_refused(url: str) -> None:
    with pytest.raises(UnsafeDestination):
        parse_destination(url, local_dev=False)


@pytest.mark.parametrize(
    "url",
    [
        "http://cad.example.com/hook",  # not https
        "ftp://cad.example.com/hook",
        "https://user:pw@cad.example.com/hook",
        "https:///hook",
        "https://cad example.com/hook",
        "https://cad.example.com/hook#frag",
        "https://bad_host!/x",
    ],
)
def test_malformed_or_insecure_urls_are_refused(url: str) -> None:
    with pytest.raises(UnsafeDestination):
        parse_destination(url, local_dev=False)


@pytest.mark.parametrize(
    "url",
    ["https://cad.example.com/hook?x=1", "https://8.8.8.8/hook", "https://[2606:4700::1111]/"],
)
def test_public_destinations_are_allowed(url: str) -> None:
    destination = parse_destination(url, local_dev=False)
    assert destination.scheme == "https"


def test_local_dev_allows_http_and_loopback_but_nothing_else() -> None:
    assert parse_destination("http://127.0.0.1:8099/h", local_dev=True).port == 8099
    assert parse_destination("http://[::1]:8099/h", local_dev=True).host == "::1"
    for url in ("http://10.0.0.1/h", "http://169.254.169.254/", "http://[::ffff:127.0.0.1]/"):
        with pytest.raises(UnsafeDestination):
            parse_destination(url, local_dev=True)


def fake_dns(monkeypatch: pytest.MonkeyPatch, *answers: str) -> list[str]:
    asked: list[str] = []

    def getaddrinfo(host: str, port: int, *_: Any, **__: Any) -> list[Any]:
        asked.append(host)
        return [
            (
                socket.AF_INET6 if ":" in a else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (a, port),
            )
            for a in answers
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_a_name_resolving_to_an_internal_address_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_dns(monkeypatch, "10.1.2.3")
    destination = parse_destination("https://cad.example.com/hook", local_dev=False)
    with pytest.raises(UnsafeDestination):
        resolve(destination, local_dev=False)


def test_one_internal_answer_among_public_ones_refuses_the_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_dns(monkeypatch, "93.184.216.34", "169.254.169.254")
    destination = parse_destination("https://cad.example.com/hook", local_dev=False)
    with pytest.raises(UnsafeDestination):
        resolve(destination, local_dev=False)


def test_public_answers_are_returned_for_the_transport_to_connect_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = fake_dns(monkeypatch, "93.184.216.34", "2606:2800:220:1::1")
    destination = parse_destination("https://cad.example.com/hook", local_dev=False)
    assert [str(a) for a in resolve(destination, local_dev=False)] == [
        "93.184.216.34",
        "2606:2800:220:1::1",
    ]
    assert asked == ["cad.example.com"]


def test_the_transport_connects_to_the_vetted_address_without_a_second_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given DNS that answers a public address once (the check) and would answer an internal
    # one afterwards (a rebinding attack)
    answers = iter(["93.184.216.34", "127.0.0.1"])
    looked_up: list[str] = []

    def getaddrinfo(host: str, port: int, *_: Any, **__: Any) -> list[Any]:
        looked_up.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    connected: list[tuple[str, int]] = []

    def create_connection(address: tuple[str, int], timeout: float) -> Any:
        connected.append(address)
        raise ConnectionRefusedError("test: no network")

    from psap.webhooks import transport

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    # When the transport sends
    outcome = transport.OutboundClient().post(
        "https://cad.example.com/hook", {}, b"{}", local_dev=False
    )
    # Then it connected to the address that was checked, after exactly one lookup
    assert connected == [("93.184.216.34", 443)]
    assert looked_up == ["cad.example.com"]
    assert outcome.error_class is not None and outcome.error_class.value == "connect"


def test_a_blocked_destination_is_an_attempt_outcome_not_an_exception() -> None:
    from psap.webhooks.transport import OutboundClient

    outcome = OutboundClient().post("https://10.0.0.1/x", {}, b"{}", local_dev=False)
    assert outcome.error_class is not None and outcome.error_class.value == "blocked"
    assert outcome.status_code is None


def test_check_address_allows_a_public_address() -> None:
    import ipaddress

    check_address(ipaddress.ip_address("8.8.4.4"), local_dev=False)


def test_a_name_that_does_not_resolve_is_a_dns_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from psap.webhooks.transport import OutboundClient

    def getaddrinfo(*_: Any, **__: Any) -> list[Any]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    outcome = OutboundClient().post("https://cad.example.com/h", {}, b"{}", local_dev=False)
    assert outcome.error_class is not None and outcome.error_class.value == "dns"


@pytest.mark.parametrize(
    "internal", ["127.0.0.1", "10.0.0.7", "169.254.169.254", "::ffff:169.254.169.254"]
)
def test_a_name_that_turns_internal_after_the_check_is_blocked_at_the_next_connect(
    monkeypatch: pytest.MonkeyPatch, internal: str
) -> None:
    # Given a name that resolved to a public address when the connector was checked, and
    # resolves to an internal one (or its IPv4-mapped IPv6 form) by the time of a delivery
    parse_destination("https://cad.example.com/hook", local_dev=False)
    fake_dns(monkeypatch, internal)
    connected: list[Any] = []
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: connected.append(a))
    from psap.webhooks.transport import OutboundClient

    # When a delivery is attempted
    outcome = OutboundClient().post("https://cad.example.com/hook", {}, b"{}", local_dev=False)
    # Then it is refused before any connection is made
    assert outcome.error_class is not None and outcome.error_class.value == "blocked"
    assert connected == []


# ---------------------------------------------------------------- destination ports


@pytest.mark.parametrize(
    "url",
    ["https://1.1.1.1:22/hook", "https://cad.example.com:25/", "https://cad.example.com:80/"],
)
def test_a_port_outside_the_allowlist_is_refused(url: str) -> None:
    with pytest.raises(UnsafeDestination, match="port"):
        parse_destination(url, local_dev=False)


def test_443_and_8443_are_allowed() -> None:
    assert parse_destination("https://cad.example.com/", local_dev=False).port == 443
    assert parse_destination("https://cad.example.com:8443/", local_dev=False).port == 8443


def test_local_dev_allows_any_port_on_loopback_only() -> None:
    assert parse_destination("http://localhost:3001/h", local_dev=True).port == 3001
    for url in ("http://cad.example.com:3001/h", "http://8.8.8.8:3001/h"):
        with pytest.raises(UnsafeDestination, match="port 3001"):
            parse_destination(url, local_dev=True)


def test_the_port_is_checked_again_on_the_addresses_at_connect_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given "localhost" accepted for a local-dev connector on port 3001, when the name
    # resolves to a public address at connect time, the odd port is refused
    fake_dns(monkeypatch, "93.184.216.34")
    destination = parse_destination("http://localhost:3001/h", local_dev=True)
    with pytest.raises(UnsafeDestination, match="port 3001"):
        resolve(destination, local_dev=True)
    fake_dns(monkeypatch, "127.0.0.1")
    assert [str(a) for a in resolve(destination, local_dev=True)] == ["127.0.0.1"]


def test_the_dispatcher_refuses_a_stored_url_with_a_bad_port_without_connecting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A connector stored before the rule (or written around it) is blocked at send time
    def no_connection(*_: Any, **__: Any) -> Any:
        raise AssertionError("the transport connected")

    monkeypatch.setattr(socket, "create_connection", no_connection)
    client = OutboundClient(connect_timeout=1, total_timeout=2)
    outcome = client.post("https://1.1.1.1:22/hook", {}, b"{}", local_dev=False)
    assert outcome.error_class is ErrorClass.BLOCKED and "port 22" in (outcome.error_detail or "")
