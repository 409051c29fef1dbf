"""The psap domain package: everything the service's Lambda functions share.

One subpackage per area (auth, knowledge, ...), plus the HTTP plumbing (http) and storage
helpers (storage). Arrows point down only: functions -> http/logic -> storage.
"""
