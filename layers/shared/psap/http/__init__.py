"""HTTP plumbing shared by every API function: resolver, errors, permissions, paging."""
