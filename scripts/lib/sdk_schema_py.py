#!/usr/bin/env python3
"""Describes a Pulumi provider's Python SDK (installed with pip --target) in the schema format of
sdk-schema.js: resources and functions by type token, their inputs (required or not, shapes),
outputs, and the object types they use. Reads the source with the ast module; imports nothing.

Usage: sdk_schema_py.py SITE_DIR PACKAGE_NAME DISTRIBUTION VERSION  (JSON on standard output)

- A resource is a class deriving from pulumi.CustomResource / ComponentResource /
  ProviderResource; its token is the first argument of its super().__init__ call (a provider's is
  the package name: pulumi:providers:<name>).
- Its inputs are the @pulumi.getter properties of <Class>Args; required are the keyword-only
  parameters of <Class>Args.__init__ without a default. Its outputs are the class's getters.
- A function is a module-level def calling pulumi.runtime.invoke('<token>', __args__ …); its
  inputs are the keys of __args__, required when the parameter has no default; its outputs are
  the getters of the class passed as typ=.
"""
import ast
import json
import os
import re
import sys

site, name, dist, version = sys.argv[1:5]
root = os.path.join(site, dist.replace("-", "_"))

modules = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith(".py"):
            p = os.path.join(d, f)
            with open(p, encoding="utf-8") as fh:
                modules[p] = ast.parse(fh.read(), p)

classes = {}
for tree in modules.values():
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, node)


def dotted(n):
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute):
        return dotted(n.value) + "." + n.attr
    return ""


def getter_name(fn):
    """The wire name of a @pulumi.getter property, or None when fn is not one."""
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and dotted(d.func) == "pulumi.getter":
            for kw in d.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    return kw.value.value
            return fn.name
        if dotted(d) == "pulumi.getter":
            return camel(fn.name)
    return None


def camel(snake):
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


types = {}


def convert(n):
    if n is None:
        return "any"
    if isinstance(n, ast.Constant) and isinstance(n.value, str):
        try:
            return convert(ast.parse(n.value, mode="eval").body)
        except SyntaxError:
            return "any"
    if isinstance(n, ast.Subscript):
        head = dotted(n.value)
        arg = n.slice
        if head in ("Optional", "pulumi.Input", "pulumi.Output", "typing.Optional"):
            return convert(arg)
        if head in ("Sequence", "List", "list", "typing.Sequence"):
            return {"array": convert(arg)}
        if head in ("Mapping", "Dict", "dict", "typing.Mapping"):
            if isinstance(arg, ast.Tuple) and len(arg.elts) == 2:
                return {"map": convert(arg.elts[1])}
            return {"map": "any"}
        if head in ("Union", "typing.Union") and isinstance(arg, ast.Tuple):
            parts = [convert(e) for e in arg.elts]
            uniq = []
            for p in parts:
                if p not in uniq:
                    uniq.append(p)
            return uniq[0] if len(uniq) == 1 else {"union": uniq}
        return "any"
    head = dotted(n)
    simple = {
        "builtins.str": "string", "str": "string",
        "builtins.bool": "boolean", "bool": "boolean",
        "builtins.int": "integer", "int": "integer",
        "builtins.float": "number", "float": "number",
        "Any": "any", "typing.Any": "any",
        "pulumi.Asset": "asset", "pulumi.Archive": "archive",
    }
    if head in simple:
        return simple[head]
    cls = classes.get(head.split(".")[-1])
    if cls is not None:
        if resource_base(cls):
            return {"resource": resource_token(cls) or "*"}
        key = f"{name}:{cls.name}"
        if key not in types:
            types[key] = None
            types[key] = {"properties": class_properties(cls, "Input" in ast.unparse(cls))}
        return {"ref": key}
    return "any"


def resource_base(cls):
    for b in cls.bases:
        if dotted(b) in ("pulumi.CustomResource", "pulumi.ComponentResource", "pulumi.ProviderResource"):
            return dotted(b)
    return None


def resource_token(cls):
    for node in ast.walk(cls):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
                and isinstance(node.func.value, ast.Call) and dotted(node.func.value.func) == "super"
                and node.args and isinstance(node.args[0], ast.Constant)):
            token = node.args[0].value
            if resource_base(cls) == "pulumi.ProviderResource" or ":" not in token:
                return "pulumi:providers:" + token
            return token
    return None


def required_params(init):
    """Keyword-only parameters of __init__ without a default, by Python name."""
    if init is None:
        return set()
    args = init.args
    out = set()
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if d is None:
            out.add(a.arg)
    positional = args.args[1:]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    # defaults outnumbers positional only when positional-only parameters take defaults too: the
    # pairs stop where positional ends.
    for a, d in zip(positional, defaults, strict=False):
        if d is None:
            out.add(a.arg)
    return out


def class_properties(cls, _inputs):
    init = next((b for b in cls.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
    required = required_params(init)
    props = {}
    for b in cls.body:
        if isinstance(b, ast.FunctionDef):
            wire = getter_name(b)
            if wire is None or wire in props:
                continue
            props[wire] = {"type": convert(b.returns), "required": b.name in required}
    return props


resources = {}
functions = {}
for tree in modules.values():
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and resource_base(node):
            token = resource_token(node)
            if not token:
                continue
            args_cls = classes.get(node.name + "Args")
            inputs = class_properties(args_cls, True) if args_cls is not None else {}
            # Required properties the constructor checks ("Missing required property 'x'").
            for n in ast.walk(node):
                if isinstance(n, ast.Constant) and isinstance(n.value, str):
                    m = re.match(r"Missing required property '([^']+)'", n.value)
                    if m:
                        for wire, p in inputs.items():
                            if wire == m.group(1) or camel(m.group(1)) == wire:
                                p["required"] = True
            outputs = {}
            for b in node.body:
                if isinstance(b, ast.FunctionDef):
                    wire = getter_name(b)
                    if wire is not None:
                        outputs[wire] = convert(b.returns)
            entry = {"inputs": inputs, "outputs": outputs}
            if resource_base(node) == "pulumi.ComponentResource":
                entry["component"] = True
            resources[token] = entry
        elif isinstance(node, ast.FunctionDef) and not node.name.endswith("_output"):
            token, result = None, None
            for n in ast.walk(node):
                if (isinstance(n, ast.Call) and dotted(n.func) == "pulumi.runtime.invoke" and n.args
                        and isinstance(n.args[0], ast.Constant)):
                    token = n.args[0].value
                    for kw in n.keywords:
                        if kw.arg == "typ":
                            result = dotted(kw.value)
            if not token:
                continue
            required = required_params(node)
            params = {a.arg: a for a in node.args.args + node.args.kwonlyargs}
            inputs = {}
            for n in ast.walk(node):
                if (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Subscript)
                        and dotted(n.targets[0].value) == "__args__" and isinstance(n.targets[0].slice, ast.Constant)):
                    wire = n.targets[0].slice.value
                    py = dotted(n.value)
                    p = params.get(py)
                    inputs[wire] = {"type": convert(p.annotation) if p is not None else "any",
                                    "required": py in required}
            outputs = {}
            cls = classes.get(result or "")
            if cls is not None:
                outputs = {k: v["type"] for k, v in class_properties(cls, False).items()}
            functions[token] = {"inputs": inputs, "outputs": outputs}

json.dump({
    "source": f"{dist}@{version}",
    "version": version,
    "resources": resources,
    "functions": functions,
    "types": {k: v for k, v in types.items() if v is not None},
}, sys.stdout)
