"""brainfs.front: the front doors to a memory, each a way in for a person or an agent.

- ``cli/``: the ``brainfs`` command (and mount(8)'s ``mount.brainfs`` helper);
- ``api.py``: the Python API, ``from brainfs import Memory``, made of its parts
  ``apicore.py``, ``apirecall.py``, ``apicontext.py``, ``apifiles.py`` and ``apidream.py``;
- ``mcpserver.py``: ``brainfs mcp``, the memory as an MCP server;
- ``demo.py``: ``brainfs demo``, the main job end to end;
- ``usage.py``: what every door says about bad input (imports nothing);
- ``logfmt.py``: the log lines of every command and of the daemon a mount spawns.

The mount itself is ``brainfs.fs``: the front doors start it and read it, it never imports
them (tests/test_layout.py). The sample generator and the evaluation (``brainfs.tools``)
are imported inside the commands that run them, never when a front door loads.
"""
