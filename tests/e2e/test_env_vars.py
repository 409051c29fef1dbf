"""`psap-local env-vars` gives SAM's containers what each function reads
(docs/local-development.md).

Docker is not needed to check it: SAM's own template provider loads template.yaml with the
parameters the documented command line passes, and SAM's own EnvironmentVariables resolves
each function's container environment from the env-vars file and the shell's credentials
(`psap-local env-vars --credentials`), exactly as `sam local invoke` does before it starts a
container. That environment must hold every variable the local stack's worker gives the
function (the sample events prove that one is enough to run it) with the same value, and
every variable the code reads must be declared for some function or have a default.
"""

import io
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from local.env_vars import env_vars_main
from local.invoke import LOCAL_PARAMETERS, role_session
from local.invoke import RunningStackFacts as Stack
from local.runtime import worker_environment
from local.template import load_template

pytestmark = [
    pytest.mark.e2e,
    # SAM's provider validates the template with APIs its own libraries deprecate.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:samcli.*"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:samtranslator.*"),
]

ROOT = Path(__file__).resolve().parents[2]
# Set by the Lambda service itself, in AWS and in SAM's container alike.
LAMBDA_PROVIDED = {
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
}
# Read with a default in the code, so a function that is not given them still runs.
READ_WITH_A_DEFAULT = {
    "AWS_ENDPOINT_URL",  # none on AWS; the local stack and SAM set it
    "AWS_EXECUTION_ENV",  # Lambda's runtime sets it; read to refuse the fault injector there
    "CAD_INTAKE_MAX_RECEIVES",
    "INDEX_REFRESH_SECONDS",
    "LICENSE_CACHE_SECONDS",
    "CREDENTIAL_KIND",
    "TENANT_RATE_LIMITS",
    "KNOWLEDGE_DIGEST_MAX_RECEIVES",
    "PSAP_ARCHIVE_KEY",  # the operator's offboarding CLI, never a function
}
READS = re.compile(
    r'(?:os\.environ(?:\.get)?[\[(]|os\.getenv\(|read\.[a-z_]+\(|environment\.get\()"([A-Z][A-Z0-9_]+)"'
)


def _code_reads(folder: Path) -> set[str]:
    return {name for path in folder.rglob("*.py") for name in READS.findall(path.read_text())}


@pytest.fixture(scope="module")
def env_vars_file(stack_state_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sam") / "env.json"
    with path.open("w", encoding="utf-8") as out:
        assert env_vars_main(["--state-file", str(stack_state_file)], stack_state_file, out) == 0
    return path


@pytest.fixture(scope="module")
def sam_functions(stack: dict[str, Any]) -> dict[str, Any]:
    """template.yaml as SAM's provider loads it for the documented command line."""
    from samcli.lib.providers.sam_function_provider import SamFunctionProvider
    from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider

    overrides = {**LOCAL_PARAMETERS, "LocalAwsEndpoint": stack["awsEndpointUrl"]}
    # SAM's YAML parser makes PyYAML's SafeLoader build OrderedDicts for the whole process
    # (which SafeDumper cannot write): the loader's constructors are put back after it.
    constructors = dict(yaml.SafeLoader.yaml_constructors)
    try:
        stacks, _ = SamLocalStackProvider.get_stacks(
            str(ROOT / "template.yaml"), parameter_overrides=overrides
        )
        provider = SamFunctionProvider(stacks, ignore_code_extraction_warnings=True)
        return {function.name: function for function in provider.get_all()}
    finally:
        yaml.SafeLoader.yaml_constructors = constructors


def _sam_environment(
    function: Any, env_vars: dict[str, Any], shell: dict[str, str]
) -> dict[str, str]:
    """What SAM's LocalLambdaRunner gives the function's container (its _make_env_vars)."""
    from samcli.local.lambdafn.env_vars import EnvironmentVariables

    overrides = {**env_vars.get("Parameters", {}), **env_vars.get(function.name, {})}
    variables = (function.environment or {}).get("Variables") or {}
    resolved: dict[str, str] = EnvironmentVariables(
        function.name,
        function.memory,
        function.timeout,
        function.handler,
        variables=variables,
        shell_env_values={},
        override_values=overrides,
        aws_creds={
            "region": "us-east-1",
            "key": shell["AWS_ACCESS_KEY_ID"],
            "secret": shell["AWS_SECRET_ACCESS_KEY"],
            "sessiontoken": shell["AWS_SESSION_TOKEN"],
        },
    ).resolve()
    return resolved


def _shell_credentials(state_file: Path, function_id: str) -> dict[str, str]:
    """What `eval "$(psap-local env-vars --credentials FUNCTION)"` puts in the shell."""
    out = io.StringIO()
    assert env_vars_main(["--credentials", function_id], state_file, out) == 0
    assignments = [
        shlex.split(line.removeprefix("export "))[0] for line in out.getvalue().splitlines()
    ]
    return dict(assignment.split("=", 1) for assignment in assignments)


def test_sam_gives_each_function_what_the_local_stack_gives_it(
    stack: dict[str, Any],
    stack_state_file: Path,
    env_vars_file: Path,
    sam_functions: dict[str, Any],
) -> None:
    # Given the env-vars file of the running stack and the stack's own functions
    env_vars = json.loads(env_vars_file.read_text())
    facts = Stack(stack)
    template = load_template(
        stack_name=facts.stack_name,
        sqs_endpoint=facts.endpoint_url,
        parameter_overrides=facts.parameter_overrides,
    )
    assert set(env_vars) == set(template.functions) == set(sam_functions)
    missing: dict[str, Any] = {}
    for function_id, function in template.functions.items():
        # When SAM resolves the function's container environment, with its role's session
        # in the shell (what `psap-local env-vars --credentials` prints, checked below)
        shell = role_session(facts, function)
        in_sam = _sam_environment(sam_functions[function_id], env_vars, shell)
        # Then it has every variable the local stack's worker gives the function, equal
        worker = worker_environment(function, facts.endpoint_url, credentials=shell)
        wanted = {*function.environment, "AWS_ENDPOINT_URL", *LAMBDA_PROVIDED}
        wrong = {
            name: (worker[name], in_sam.get(name))
            for name in wanted
            if in_sam.get(name) != worker[name]
        }
        if wrong:
            missing[function_id] = wrong
    assert missing == {}
    # And `eval "$(psap-local env-vars --credentials F)"` puts that session in the shell
    function = template.functions["KnowledgeGetFunction"]
    assert _shell_credentials(stack_state_file, function.logical_id) == role_session(
        facts, function
    )


def test_every_variable_the_code_reads_is_given_or_has_a_default(
    env_vars_file: Path,
) -> None:
    env_vars = json.loads(env_vars_file.read_text())
    given = {name for variables in env_vars.values() for name in variables}
    reads = _code_reads(ROOT / "layers" / "shared" / "psap") | _code_reads(ROOT / "functions")
    assert reads - given - READ_WITH_A_DEFAULT == set()
    # And a function's own code reads only what its own entry gives it
    for function in load_template().functions.values():
        own = _code_reads(function.code_dir) - READ_WITH_A_DEFAULT - LAMBDA_PROVIDED
        assert own <= set(env_vars[function.logical_id]), function.logical_id
