"""{base_url}/mcp: the Model Context Protocol endpoint (Streamable HTTP, stateless).

Tools and resource templates over the incident, event, knowledge-card, knowledge-list,
evaluation, enrollment and resource-center reads, with the REST operations' permissions and
logic (psap.mcp). The search engine loads from the search layer on the first search only.
"""

from psap.mcp.endpoint import mcp_handler

handler = mcp_handler()
