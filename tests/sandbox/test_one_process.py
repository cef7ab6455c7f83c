"""A CPU worker is one process: every limit it has (its address space above all) is counted per
process, so a child would bring a whole new allowance. Forks fail; threads still start."""

from __future__ import annotations

import textwrap

from rnngrade.sandbox import Limits
from rnngrade.sandbox.seccomp import _JEQ_K, ARCHES, _insn, program

MIB = 1 << 20

ATTEMPTS = textwrap.dedent('''
    import errno
    import os
    import subprocess
    import threading

    import numpy as np
    import torch


    def fork():
        try:
            pid = os.fork()
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc.errno))
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        return "forked"


    def run_a_program():
        try:
            subprocess.run(["/bin/true"], check=False)
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc.errno))
        return "ran"


    def hoard_in_children(children, each):
        """Each child holds ``each`` bytes: together far beyond one worker's limit."""
        started = 0
        for _ in range(children):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                block = bytearray(each)
                os._exit(0 if block else 1)
            started += 1
        for _ in range(started):
            os.wait()
        return started


    def threads():
        seen = []
        workers = [threading.Thread(target=seen.append, args=(n,)) for n in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        torch.set_num_threads(2)
        a = torch.ones(256, 256)
        return sorted(seen), float((a @ a)[0, 0]), float(np.ones((64, 64)).dot(np.ones(64))[0])
''')


def test_a_cpu_worker_starts_no_process(sandbox):
    runner = sandbox(ATTEMPTS)
    assert runner.call("fork").value == "EPERM"
    assert runner.call("run_a_program").value == "EPERM"


def test_a_cpu_worker_cannot_multiply_its_memory_by_forking(sandbox):
    runner = sandbox(ATTEMPTS, limits=Limits(memory_bytes=2048 * MIB, call_seconds=30.0))
    assert runner.call("hoard_in_children", (8, 1024 * MIB)).value == 0


def test_threads_still_start_in_a_cpu_worker(sandbox):
    seen, torch_sum, numpy_sum = sandbox(ATTEMPTS).call("threads").value
    assert (seen, torch_sum, numpy_sum) == ([0, 1, 2, 3], 256.0, 64.0)


def test_a_cuda_worker_s_filter_leaves_processes_to_its_driver():
    arch = ARCHES["x86_64"]
    refuses_fork = _insn(_JEQ_K, 0, 1, arch.processes["fork"])
    assert refuses_fork in program(arch)
    assert refuses_fork not in program(arch, uncounted_memory=True)
