"""The local stack: template.yaml run on one machine without Docker or an AWS account.

`psap-local` (`make run`) starts moto as the embedded AWS, creates the template's tables, queues
and buckets in it, runs each function in its own worker process, routes the template's API
events through an API Gateway emulator and drives the SQS event sources with pollers.
"""
