"""Jupyter configuration of the documentation build (scripts/docs points JUPYTER_CONFIG_PATH
here): mkdocs-jupyter executes the tutorial notebook through nbconvert, whose kernel manager
reads this file.

The manager gives the kernel CurveZMQ keys, so kernel and manager talk encrypted over loopback
TCP and ipykernel has no "Kernel is running over TCP without encryption" warning to print.
Where pyzmq was built without CurveZMQ, nothing changes (and the warning stays).
"""

import zmq

c = get_config()  # type: ignore[name-defined]  # noqa: F821
if zmq.has("curve"):
    c.KernelManager.transport_encryption = "auto"
