"""Media ingest: SRT radio-traffic transcripts attached to events (issue 6 part 2)."""
