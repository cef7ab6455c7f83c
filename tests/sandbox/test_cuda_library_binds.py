"""Which library directories a CUDA worker's jail binds beyond the Python directories."""

import os

from rnngrade.sandbox.isolation import cuda_library_binds, driver_library_dirs

MAPS = """\
00400000-00401000 r--p 00000000 fe:10 11     /opt/torch/.venv/bin/python3.12
7fdb4f11a000-7fdb5009e000 r-xp 00166000 fe:10 42     /usr/local/nvidia/lib64/libcuda.so.580.159.04
7fdb5009e000-7fdb54a49000 r--p 010ea000 fe:10 42     /usr/local/nvidia/lib64/libcuda.so.580.159.04
7fdb60000000-7fdb60100000 r-xp 00000000 fe:10 43     /opt/driver dir/libnvidia-ml.so.1
7fdb70000000-7fdb70100000 rw-p 00000000 00:00 0
7ffd0000-7ffd1000 rw-p 00000000 00:00 0      [stack]
"""


def test_the_driver_libraries_folders_are_read_from_the_process_maps():
    assert driver_library_dirs(MAPS) == ["/usr/local/nvidia/lib64", "/opt/driver dir"]
    assert driver_library_dirs("") == []


def test_a_library_folder_on_a_mount_of_its_own_below_usr_is_bound_as_that_mount():
    """The jail binds /usr without what is mounted below it: a container's driver mount there
    (as /usr/local/nvidia on a GPU machine) would be an empty folder to the worker."""
    usr_lib = os.path.realpath("/usr/lib")
    assert cuda_library_binds([usr_lib], ["/", usr_lib], [], []) == [usr_lib]
    assert cuda_library_binds([usr_lib + "/x86_64-linux-gnu"], ["/", usr_lib], [], []) \
        == [usr_lib]


def test_a_library_folder_visible_through_the_system_directories_is_not_bound_again():
    usr_lib = os.path.realpath("/usr/lib")
    assert cuda_library_binds([usr_lib], ["/"], [], []) == []
    assert cuda_library_binds([usr_lib], ["/", "/usr"], [], []) == []


def test_folders_outside_the_system_directories_are_bound_unless_covered_or_hidden(tmp_path):
    lib, inner = tmp_path / "cuda" / "lib64", tmp_path / "cuda" / "lib64" / "stubs"
    inner.mkdir(parents=True)
    assert cuda_library_binds([str(inner), str(lib), "", "/"], ["/"], [], []) == [str(lib)]
    assert cuda_library_binds([str(lib)], ["/"], [str(tmp_path)], []) == []  # a Python dir
    assert cuda_library_binds([str(lib)], ["/"], [], [str(tmp_path / "cuda")]) == []
    assert cuda_library_binds([str(tmp_path / "missing")], ["/"], [], []) == []
