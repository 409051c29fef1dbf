"""House rules for data protection, checked on the SAM-translated template (what
CloudFormation deploys): nothing stateful is deleted with the stack or on replacement, every
store is encrypted with a key of this template that rotates, every role that touches an
encrypted store may use its key, every bucket is versioned and refuses plain HTTP, the
backup plan covers every table, and no function records its responses in traces.

Each rule returns its problems as sentences; an empty list is a pass. A resource added later
without the protections breaks a rule by name, so it cannot slip through.
"""

from collections.abc import Iterator, Mapping
from typing import Any, Final

TABLE: Final = "AWS::DynamoDB::Table"
BUCKET: Final = "AWS::S3::Bucket"
QUEUE: Final = "AWS::SQS::Queue"
SECRET: Final = "AWS::SecretsManager::Secret"  # noqa: S105 - a resource type
LOG_GROUP: Final = "AWS::Logs::LogGroup"
TOPIC: Final = "AWS::SNS::Topic"
KEY: Final = "AWS::KMS::Key"
BACKUP_VAULT: Final = "AWS::Backup::BackupVault"
ROLE: Final = "AWS::IAM::Role"
FUNCTION: Final = "AWS::Lambda::Function"

# Deleting the stack, or a change that replaces one of these, must never take its data.
RETAINED: Final = frozenset({TABLE, BUCKET, QUEUE, SECRET, LOG_GROUP, KEY, BACKUP_VAULT})
# What a role needs of a key to read and write a store it encrypts.
KEY_USE: Final = ("kms:Decrypt", "kms:GenerateDataKey")
# Where the connector secrets' key is named (they are created at run time, not in the stack).
SECRET_KEY_VARIABLE: Final = "CONNECTOR_SECRET_KEY_ARN"  # noqa: S105 - a variable name
TRACER_CAPTURE: Final = ("POWERTOOLS_TRACER_CAPTURE_RESPONSE", "POWERTOOLS_TRACER_CAPTURE_ERROR")
BACKUP_DAYS: Final = 35


