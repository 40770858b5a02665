"""The agent interface: a Model Context Protocol server over the code graph and the search
index (``semgraph mcp`` on stdio, and ``/mcp`` on the web app as stateless streamable HTTP).

Every answer is bounded by rows (a page, an exact or lower-bound total, a cursor tied to the
run it was computed on), bounded in tokens, says how fresh it is and how complete.
"""
