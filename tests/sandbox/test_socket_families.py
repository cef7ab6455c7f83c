"""The socket families a worker may open: the ones its network namespace confines (and the
netlink routing protocol the C library lists interfaces with); no other, AF_VSOCK (a path to
the hypervisor) first among them."""

from __future__ import annotations

import textwrap

SOURCE = textwrap.dedent('''
    import errno
    import socket


    def open_sockets(attempts):
        """Each (family, type, protocol) opened and closed: "opened" or the error's name."""
        out = []
        for family, kind, protocol in attempts:
            try:
                socket.socket(family, kind, protocol).close()
                out.append("opened")
            except OSError as exc:
                out.append(errno.errorcode.get(exc.errno, str(exc.errno)))
        return out


    def pair(family):
        try:
            a, b = socket.socketpair(family)
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc.errno))
        a.sendall(b"ping")
        return b.recv(4).decode()
''')

AF_VSOCK, AF_ALG, AF_BLUETOOTH, AF_PACKET, AF_NETLINK, AF_KEY = 40, 38, 31, 17, 16, 15
NETLINK_ROUTE, NETLINK_AUDIT, NETLINK_KOBJECT_UEVENT = 0, 9, 15
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
STREAM, DGRAM, RAW, SEQPACKET = 1, 2, 3, 5  # plain ints: what crosses to the worker


def test_a_worker_cannot_open_a_vsock_or_another_unconfined_family(sandbox):
    runner = sandbox(SOURCE)
    refused = [(AF_VSOCK, STREAM, 0), (AF_VSOCK, DGRAM, 0), (AF_VSOCK, SEQPACKET, 0),
               (AF_ALG, SEQPACKET, 0), (AF_BLUETOOTH, RAW, 1), (AF_PACKET, DGRAM, 0),
               (AF_KEY, RAW, 2), (AF_NETLINK, RAW, NETLINK_AUDIT),
               (AF_NETLINK, DGRAM, NETLINK_KOBJECT_UEVENT), (99, STREAM, 0)]
    assert runner.call("open_sockets", (refused,)).value == ["EAFNOSUPPORT"] * len(refused)
    assert runner.call("pair", (AF_VSOCK,)).value == "EAFNOSUPPORT"
    assert runner.protections()["system call filter"]


def test_the_confined_families_still_open(sandbox):
    runner = sandbox(SOURCE)
    allowed = [(AF_UNIX, STREAM, 0), (AF_INET, STREAM, 0), (AF_INET6, DGRAM, 0),
               (AF_NETLINK, RAW, NETLINK_ROUTE)]
    assert runner.call("open_sockets", (allowed,)).value == ["opened"] * len(allowed)
    assert runner.call("pair", (AF_UNIX,)).value == "ping"
