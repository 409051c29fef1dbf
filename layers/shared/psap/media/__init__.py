"""Media ingest: SRT radio-traffic transcripts attached to events."""
