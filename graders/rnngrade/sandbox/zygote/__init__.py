"""The zygote: a fork server that has already imported NumPy, torch (without initialising CUDA)
and the worker side of rnngrade, so a worker costs a fork instead of a 2-second interpreter start.

- ``protocol``: the messages a zygote sends and receives, and the one decoder that checks them.
- ``server``: the zygote process itself (and its spares, forked from it), serving one grader.
- ``client``: the grader's side: ``ZygoteClient``, ``shared_client``, ``start_soon``, ``adopt``.

A batch's grading processes each need a zygote too: the batch's coordinator starts one while it
prepares, and each grading process gets a *clone* of it (``ZygoteClient.clone``, ``adopt``): a
fork of that zygote, with its own control channel, jail directories and workers, so the batch
imports torch for its workers once. A clone is a fork of a process that only ever imported
modules, never of a grader.

The client never imports the server (it starts it by name in a fresh interpreter) and the server
never imports the client, so the zygote loads nothing of the grader's side.
"""
