"""MkDocs hooks: the reference pages the code writes, so they can never disagree with it.

A page marks where a table goes with ``<!-- generated: NAME -->``; the hook puts in the
CLI (every command and flag, from the parser), the settings (every ``JOBTABLE_`` variable),
the HTTP API (every operation, from the OpenAPI document, with its examples). The site also gets ``reference/openapi.json``, the document itself.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from typing import Any

GENERATED = re.compile(r"<!-- generated: ([a-z-]+) -->")
INTERNAL_VARIABLES = {
    "JOBTABLE_LISTEN_FD": "set by `--processes` for the processes it starts: the listening "
    "socket they share",
    "JOBTABLE_SUPERVISOR_FD": "set by `--processes` for the processes it starts: the pipe "
    "their supervisor's orders come on",
    "JOBTABLE_DJANGO_BACKEND": "set by `manage.py jobtable_worker` for the worker it runs: "
    "the `TASKS` backend it serves",
    "JOBTABLE_DJANGO_TASKS": "set by `manage.py jobtable_worker` for the worker it runs: "
    "the apps' task modules",
}
"""Variables jobtable sets for processes it starts itself; never set them by hand."""


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return GENERATED.sub(lambda found: WRITERS[found.group(1)](), markdown)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    document = json.dumps(_document(), indent=2) + "\n"
    files.append(File.generated(config, "reference/openapi.json", content=document))
    return files


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`"


def _parser() -> argparse.ArgumentParser:
    """The parser as a user without ``JOBTABLE_`` variables gets it."""
    saved = {
        name: os.environ.pop(name) for name in list(os.environ) if name.startswith("JOBTABLE_")
    }
    try:
        from jobtable.entrypoints.cli import build_parser

        return build_parser()
    finally:
        os.environ.update(saved)


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise LookupError("the parser has no commands")


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {}


def setting_of(action: argparse.Action) -> Any:
    """The setting (flag, variable, default, help) an action reads, or None for a flag that
    no ``JOBTABLE_`` variable sets (a bulk action's filter, on purpose)."""
    from jobtable.entrypoints.config import SETTINGS

    setting = SETTINGS.get(action.dest)
    return setting if setting is not None and setting.flag in action.option_strings else None


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _row(action: argparse.Action) -> str:
    if not action.option_strings:
        optional = " (optional)" if action.nargs == "?" else ""
        default = "unset" if action.default in (None, argparse.SUPPRESS) else _code(action.default)
        name = _code(action.metavar or action.dest.upper())
        return f"| {name}{optional} | (argument) | {default} | {_cell(action.help)} |"
    flag = action.option_strings[0]
    shown = flag if action.nargs == 0 else f"{flag} {action.metavar or action.dest.upper()}"
    setting = setting_of(action)
    if setting is not None:
        default = "unset" if setting.default is None else _code(setting.default)
        return f"| {_code(shown)} | {_code(setting.env)} | {default} | {_cell(setting.help)} |"
    default = _code("false") if action.nargs == 0 and action.default is False else "unset"
    return f"| {_code(shown)} | (none) | {default} | {_cell(action.help)} |"


def cli() -> str:
    parser = _parser()
    helps = _helps(parser)
    out = []
    for name, command in _commands(parser).items():
        usage = command.format_usage().removeprefix("usage: ").strip()
        out += [f"## `jobtable {name}`", "", _sentence(helps.get(name, "")), ""]
        if command.description:
            out += [command.description, ""]
        out += ["```text", usage, "```", ""]
        out += ["| argument | variable | default | what |", "| --- | --- | --- | --- |"]
        shown = [a for a in command._actions if not isinstance(a, argparse._HelpAction)]
        out += [_row(action) for action in shown]
        out.append("")
        for group in command._action_groups[2:]:  # after "positional arguments" and "options"
            flags = ", ".join(_code(a.option_strings[0]) for a in group._group_actions)
            out += [f"{flags}: {group.title}.", ""]
    return "\n".join(out)


def variables() -> str:
    from jobtable.entrypoints.config import SETTINGS
    from jobtable.entrypoints.wiring import TOKEN_ENV

    parser = _parser()
    used: dict[str, list[str]] = {}
    for name, command in _commands(parser).items():
        for action in command._actions:
            setting = setting_of(action)
            if setting is not None:
                used.setdefault(setting.env, []).append(name)
    out = ["| variable | flag | default | commands | what |", "| --- | --- | --- | --- | --- |"]
    for setting in sorted(SETTINGS.values(), key=lambda setting: setting.env):
        commands = ", ".join(_code(name) for name in used.get(setting.env, []))
        default = "unset" if setting.default is None else _code(setting.default)
        out.append(
            f"| {_code(setting.env)} | {_code(setting.flag)} | {default} | {commands} "
            f"| {_cell(setting.help)} |"
        )
    out.append(
        f"| {_code(TOKEN_ENV)} | (none) | unset | `serve`, `worker` | the API's bearer token; "
        "unset, `serve` keeps one in `<database>.token` (`jobtable.token` for PostgreSQL), "
        "mode 0600 |"
    )
    out += ["", "Set by jobtable itself, for processes it starts (never set them by hand):", ""]
    out += [f"- {_code(name)}: {what}." for name, what in sorted(INTERNAL_VARIABLES.items())]
    return "\n".join(out) + "\n"


def _document() -> dict[str, Any]:
    from jobtable.entrypoints.http.app import package_version
    from jobtable.entrypoints.http.openapi import openapi_document

    return openapi_document(package_version())


def _schema_name(media: dict[str, Any]) -> str | None:
    ref = media.get("schema", {}).get("$ref", "")
    return ref.rsplit("/", 1)[1] if ref else None


def _json_block(value: Any) -> list[str]:
    return ["```json", json.dumps(value, indent=2), "```", ""]


def http() -> str:
    document = _document()
    schemas = document["components"]["schemas"]
    out: list[str] = []
    tags = [tag["name"] for tag in document["tags"]]
    by_tag: dict[str, list[list[str]]] = {tag: [] for tag in tags}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "operationId" in operation:
                (tag,) = operation["tags"]  # one each: a second would show it twice
                by_tag[tag].append(_operation(method, path, operation, schemas))
    for tag in document["tags"]:
        out += [f"## {tag['name'].capitalize()}", "", tag["description"], ""]
        out += [line for operation in by_tag[tag["name"]] for line in operation]
    out += ["## Schemas", ""]
    for name, schema in schemas.items():
        what = "The OpenAPI 3.1 document itself." if name == "OpenApiDocument" else ""
        out += [f"### {name}", "", _cell(schema.get("description", what)), ""]
        properties = schema.get("properties", {})
        if properties:
            out += ["| field | type | what |", "| --- | --- | --- |"]
            for field, spec in properties.items():
                required = field in schema.get("required", [])
                kind = _type(spec) + ("" if required else ", optional")
                out.append(f"| `{field}` | {kind} | {_cell(spec.get('description', ''))} |")
            out.append("")
        elif "enum" in schema:
            out += [", ".join(_code(value) for value in schema["enum"]), ""]
    return "\n".join(out)


def _type(spec: dict[str, Any]) -> str:
    if "$ref" in spec:
        name = spec["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in spec:
        return " or ".join(_type(part) for part in spec["anyOf"])
    if "enum" in spec:
        return "one of " + ", ".join(_code(str(value)) for value in spec["enum"])
    if "const" in spec:
        return _code(json.dumps(spec["const"]))
    kind = spec.get("type", "any")
    if kind == "array" and "items" in spec:
        return f"array of {_type(spec['items'])}"
    return " or ".join(kind) if isinstance(kind, list) else str(kind)


def _operation(
    method: str, path: str, operation: dict[str, Any], schemas: dict[str, Any]
) -> list[str]:
    out = [f"### {operation['operationId']}", "", f"`{method.upper()} {path}`", ""]
    out += [operation["summary"][0].upper() + operation["summary"][1:] + ".", ""]
    if operation.get("description"):
        out += [operation["description"], ""]
    if operation.get("security") == []:
        out += ["Public: no token needed.", ""]
    parameters = operation.get("parameters", [])
    if parameters:
        out += ["| parameter | in | what |", "| --- | --- | --- |"]
        for parameter in parameters:
            out.append(
                f"| `{parameter['name']}` | {parameter['in']} "
                f"| {_cell(parameter.get('description', ''))} |"
            )
        out.append("")
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        name = _schema_name(body)
        out += [f"Request body: [{name}](#{str(name).lower()}), for example:", ""]
        out += _json_block(schemas[str(name)]["examples"][0])
    out += ["| status | answer |", "| --- | --- |"]
    for status, answer in sorted(operation["responses"].items()):
        media = (answer.get("content") or {}).get("application/json")
        name = _schema_name(media) if media else None
        shape = f" ([{name}](#{name.lower()}))" if name else ""
        out.append(f"| {status} | {_cell(answer.get('description', ''))}{shape} |")
    out.append("")
    for status, answer in operation["responses"].items():
        content = answer.get("content") or {}
        if status.startswith("2") and "application/json" in content:
            name = _schema_name(content["application/json"])
            if name and schemas[name].get("examples"):
                out += [f"Answer {status}, for example:", ""]
                out += _json_block(schemas[name]["examples"][0])
                break
        if status.startswith("2") and "text/event-stream" in content:
            out += [f"Answer {status}, for example:", "", "```text"]
            out += [content["text/event-stream"]["example"].rstrip("\n"), "```", ""]
            break
    return out


WRITERS = {"cli": cli, "variables": variables, "http": http}
