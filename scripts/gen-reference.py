#!/usr/bin/env python3
"""Generates docs/reference.md from the OpenAPI document
(worker/src/openapi.json), the error codes of docs/errors.md and the
examples a real test run captured (docs/reference-examples.json, written by
tests/tests/reference.rs).

Usage: scripts/gen-reference.py           # writes docs/reference.md
       scripts/gen-reference.py --check   # exits 1 if it is out of date

Deterministic: the same inputs give the same bytes (no clock, no ids).
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPENAPI = ROOT / "worker/src/openapi.json"
EXAMPLES = ROOT / "docs/reference-examples.json"
ERRORS = ROOT / "docs/errors.md"
OUT = ROOT / "docs/reference.md"
METHODS = ["get", "post", "put", "patch", "delete"]


def load_codes():
    """status -> [code, ...] from the table in docs/errors.md."""
    codes = {}
    for line in ERRORS.read_text().splitlines():
        m = re.match(r"^\| `([a-z_]+)` \| (\d{3}) \|", line)
        if m:
            codes.setdefault(m.group(2), []).append(m.group(1))
    return codes


def anchor(text):
    return re.sub(r"[^a-z0-9 -]", "", text.lower()).replace(" ", "-")


class Doc:
    def __init__(self, spec):
        self.spec = spec
        self.schemas = spec.get("components", {}).get("schemas", {})
        self.responses = spec.get("components", {}).get("responses", {})
        self.parameters = spec.get("components", {}).get("parameters", {})

    def deref(self, node, section):
        if isinstance(node, dict) and "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            return getattr(self, section).get(name, {}), name
        return node, None

    def type_of(self, schema):
        """A short type text, linking named schemas."""
        if not isinstance(schema, dict):
            return ""
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            return f"[{name}](#schema-{anchor(name)})"
        if "const" in schema:
            return f"`{json.dumps(schema['const'])}`"
        if "enum" in schema:
            return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
        if "allOf" in schema:
            return " & ".join(self.type_of(s) for s in schema["allOf"])
        if "oneOf" in schema or "anyOf" in schema:
            return " \\| ".join(self.type_of(s) for s in schema.get("oneOf", schema.get("anyOf")))
        t = schema.get("type", "")
        if isinstance(t, list):
            t = " \\| ".join(t)
        if t == "array" or (isinstance(schema.get("type"), list) and "array" in schema["type"]):
            return f"{self.type_of(schema.get('items', {}))}[]"
        if schema.get("format"):
            t = f"{t} ({schema['format']})"
        return t or "any"

    def fields(self, schema):
        """Markdown table rows for an object schema's properties."""
        schema, _ = self.deref(schema, "schemas")
        props = schema.get("properties", {})
        if not props:
            return []
        required = set(schema.get("required", []))
        rows = ["| field | type | required | notes |", "|---|---|---|---|"]
        for name, prop in props.items():
            notes = (prop.get("description", "") if isinstance(prop, dict) else "").replace("\n", " ")
            extra = []
            for k in ("minimum", "maximum", "minLength", "maxLength", "pattern", "default"):
                if isinstance(prop, dict) and k in prop:
                    extra.append(f"{k} `{prop[k]}`")
            if extra:
                notes = "; ".join(([notes] if notes else []) + extra)
            notes = notes.replace("|", "\\|")
            req = "yes" if name in required else "no"
            rows.append(f"| `{name}` | {self.type_of(prop)} | {req} | {notes} |")
        return rows


def auth_text(op, spec):
    security = op.get("security", spec.get("security"))
    if not security:
        return "public"
    names = []
    for alt in security:
        names.extend(alt.keys() or ["none"])
    words = {"bearerJwt": "dashboard JWT (`Authorization: Bearer`)", "apiKey": "API key (`X-Api-Key`)"}
    return ", or ".join(words.get(n, f"`{n}`") for n in names) or "public"


def example_block(e):
    lines = []
    url = e["url"]
    lines.append(f"Request: `{e['method'].upper()} {url}`")
    if e.get("request") is not None:
        lines += ["", "```json", json.dumps(e["request"], indent=2, ensure_ascii=False), "```"]
    lines += ["", f"Response `{e['status']}`:", ""]
    resp = e["response"]
    if isinstance(resp, str):
        lines += ["```text", resp.rstrip("\n"), "```"]
    else:
        lines += ["```json", json.dumps(resp, indent=2, ensure_ascii=False), "```"]
    return lines


