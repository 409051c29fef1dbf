"""Storage helpers: DynamoDB clients and attribute (de)serialization."""
