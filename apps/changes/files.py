"""The configuration file as text (YAML, or JSON, which is YAML too) and a plan as lines for
people (`manage.py config apply --dry-run`, the dashboard's promote page)."""

import json
from typing import Any

import yaml

from apps.changes.domain import CHANGE, CREATE, Step
from apps.core import portable
from apps.core.errors import ValidationError


class _Dumper(yaml.SafeDumper):
    pass


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Templates' HTML as a block of lines, not one quoted line of "\n"s.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


class _Loader(yaml.SafeLoader):
    """YAML as JSON sees it: a date stays the text it is (the API takes dates as text)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def dumps(doc: dict[str, Any], format: str = "yaml") -> str:
    if format == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    text: str = yaml.dump(
        doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, indent=2
    )
    return text


def loads(text: str | bytes) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise ValidationError(f"The configuration file is not valid YAML: {exc}") from None


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def removal(step: Step) -> str:
    """What removing the object does: archive it, or delete it where its kind has no archive."""
    kind = portable.kind(step.kind)
    if isinstance(kind, portable.CollectionKind) and (
        kind.archived is not None or kind.deletion_archives
    ):
        return "archive"
    return "delete"


def step_lines(step: Step) -> list[str]:
    label = portable.kind(step.kind).label
    if step.action == CREATE:
        return [f"+ create {label} {step.key}"]
    if step.action == CHANGE:
        return [f"~ change {label} {step.key}"] + [
            f"    {name}: {_value(now)} -> {_value(then)}"
            for name, (now, then) in step.fields.items()
        ]
    return [f"- {removal(step)} {label} {step.key}"]


def plan_text(steps: list[Step]) -> str:
    if not steps:
        return "No changes: the configuration is already what the file says.\n"
    lines = [line for step in steps for line in step_lines(step)]
    counts = {
        action: sum(step.action == action for step in steps)
        for action in ("create", "change", "remove")
    }
    lines.append(
        f"{counts['create']} to create, {counts['change']} to change, {counts['remove']} to remove."
    )
    return "\n".join(lines) + "\n"