def _resources(template: Mapping[str, Any], *types: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for logical_id, resource in (template.get("Resources") or {}).items():
        if resource.get("Type") in types:
            yield logical_id, resource


def _properties(resource: Mapping[str, Any]) -> dict[str, Any]:
    return dict(resource.get("Properties") or {})


def _get_att(value: Any, attribute: str = "Arn") -> str | None:
    """X of `!GetAtt X.<attribute>`, else None."""
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        target = value["Fn::GetAtt"]
        if isinstance(target, list) and len(target) == 2 and target[1] == attribute:
            return str(target[0])
        if isinstance(target, str) and target == f"{target.split('.')[0]}.{attribute}":
            return target.split(".")[0]
    return None


def _ref(value: Any) -> str | None:
    return str(value["Ref"]) if isinstance(value, dict) and "Ref" in value else None


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _referenced(value: Any) -> set[str]:
    """Every logical id a value names: Ref, GetAtt, or ${X} / ${X.Attr} inside a Sub."""
    found: set[str] = set()
    if isinstance(value, dict):
        if "Ref" in value:
            found.add(str(value["Ref"]))
        elif "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            found.add(str(target[0] if isinstance(target, list) else target.split(".")[0]))
        elif "Fn::Sub" in value:
            argument = value["Fn::Sub"]
            text = argument[0] if isinstance(argument, list) else argument
            for part in str(text).split("${")[1:]:
                name = part.split("}")[0].split(".")[0]
                if not name.startswith(("AWS::", "!")):
                    found.add(name)
        else:
            for item in value.values():
                found |= _referenced(item)
    elif isinstance(value, list):
        for item in value:
            found |= _referenced(item)
    return found


# ---------------------------------------------------------------------------- retention


def not_retained(template: Mapping[str, Any]) -> list[str]:
    return [
        f"{logical_id}: a {resource['Type']} without DeletionPolicy and UpdateReplacePolicy Retain"
        for logical_id, resource in _resources(template, *RETAINED)
        if resource.get("DeletionPolicy") != "Retain"
        or resource.get("UpdateReplacePolicy") != "Retain"
    ]


def tables_without_deletion_protection(template: Mapping[str, Any]) -> list[str]:
    return [
        f"{logical_id}: a table without DeletionProtectionEnabled"
        for logical_id, resource in _resources(template, TABLE)
        if _properties(resource).get("DeletionProtectionEnabled") is not True
    ]


# ---------------------------------------------------------------------------- keys


def encryption_keys(template: Mapping[str, Any]) -> dict[str, str]:
    """Store logical id -> the logical id of the key of this template that encrypts it
    (stores that use no key of this template are left out)."""
    keys = {logical_id for logical_id, _ in _resources(template, KEY)}
    found: dict[str, str] = {}
    for logical_id, resource in _resources(template, TABLE, BUCKET, QUEUE, LOG_GROUP, TOPIC):
        properties = _properties(resource)
        kind = resource["Type"]
        if kind == TABLE:
            sse = properties.get("SSESpecification") or {}
            key = _get_att(sse.get("KMSMasterKeyId")) if sse.get("SSEType") == "KMS" else None
        elif kind == BUCKET:
            rules = (properties.get("BucketEncryption") or {}).get(
                "ServerSideEncryptionConfiguration"
            ) or [{}]
            default = rules[0].get("ServerSideEncryptionByDefault") or {}
            key = (
                _get_att(default.get("KMSMasterKeyID"))
                if default.get("SSEAlgorithm") == "aws:kms" and rules[0].get("BucketKeyEnabled")
                else None
            )
        elif kind == LOG_GROUP:
            key = _get_att(properties.get("KmsKeyId"))
        else:
            key = _get_att(properties.get("KmsMasterKeyId"))
        if key in keys:
            found[logical_id] = str(key)
    for logical_id, resource in _resources(template, SECRET):
        key = _get_att(_properties(resource).get("KmsKeyId"))
        if key in keys:
            found[logical_id] = str(key)
    return found


def stores_without_our_keys(template: Mapping[str, Any]) -> list[str]:
    encrypted = encryption_keys(template)
    problems = [
        f"{logical_id}: a {resource['Type']} not encrypted with a customer-managed key of"
        " this template (tables SSEType KMS, buckets aws:kms with bucket keys)"
        for logical_id, resource in _resources(
            template, TABLE, BUCKET, QUEUE, SECRET, LOG_GROUP, TOPIC
        )
        if logical_id not in encrypted
    ]
    keys = {logical_id for logical_id, _ in _resources(template, KEY)}
    for function_id, resource in _resources(template, FUNCTION):
        variables = (_properties(resource).get("Environment") or {}).get("Variables") or {}
        if _get_att(variables.get(SECRET_KEY_VARIABLE)) not in keys:
            problems.append(f"{function_id}: {SECRET_KEY_VARIABLE} names no key of this template")
    return problems


def keys_without_rotation(template: Mapping[str, Any]) -> list[str]:
    return [
        f"{logical_id}: a key without EnableKeyRotation"
        for logical_id, resource in _resources(template, KEY)
        if _properties(resource).get("EnableKeyRotation") is not True
        # KMS rotates symmetric keys only; a signing key's spec says it is asymmetric.
        and _properties(resource).get("KeySpec", "SYMMETRIC_DEFAULT") == "SYMMETRIC_DEFAULT"
    ]


def _allows(statement: Mapping[str, Any], action: str) -> bool:
    if statement.get("Effect") != "Allow":
        return False
    for listed in _listed(statement.get("Action", [])):
        allowed = str(listed)
        if allowed == action or (allowed.endswith("*") and action.startswith(allowed[:-1])):
            return True
    return False


def key_grants(template: Mapping[str, Any]) -> dict[str, set[str]]:
    """Key logical id -> the roles (logical ids) allowed to use it: named in its key policy,
    or given it by an AWS::IAM::Policy attached to them."""
    grants: dict[str, set[str]] = {}
    for key_id, resource in _resources(template, KEY):
        roles = grants.setdefault(key_id, set())
        for statement in _listed((_properties(resource).get("KeyPolicy") or {}).get("Statement")):
            if all(_allows(statement, action) for action in KEY_USE):
                principals = (statement.get("Principal") or {}).get("AWS", [])
                roles |= {r for r in map(_get_att, _listed(principals)) if r is not None}
    for _, resource in _resources(template, "AWS::IAM::Policy"):
        properties = _properties(resource)
        roles = {r for r in map(_ref, _listed(properties.get("Roles", []))) if r is not None}
        for statement in _listed((properties.get("PolicyDocument") or {}).get("Statement")):
            if all(_allows(statement, action) for action in KEY_USE):
                for granted in map(_get_att, _listed(statement.get("Resource"))):
                    if granted is not None and granted in grants:
                        grants[granted] |= roles
    return grants


def key_uses(template: Mapping[str, Any]) -> dict[str, set[str]]:
    """Role logical id -> the keys it needs: those of the stores its policies name, of the
    queues its function consumes or dead-letters to, and the connector secrets' key if it
    touches Secrets Manager."""
    encrypted = encryption_keys(template)
    resources = template.get("Resources") or {}
    needs: dict[str, set[str]] = {}
    for role_id, resource in _resources(template, ROLE):
        used: set[str] = set()
        for policy in _properties(resource).get("Policies") or []:
            for statement in _listed((policy.get("PolicyDocument") or {}).get("Statement")):
                used |= _referenced(statement.get("Resource"))
        needs[role_id] = {encrypted[store] for store in used if store in encrypted}
    for function_id, resource in _resources(template, FUNCTION):
        properties = _properties(resource)
        role = _get_att(properties.get("Role"))
        if role is None or role not in needs:
            continue
        role_id = role
        queues = {_get_att((properties.get("DeadLetterConfig") or {}).get("TargetArn"))}
        for mapping in resources.values():
            mapped = _properties(mapping)
            if mapping.get("Type") == "AWS::Lambda::EventSourceMapping" and (
                _ref(mapped.get("FunctionName")) == function_id
            ):
                queues.add(_get_att(mapped.get("EventSourceArn")))
        needs[role_id] |= {encrypted[queue] for queue in queues if queue in encrypted}
        role_policies = _properties(resources[role_id]).get("Policies") or []
        touches_secrets = any(
            str(action).startswith("secretsmanager:")
            for policy in role_policies
            for statement in _listed((policy.get("PolicyDocument") or {}).get("Statement"))
            for action in _listed(statement.get("Action", []))
        )
        variables = (properties.get("Environment") or {}).get("Variables") or {}
        secret_key = _get_att(variables.get(SECRET_KEY_VARIABLE))
        if touches_secrets and secret_key:
            needs[role_id].add(secret_key)
    return needs


def roles_without_key_grants(template: Mapping[str, Any]) -> list[str]:
    grants = key_grants(template)
    return [
        f"{role_id}: uses {key_id} but is not given {' and '.join(KEY_USE)} on it"
        f" (its key policy or the key's users policy)"
        for role_id, keys in sorted(key_uses(template).items())
        for key_id in sorted(keys)
        if role_id not in grants.get(key_id, set())
    ]


# ---------------------------------------------------------------------------- buckets


def buckets_without_versioning(template: Mapping[str, Any]) -> list[str]:
    return [
        f"{logical_id}: a bucket without versioning"
        for logical_id, resource in _resources(template, BUCKET)
        if (_properties(resource).get("VersioningConfiguration") or {}).get("Status") != "Enabled"
    ]


def _denies_plain_http(statement: Mapping[str, Any], bucket_id: str) -> bool:
    condition = (statement.get("Condition") or {}).get("Bool") or {}
    resources = {
        (_get_att(item), "whole")
        if _get_att(item)
        else (next(iter(_referenced(item)), None), "objects")
        for item in _listed(statement.get("Resource"))
    }
    return (
        statement.get("Effect") == "Deny"
        and statement.get("Principal") == "*"
        and "s3:*" in _listed(statement.get("Action"))
        and str(condition.get("aws:SecureTransport")).lower() == "false"
        and {(bucket_id, "whole"), (bucket_id, "objects")} <= resources
    )


def buckets_without_tls_policy(template: Mapping[str, Any]) -> list[str]:
    protected = {
        _ref(_properties(policy).get("Bucket"))
        for _, policy in _resources(template, "AWS::S3::BucketPolicy")
        if any(
            _denies_plain_http(statement, str(_ref(_properties(policy).get("Bucket"))))
            for statement in _listed(
                (_properties(policy).get("PolicyDocument") or {}).get("Statement")
            )
        )
    }
    return [
        f"{logical_id}: no bucket policy denies requests without TLS (aws:SecureTransport)"
        for logical_id, _ in _resources(template, BUCKET)
        if logical_id not in protected
    ]


# ---------------------------------------------------------------------------- backup


def tables_without_backup(template: Mapping[str, Any]) -> list[str]:
    plans = {
        plan_id
        for plan_id, plan in _resources(template, "AWS::Backup::BackupPlan")
        if any(
            str(rule.get("ScheduleExpression", "")).startswith("cron(")
            and (rule.get("Lifecycle") or {}).get("DeleteAfterDays") == BACKUP_DAYS
            and str(rule["ScheduleExpression"]).endswith("* * ? *)")
            for rule in (_properties(plan).get("BackupPlan") or {}).get("BackupPlanRule") or []
        )
    }
    covered: set[str] = set()
    for _, selection in _resources(template, "AWS::Backup::BackupSelection"):
        properties = _properties(selection)
        if _ref(properties.get("BackupPlanId")) in plans:
            chosen = (properties.get("BackupSelection") or {}).get("Resources") or []
            covered |= {r for r in map(_get_att, chosen) if r is not None}
    return [
        f"{logical_id}: a table no daily {BACKUP_DAYS}-day backup plan selects"
        for logical_id, _ in _resources(template, TABLE)
        if logical_id not in covered
    ]


# ---------------------------------------------------------------------------- traces


def functions_capturing_traces(template: Mapping[str, Any]) -> list[str]:
    """Responses carry callers' names and numbers: X-Ray must never record them."""
    problems = []
    for function_id, resource in _resources(template, FUNCTION):
        variables = (_properties(resource).get("Environment") or {}).get("Variables") or {}
        problems += [
            f'{function_id}: {name} is not "false"'
            for name in TRACER_CAPTURE
            if variables.get(name) != "false"
        ]
    return problems


RULES: Final = (
    not_retained,
    tables_without_deletion_protection,
    stores_without_our_keys,
    keys_without_rotation,
    roles_without_key_grants,
    buckets_without_versioning,
    buckets_without_tls_policy,
    tables_without_backup,
    functions_capturing_traces,
)


def problems(template: Mapping[str, Any]) -> list[str]:
    return [problem for rule in RULES for problem in rule(template)]
