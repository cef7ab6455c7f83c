"""The host's device nodes: a worker can neither replace nor alter them (its ``/dev`` is
read-only and, as root, holds nodes of its own, not the host's), and every test is checked for
leaving them as it found them (``host_device_nodes_unchanged`` in tests/conftest.py)."""

from __future__ import annotations

import os
import stat
import textwrap

import pytest

ATTACKS = textwrap.dedent('''
    import errno
    import os


    def attempt(action):
        try:
            action()
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc.errno))
        return "done"


    def truncate_and_write():
        with open("/dev/null", "w") as f:
            f.write("gone")


    def attack(target):
        """Each way to replace or alter ``target``: "done" or the error's name."""
        with open("/tmp/plain", "w") as f:
            f.write("a regular file")
        return {
            "utime": attempt(lambda: os.utime(target)),
            "utime to zero": attempt(lambda: os.utime(target, (0, 0))),
            "chmod": attempt(lambda: os.chmod(target, 0o600)),
            "chown": attempt(lambda: os.chown(target, os.getuid(), os.getgid())),
            "unlink": attempt(lambda: os.unlink(target)),
            "rename over": attempt(lambda: os.rename("/dev/zero", target)),
            "replace with a file": attempt(lambda: os.replace("/tmp/plain", target)),
            "link": attempt(lambda: os.link(target, "/dev/another")),
            "mknod": attempt(lambda: os.mknod("/dev/another", 0o20666, os.makedev(1, 3))),
            "setxattr": attempt(lambda: os.setxattr(target, "user.mark", b"1")),
            "write": attempt(truncate_and_write),
        }


    def node(path):
        st = os.stat(path)
        return [st.st_dev, st.st_ino, st.st_mode, st.st_rdev]
''')

REFUSED = ("utime", "utime to zero", "chmod", "chown", "unlink", "rename over",
           "replace with a file", "link", "mknod", "setxattr")


def _times(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_ctime_ns


@pytest.mark.parametrize("name", ["null", "zero", "urandom"])
def test_a_worker_can_neither_replace_nor_alter_a_device_node(sandbox, device_node_state, name):
    target = f"/dev/{name}"
    before, times = device_node_state(), _times(target)
    runner = sandbox(ATTACKS)
    outcomes = runner.call("attack", (target,)).value
    assert [action for action in REFUSED if outcomes[action] == "done"] == []
    assert outcomes["write"] == "done"  # writing to a device stays harmless and allowed
    assert device_node_state() == before
    assert _times(target) == times  # not even its times


def test_a_worker_s_device_nodes_are_its_own_when_the_grader_is_root(sandbox):
    if os.geteuid() != 0:
        pytest.skip("without root the worker's device nodes are the host's, bound read-write")
    runner = sandbox(ATTACKS)
    for name in ("null", "zero", "full", "random", "urandom"):
        host = os.stat(f"/dev/{name}")
        dev, ino, mode, rdev = runner.call("node", (f"/dev/{name}",)).value
        assert (dev, ino) != (host.st_dev, host.st_ino)
        assert (stat.S_ISCHR(mode), rdev) == (True, host.st_rdev)


def test_the_check_of_every_test_sees_a_replaced_node(tmp_path, device_node_state):
    """What ``host_device_nodes_unchanged`` compares changes when a node is replaced by a file
    (``os.replace`` as root), has its mode changed, or goes."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = str(tmp_path / "null")
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.chmod(node, 0o666)  # whatever the umask
    original = device_node_state((node,))
    assert original[node][:3] == ("crw-rw-rw-", 1, 3)
    os.chmod(node, 0o600)
    assert device_node_state((node,)) != original
    (tmp_path / "plain").write_text("")
    os.replace(tmp_path / "plain", node)
    assert device_node_state((node,))[node][0].startswith("-")
    os.unlink(node)
    assert device_node_state((node,)) == {node: None}
