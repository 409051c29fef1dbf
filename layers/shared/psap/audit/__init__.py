"""The audit log: one record per data-interface and CAD-intake call (see recording.py)."""
