"""Outbound address safety: where a webhook may be sent.

A connector URL must be https with an ordinary host name or a canonical public IP literal.
Every address a name resolves to is checked, and the transport connects to exactly the
address that was checked, so DNS cannot answer differently between check and connect.
Refused: loopback, private (RFC 1918, ULA), link-local (169.254.0.0/16 with the cloud
metadata address, fe80::/10), CGNAT (100.64.0.0/10), unspecified, multicast, reserved,
documentation and benchmark ranges, IPv4-mapped/compatible, 6to4, Teredo and NAT64 IPv6, and
odd spellings of IPv4 (decimal, octal, hex, short forms) that resolvers read differently.
A connector in local-dev mode may use http and loopback addresses, nothing else; the
deployment must allow local-dev mode as well (WEBHOOK_LOCAL_DEV, false in AWS).
The port must be 443 or one of ALLOWED_PORTS, checked on the URL and again on the addresses
at connect time; only a local-dev connector on a loopback address may use any port.
"""

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

type IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?"
_HOST_NAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*\.?$")
# Anything made only of digits, dots and hex markers is an IPv4 spelling, canonical or not.
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]*))*\.?$")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
# HTTPS's port and the one alternative CAD vendors publish webhook receivers on. Any other
# port (22, 25, 6379, ...) would let a connector knock on services that are not web servers.
ALLOWED_PORTS = frozenset({443, 8443})
_LOOPBACK_NAME = "localhost"


class UnsafeDestination(Exception):
    """The URL or the address it resolves to is not one a webhook may go to."""


@dataclass(frozen=True)
class Destination:
    scheme: str  # https, or http in local-dev mode
    host: str  # as written in the URL (lowercase, no brackets)
    port: int
    target: str  # path and query, as sent in the request line


def parse_destination(url: str, *, local_dev: bool) -> Destination:
    """Checks a connector URL's form (not yet its addresses)."""
    if any(character.isspace() or ord(character) < 0x20 for character in url):
        raise UnsafeDestination("the URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UnsafeDestination(f"the URL is not valid: {error}") from error
    scheme = parts.scheme.lower()
    if scheme != "https" and not (local_dev and scheme == "http"):
        raise UnsafeDestination("the URL must use https")
    if parts.username is not None or parts.password is not None:
        raise UnsafeDestination("the URL must not carry credentials")
    if parts.fragment:
        raise UnsafeDestination("the URL must not have a fragment")
    host = (parts.hostname or "").lower()
    if not host:
        raise UnsafeDestination("the URL has no host")
    literal = literal_address(host)
    if literal is not None:
        check_address(literal, local_dev=local_dev)
    elif not _HOST_NAME.match(host):
        raise UnsafeDestination(f"{host!r} is not a valid host name")
    port = port or (443 if scheme == "https" else 80)
    loopback = literal.is_loopback if literal is not None else host == _LOOPBACK_NAME
    check_port(port, loopback=loopback, local_dev=local_dev)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return Destination(scheme, host, port, target)


def check_port(port: int, *, loopback: bool, local_dev: bool) -> None:
    """Raises UnsafeDestination unless the port is allowed for this destination."""
    if port in ALLOWED_PORTS or (local_dev and loopback):
        return
    allowed = " or ".join(str(allowed) for allowed in sorted(ALLOWED_PORTS))
    raise UnsafeDestination(
        f"port {port} is not allowed: use {allowed} (any port only for a local-dev connector "
        "on loopback)"
    )


def origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a URL as a browser compares origins; None if it has none."""
    try:
        parts = urlsplit(url.strip())
        scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
        port = parts.port or {"https": 443, "http": 80}.get(scheme, 0)
    except ValueError:
        return None
    return (scheme, host.rstrip("."), port) if host else None


def literal_address(host: str) -> IPAddress | None:
    """The address an IP-literal host names; refuses non-canonical IPv4 spellings."""
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError as error:
            raise UnsafeDestination(f"{host!r} is not a valid IPv6 address") from error
    if _NUMERIC_HOST.match(host):
        try:
            # Strict: four decimal parts without leading zeros; 2130706433, 0177.0.0.1,
            # 0x7f.1 and 127.1 are what some resolvers read as 127.0.0.1.
            return ipaddress.IPv4Address(host)
        except ValueError as error:
            raise UnsafeDestination(f"{host!r} is an unusual spelling of an IP address") from error
    return None


def check_address(address: IPAddress, *, local_dev: bool) -> None:
    """Raises UnsafeDestination unless `address` is a public unicast address (or loopback
    for a local-dev connector)."""
    if isinstance(address, ipaddress.IPv6Address):
        _check_ipv6_form(address)
    if address.is_loopback:
        if local_dev:
            return
        raise UnsafeDestination(f"{address} is a loopback address")
    for refused, what in _REFUSED_CLASSES:
        if refused(address):
            raise UnsafeDestination(f"{address} is {what}")


def _check_ipv6_form(address: ipaddress.IPv6Address) -> None:
    """IPv6 forms that carry or reach an IPv4 address, whatever that address is."""
    if address.scope_id:
        raise UnsafeDestination(f"{address} has a zone id")
    if address.ipv4_mapped is not None or _ipv4_compatible(address) is not None:
        raise UnsafeDestination(f"{address} is an IPv4-mapped or compatible address")
    if address.sixtofour is not None or address.teredo is not None:
        raise UnsafeDestination(f"{address} is a 6to4 or Teredo address")
    if address in _NAT64 or address in _NAT64_LOCAL:
        raise UnsafeDestination(f"{address} is a NAT64 address")


_CGNAT = ipaddress.ip_network("100.64.0.0/10")
# In order: the first class an address falls in names the refusal.
_REFUSED_CLASSES: tuple[tuple[Callable[[IPAddress], bool], str], ...] = (
    (lambda address: address.is_unspecified, "the unspecified address"),
    (
        lambda address: address.is_link_local,
        "a link-local address (cloud metadata lives here)",
    ),
    (lambda address: address.is_multicast, "a multicast address"),
    (lambda address: address in _CGNAT, "a carrier-grade NAT address"),
    (lambda address: address.is_private, "a private address"),
    (lambda address: address.is_reserved or not address.is_global, "not a public address"),
)


def _ipv4_compatible(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """::a.b.c.d, the deprecated IPv4-compatible form (:: and ::1 excepted)."""
    packed = address.packed
    if packed[:12] == bytes(12) and int.from_bytes(packed[12:]) > 1:
        return ipaddress.IPv4Address(packed[12:])
    return None


def resolve(destination: Destination, *, local_dev: bool) -> list[IPAddress]:
    """Every address the host resolves to; all must be safe (a single bad answer refuses
    the whole name, so a record set cannot mix a public address with an internal one)."""
    literal = literal_address(destination.host)
    if literal is not None:
        check_address(literal, local_dev=local_dev)
        check_port(destination.port, loopback=literal.is_loopback, local_dev=local_dev)
        return [literal]
    try:
        answers = socket.getaddrinfo(
            destination.host, destination.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except (socket.gaierror, UnicodeError) as error:
        raise NameNotResolved(f"{destination.host}: {error}") from error
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in answers:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        check_address(address, local_dev=local_dev)
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise NameNotResolved(f"{destination.host}: no address")
    # At connect time too: a name may now resolve elsewhere than when the URL was accepted.
    loopback = all(address.is_loopback for address in addresses)
    check_port(destination.port, loopback=loopback, local_dev=local_dev)
    return addresses


class NameNotResolved(Exception):
    """DNS gave no answer for the host."""
