"""The AdminIssue the admin API writes, for tests that compare whole issues."""

from typing import Any


def admin_issue(message: str, severity: str = "error", **where: Any) -> dict[str, Any]:
    """`where` is the locator (index, id or userId); `level` and `reason` repeat `severity` and
    `message` under their deprecated names (apps.core.bulk.Issues)."""
    return {**where, "severity": severity, "message": message, "level": severity, "reason": message}
