"""Credentials, permissions and the authorizer's decision."""
