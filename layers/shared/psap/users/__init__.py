"""The tenant's users: list (Spring-style page), imports, and person references."""
