"""CAD -> service: incident submissions (POST /cad/v1/incidents) and their processing.

envelope   the CloudEvents 1.0 envelope and the two incident forms (NENA EIDO, flat)
mapping    an incident document -> the service's incident and event records
store      raw submissions and their idempotency records in the CAD table
intake     validate, check the tenant, store, enqueue, answer 202 (the request path)
worker     map a stored submission into incident/event records and emit webhook updates
"""
