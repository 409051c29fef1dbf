"""Events (mcp): read by id, written by the CAD connection and by imports."""
