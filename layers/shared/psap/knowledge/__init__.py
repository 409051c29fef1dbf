"""Knowledge entries: guide cards, instruction cards and the other knowledge types."""
