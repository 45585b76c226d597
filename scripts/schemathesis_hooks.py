"""schemathesis hooks for scripts/check-openapi.

The fund's GET takes one form-exploded object parameter (its views). A
negative case that adds a property whose value has no wire form (null, an
empty list or object) sends the very query it started from, which the
service rightly accepts; such cases cannot be told apart on the wire, so
they are not generated.

Two rules relate one parameter to another, which JSON Schema cannot state
for query parameters: a proof's `seq` is at most its `size`, and a
consistency proof's `from` is at most its `to` (both 400 `invalid_query`,
docs/log.md). Positive cases that break them are not generated either;
the fund's own tests cover those answers. A size beyond the log's head is a
state of the log, not of the request: it answers 404, which the check
accepts.
"""
import schemathesis


def _has_wire_form(value):
    if value is None:
        return False
    if isinstance(value, (list, dict)):
        return bool(value) and all(
            _has_wire_form(v) for v in (value.values() if isinstance(value, dict) else value)
        )
    return True


def _as_int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _breaks_a_relation(query):
    # The views' parameters arrive flat, or under the object parameter's
    # name, depending on how schemathesis serialises it at that point.
    if isinstance(query.get("query"), dict):
        query = query["query"]
    pairs = {"proof": ("seq", "size"), "consistency": ("from", "to")}
    view = query.get("view")
    pair = pairs.get(view) if isinstance(view, str) else None
    if pair is None:
        return False
    lower, upper = (_as_int(query.get(name)) for name in pair)
    return lower is not None and upper is not None and lower > upper


@schemathesis.hook
def filter_query(context, query):
    return query is None or all(_has_wire_form(v) for v in query.values())


# Cases rather than queries: the coverage phase builds its cases without
# the query strategy, and runs `filter_case` hooks only.
@schemathesis.hook
def filter_case(context, case):
    return not (isinstance(case.query, dict) and _breaks_a_relation(case.query))
