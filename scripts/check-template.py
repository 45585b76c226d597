#!/usr/bin/env python3
"""What the linters do not check in template.yaml: the shape docs/operating.md
("Deploying to AWS (SAM)") describes. Exits 1 with one line per problem.

Run by scripts/test after cfn-lint and `sam validate --lint`. Uses
cfn-lint's YAML decoder (it understands !Ref, !If, !Sub)."""
import sys
from cfnlint.decode import decode

template, matches = decode("template.yaml")
if matches:
    sys.exit(f"template.yaml does not parse: {matches}")
problems = []
def check(ok, message):
    if not ok:
        problems.append(message)

resources = template.get("Resources", {})
functions = {name: r for name, r in resources.items() if r.get("Type") == "AWS::Serverless::Function"}
# Each function is built from its own package directory (per-function features).
CODE_URIS = {"FundFunction": "functions/fund", "ScannerFunction": "functions/scanner"}
check(set(functions) == {"FundFunction", "ScannerFunction"}, f"two functions, fund and scanner: {sorted(functions)}")
globals_ = template.get("Globals", {}).get("Function", {})
for name, function in functions.items():
    props = {**globals_, **function.get("Properties", {})}
    check(props.get("Runtime") == "provided.al2023", f"{name}: Runtime is provided.al2023")
    check(props.get("Handler") == "bootstrap", f"{name}: Handler is bootstrap")
    check(props.get("Architectures") == ["x86_64"], f"{name}: Architectures is [x86_64]")
    check(function.get("Metadata", {}).get("BuildMethod") == "rust-cargolambda", f"{name}: BuildMethod rust-cargolambda")
    check(props.get("CodeUri") == CODE_URIS.get(name), f"{name}: CodeUri is its own package, {CODE_URIS.get(name)}")
    check(props.get("ReservedConcurrentExecutions") is None, f"{name}: no reserved concurrency (it serves public reads; the run lock keeps runs apart)")
    check(isinstance(props.get("MemorySize"), int) and isinstance(props.get("Timeout"), int), f"{name}: memory and timeout set")

# Minutes 0, 15, 30 and 45 of every hour: the ledger's 15-minute grid.
QUARTER_HOURS = "cron(0/15 * * * ? *)"
routes = set()
schedules = []
for name, function in functions.items():
    for event in function.get("Properties", {}).get("Events", {}).values():
        if event.get("Type") == "HttpApi":
            routes.add((name, event["Properties"]["Method"], event["Properties"]["Path"]))
        if event.get("Type") == "Schedule":
            schedules.append((name, event["Properties"].get("Schedule")))
expected = {
    ("FundFunction", "GET", "/"),
    ("FundFunction", "GET", "/api/freedom-fund"),
    ("FundFunction", "POST", "/api/freedom-fund"),
    ("FundFunction", "GET", "/log/checkpoint"),
    ("FundFunction", "GET", "/log/tile/{proxy+}"),
    ("FundFunction", "GET", "/feed.atom"),
    ("FundFunction", "GET", "/log/policy"),
    ("FundFunction", "POST", "/log/cosign"),
    ("ScannerFunction", "GET", "/api/freedom-scanner"),
    ("ScannerFunction", "POST", "/api/freedom-scanner"),
}
check(expected <= routes, f"routes missing: {sorted(expected - routes)}")
# The scanner on the quarter-hour grid; the fund's cosigning round once a
# minute (a no-op unless the log's head moved or a witness is behind).
check(sorted(schedules) == [("FundFunction", "rate(1 minute)"), ("ScannerFunction", QUARTER_HOURS)], f"the scanner runs on the quarter-hour grid, {QUARTER_HOURS}, and the fund cosigns once a minute: {schedules}")
fund = functions.get("FundFunction", {}).get("Properties", {})
check(fund.get("Timeout", 0) >= 15, "the fund's timeout covers a cosigning round (5 s per witness, twice)")
check("FF_LOG_POLICY" in fund.get("Environment", {}).get("Variables", {}), "the fund reads its witness policy, FF_LOG_POLICY")
scanner = functions.get("ScannerFunction", {}).get("Properties", {})
check(scanner.get("Timeout", 0) * 1000 < 300_000, "the scanner's timeout is shorter than its lock's 300 s expiry")

params = template.get("Parameters", {})
for secret in ("WriteToken", "KvRestApiToken", "LogSigningKey"):
    check(params.get(secret, {}).get("NoEcho") is True, f"parameter {secret} has NoEcho")
for needed in ("KvRestApiUrl", "EventBusName"):
    check(needed in params, f"parameter {needed} exists")
env = globals_.get("Environment", {}).get("Variables", {})
for variable in ("FF_AGENT_WRITE_TOKEN", "FF_KV_REST_API_URL", "FF_KV_REST_API_TOKEN", "FF_EVENT_BUS_NAME"):
    check(variable in env, f"environment variable {variable} is set")
check("ApiUrl" in template.get("Outputs", {}), "output ApiUrl exists")
# The log's key reaches the fund alone, never the scanner.
for name, function in functions.items():
    variables = function.get("Properties", {}).get("Environment", {}).get("Variables", {})
    signs = "FF_LOG_SIGNING_KEY" in variables
    check(signs == (name == "FundFunction"), f"{name}: FF_LOG_SIGNING_KEY only in the fund's environment")
check("FF_LOG_SIGNING_KEY" not in env, "FF_LOG_SIGNING_KEY is not a global variable (the scanner must not see it)")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print("template.yaml: functions, routes, schedules, parameters and outputs as designed")
