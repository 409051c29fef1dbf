"""Training: a user's phase enrollments with task lists and progress counters."""
