"""Incident upload: JSON Lines or CSV files of incidents, created or updated by number.

parsing (lines -> validated rows with line numbers), applying (rows -> the incidents store,
CREATED / UPDATED / UNCHANGED, webhooks), store (upload jobs), service (the operations and
the worker).
"""
