"""The Model Context Protocol endpoint (`/mcp`): tools and resource templates over the same
read logic and permission table as the REST API."""
