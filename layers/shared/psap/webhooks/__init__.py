"""Service -> CAD webhook updates: connectors, deliveries, attempts, signing and dispatch.

signing      the three connector profiles (baseline, standard-webhooks, raw-body-no-timestamp)
schedule     the retry schedule and what each attempt outcome means for the next one
addresses    outbound address safety (no loopback, private, metadata or odd spellings)
transport    the HTTP client that connects only to a vetted address, never follows redirects
secrets      signing secrets and the CAD's bearer credential in Secrets Manager
catalogue    the kinds of update we send and their versioned payloads
store        connectors, deliveries, attempts and the due index in the CAD table
connectors   create / update / disable / rotate connectors (admin side)
deliveries   creating, listing, replaying and recovering deliveries
dispatcher   one attempt of one delivery; the scheduler that re-enqueues due deliveries
"""
