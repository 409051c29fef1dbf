"""Harnesses the test layers share (not tests themselves)."""