def render():
    spec = json.loads(OPENAPI.read_text())
    doc = Doc(spec)
    codes = load_codes()
    examples = json.loads(EXAMPLES.read_text())["examples"] if EXAMPLES.exists() else []
    out = [
        "# API reference",
        "",
        "<!-- Generated by scripts/gen-reference.py from worker/src/openapi.json, docs/errors.md",
        "     and docs/reference-examples.json (captured by tests/tests/reference.rs). Do not edit:",
        "     scripts/test.sh fails when this file is out of date. -->",
        "",
        f"{spec['info']['title']}, API version {spec['info']['version']}. The machine-readable "
        "document is served at `GET /openapi.json`. Errors: docs/errors.md; words: docs/glossary.md; "
        "webhooks: docs/webhooks.md.",
        "",
        "Examples are real requests and answers from a test run against `wrangler dev`, with ids, "
        "hashes, tokens and times replaced by stable placeholders.",
        "",
    ]
    tags = [t["name"] for t in spec.get("tags", [])]
    by_tag = {}
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                op = item[method]
                tag = (op.get("tags") or ["Other"])[0]
                by_tag.setdefault(tag, []).append((path, method, op, item.get("parameters", [])))
    order = [t for t in tags if t in by_tag] + sorted(t for t in by_tag if t not in tags)
    out.append("## Routes")
    out.append("")
    for tag in order:
        out.append(f"- [{tag}](#{anchor(tag)})")
        for path, method, op, _ in by_tag[tag]:
            title = f"{method.upper()} {path}"
            out.append(f"  - [`{title}`](#{anchor(title)})")
    if spec.get("webhooks"):
        out.append("- [Webhook events](#webhook-events-sent-to-your-url)")
    out.append("- [Schemas](#schemas)")
    out.append("")
    for tag in order:
        out += [f"## {tag}", ""]
        for path, method, op, shared in by_tag[tag]:
            out += [f"### {method.upper()} {path}", ""]
            if op.get("summary"):
                out += [op["summary"].strip(), ""]
            if op.get("description"):
                out += [op["description"].strip(), ""]
            out += [f"Auth: {auth_text(op, spec)}.", ""]
            params = [doc.deref(p, "parameters")[0] for p in shared + op.get("parameters", [])]
            if params:
                out += ["| parameter | in | type | required | notes |", "|---|---|---|---|---|"]
                for p in params:
                    notes = p.get("description", "").replace("\n", " ").replace("|", "\\|")
                    out.append(
                        f"| `{p.get('name')}` | {p.get('in')} | {doc.type_of(p.get('schema', {}))} | "
                        f"{'yes' if p.get('required') else 'no'} | {notes} |"
                    )
                out.append("")
            body = op.get("requestBody")
            if body:
                body, _ = doc.deref(body, "responses")
                for ctype, media in body.get("content", {}).items():
                    req = "required" if body.get("required") else "optional"
                    out += [f"Request body ({ctype}, {req}): {doc.type_of(media.get('schema', {}))}", ""]
                    rows = doc.fields(media.get("schema", {}))
                    if rows:
                        out += rows + [""]
            out += ["| status | answer |", "|---|---|"]
            for status, resp in op.get("responses", {}).items():
                resp, name = doc.deref(resp, "responses")
                desc = resp.get("description", name or "").replace("\n", " ").replace("|", "\\|")
                schema_text = ""
                for media in resp.get("content", {}).values():
                    s = media.get("schema", {})
                    data = s.get("properties", {}).get("data") if isinstance(s, dict) else None
                    schema_text = doc.type_of(data) if data else doc.type_of(s)
                    break
                code_text = ""
                if status in codes and not status.startswith("2"):
                    code_text = " codes: " + ", ".join(f"`{c}`" for c in codes[status])
                cell = "; ".join(x for x in [desc, f"data: {schema_text}" if schema_text and status.startswith("2") else "", code_text.strip()] if x)
                out.append(f"| {status} | {cell} |")
            out.append("")
            mine = [e for e in examples if e["path"] == path and e["method"] == method]
            for i, e in enumerate(mine):
                label = "Example" if len(mine) == 1 else f"Example {i + 1}"
                out += [f"#### {label}", ""] + example_block(e) + [""]
    if spec.get("webhooks"):
        out += ["## Webhook events (sent to your url)", ""]
        out += [
            "The service POSTs these bodies to webhook urls, signed with `X-Service-Signature` "
            "(docs/webhooks.md). `POST /dashboard/webhooks/{id}/test` with `{\"type\": \"<event>\"}` "
            "sends a sample of any of them.",
            "",
        ]
        for name, item in spec["webhooks"].items():
            op = item.get("post", {})
            out += [f"### {name}", ""]
            if op.get("summary"):
                out += [op["summary"], ""]
            schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            data = next(
                (part["properties"]["data"] for part in schema.get("allOf", [])
                 if "data" in part.get("properties", {})),
                None,
            )
            body_text = "[WebhookEvent](#schema-webhookevent)"
            if data is not None:
                body_text += f" with `event` `\"{name}\"` and `data`: {doc.type_of(data)}"
            out += [f"Body: {body_text}", ""]
    out += ["## Schemas", ""]
    for name, schema in doc.schemas.items():
        out += [f"### Schema {name}", ""]
        if schema.get("description"):
            out += [schema["description"].replace("\n", " "), ""]
        rows = doc.fields(schema)
        out += (rows + [""]) if rows else [f"Type: {doc.type_of(schema)}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    text = render()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text() != text:
            print("docs/reference.md is out of date: run scripts/gen-reference.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
