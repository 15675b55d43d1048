#!/usr/bin/env node
// Reads the provider SDK packages installed in the SDK cache (npm packages under
// <cache>/node_modules, plus schema fragments written by sdk_schema_py.py for PyPI packages) and
// writes <cache>/schema.json: for every package, its resources and functions by type token, with
// their inputs (required or not, and their shapes), their outputs, and the object types they use.
//
// Tokens come from the packages' JavaScript (`static __pulumiType = '…'`,
// `runtime.invoke("…")`); shapes from the `.d.ts` (`<Resource>Args` interfaces, optional members
// with `?`, the class's `pulumi.Output<…>` members), read with the TypeScript compiler API.
//
// Usage: scripts/lib/pins | sdk-schema.js CACHE_DIR
// (the pins on standard input, normalised by scripts/lib/pins: `name version source` a line).
"use strict";

const fs = require("fs");
const path = require("path");

const [cache] = process.argv.slice(2);
if (!cache) {
  console.error("usage: scripts/lib/pins | sdk-schema.js CACHE_DIR");
  process.exit(2);
}
const ts = require(path.join(cache, "node_modules", "typescript"));

const pins = fs
  .readFileSync(0, "utf8")
  .split("\n")
  .filter((l) => l.trim())
  .map((l) => {
    const [name, version, source] = l.trim().split(/\s+/);
    const [kind, ...rest] = source.split(":");
    return { name, version, source: { kind, name: rest.join(":") } };
  });
const modules = path.join(cache, "node_modules");

// ---------------------------------------------------------------- tokens from the JavaScript

/** Files of a package, recursively, ending in `ext`. */
function files(dir, ext, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules") files(p, ext, out);
    } else if (e.name.endsWith(ext)) out.push(p);
  }
  return out;
}

/** The classes with a `__pulumiType` in a .js file: class name → token. */
const tokensOfJs = new Map();
function classTokens(jsFile) {
  if (tokensOfJs.has(jsFile)) return tokensOfJs.get(jsFile);
  const found = new Map();
  let text = "";
  try {
    text = fs.readFileSync(jsFile, "utf8");
  } catch {
    tokensOfJs.set(jsFile, found);
    return found;
  }
  const re = /static __pulumiType = '([^']+)'|(\w+)\.__pulumiType = '([^']+)'/g;
  let m;
  while ((m = re.exec(text))) {
    let name, token;
    if (m[1]) {
      token = m[1];
      const before = text.slice(0, m.index);
      const cls = [...before.matchAll(/class (\w+)/g)].pop();
      name = cls ? cls[1] : undefined;
    } else {
      name = m[2];
      token = m[3];
    }
    if (!name) continue;
    const provider = /isInstance[\s\S]{0,200}"pulumi:providers:" \+/.test(text) || !token.includes(":");
    found.set(name, provider ? `pulumi:providers:${token}` : token);
  }
  tokensOfJs.set(jsFile, found);
  return found;
}

/** Properties a .js constructor refuses to go without ("Missing required property 'x'"). */
function jsRequired(jsFile) {
  const text = fs.readFileSync(jsFile, "utf8");
  return new Set([...text.matchAll(/Missing required property '([^']+)'/g)].map((m) => m[1]));
}

/** Functions of a .js file that invoke a token: function name → token. */
function functionTokens(jsFile) {
  const text = fs.readFileSync(jsFile, "utf8");
  const out = new Map();
  for (const m of text.matchAll(/runtime\.invoke(?:Single)?\(\s*"([^"]+)"/g)) {
    const before = text.slice(0, m.index);
    const fn = [...before.matchAll(/function (\w+)\s*\(/g)].pop();
    if (fn && !out.has(fn[1])) out.set(fn[1], m[1]);
  }
  return out;
}

// ---------------------------------------------------------------- shapes from the .d.ts

const resourceBases = /(?:^|\.)(CustomResource|ComponentResource|ProviderResource)$/;

function main() {
  const packages = {};
  const roots = [];
  const plan = []; // { pkg, kind, dts, js, name, token }
  for (const pin of pins) {
    if (pin.source.kind !== "npm") continue;
    const dir = path.join(modules, pin.source.name);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
    if (manifest.version !== pin.version) {
      throw new Error(`${pin.source.name} in the cache is ${manifest.version}, the pin is ${pin.version}: run scripts/install-test-tools`);
    }
    packages[pin.name] = {
      source: `${pin.source.name}@${pin.version}`,
      version: pin.version,
      requiresPulumi: (manifest.dependencies || {})["@pulumi/pulumi"] || null,
      resources: {},
      functions: {},
      types: {},
    };
    for (const js of files(dir, ".js")) {
      const dts = js.replace(/\.js$/, ".d.ts");
      if (!fs.existsSync(dts)) continue;
      const classes = classTokens(js);
      const fns = functionTokens(js);
      if (classes.size === 0 && fns.size === 0) continue;
      roots.push(dts);
      for (const [name, token] of classes) plan.push({ pkg: pin.name, kind: "resource", dts, js, name, token });
      for (const [name, token] of fns) plan.push({ pkg: pin.name, kind: "function", dts, js, name, token });
    }
  }

  const program = ts.createProgram(roots, {
    noEmit: true,
    skipLibCheck: true,
    types: [],
    noLib: true,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    baseUrl: modules,
  });
  const checker = program.getTypeChecker();

  /** The package a declaration belongs to: the pin whose npm directory holds its file. */
  function pkgOfFile(file) {
    for (const pin of pins) {
      if (pin.source.kind === "npm" && file.startsWith(path.join(modules, pin.source.name) + path.sep)) return pin.name;
    }
    return null;
  }

  const typeKeys = new Map(); // declaration → key
  function declKey(decl) {
    if (typeKeys.has(decl)) return typeKeys.get(decl);
    const file = decl.getSourceFile().fileName;
    const pkg = pkgOfFile(file) || "pulumi";
    const base = path.join(modules, pinSource(pkg));
    let rel = path.relative(base, file).replace(/\.d\.ts$/, "").split(path.sep).join("/");
    const names = [];
    for (let n = decl; n; n = n.parent) {
      if ((ts.isInterfaceDeclaration(n) || ts.isModuleDeclaration(n) || ts.isClassDeclaration(n)) && n.name) names.unshift(n.name.text);
    }
    const key = `${pkg}:${rel}#${names.join(".")}`;
    typeKeys.set(decl, key);
    return key;
  }
  function pinSource(pkg) {
    const pin = pins.find((p) => p.name === pkg);
    return pin && pin.source.kind === "npm" ? pin.source.name : "@pulumi/pulumi";
  }

  const pending = []; // interfaces to describe: [key, decl, pkg]
  const described = new Set();

  function symbolOf(typeName) {
    let s = checker.getSymbolAtLocation(typeName);
    if (s && s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s);
    return s;
  }

  function literalValues(type) {
    const parts = type.isUnion() ? type.types : [type];
    const values = [];
    for (const t of parts) {
      if (t.isStringLiteral() || t.isNumberLiteral()) values.push(t.value);
      else if (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) continue;
      else return null;
    }
    return values.length ? values : null;
  }

  /** A TypeScript type node as a schema type. */
  function convert(node, depth = 0) {
    if (!node || depth > 40) return "any";
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return "string";
      case ts.SyntaxKind.NumberKeyword:
        return "number";
      case ts.SyntaxKind.BooleanKeyword:
        return "boolean";
      case ts.SyntaxKind.AnyKeyword:
      case ts.SyntaxKind.UnknownKeyword:
      case ts.SyntaxKind.ObjectKeyword:
        return "any";
      case ts.SyntaxKind.ParenthesizedType:
        return convert(node.type, depth + 1);
      case ts.SyntaxKind.ArrayType:
        return { array: convert(node.elementType, depth + 1) };
      case ts.SyntaxKind.LiteralType: {
        const l = node.literal;
        if (ts.isStringLiteral(l)) return { enum: [l.text] };
        if (ts.isNumericLiteral(l)) return { enum: [Number(l.text)] };
        if (l.kind === ts.SyntaxKind.TrueKeyword || l.kind === ts.SyntaxKind.FalseKeyword) return "boolean";
        return "any";
      }
      case ts.SyntaxKind.UnionType: {
        const members = node.types.filter(
          (t) => !(t.kind === ts.SyntaxKind.UndefinedKeyword || (t.kind === ts.SyntaxKind.LiteralType && t.literal.kind === ts.SyntaxKind.NullKeyword)),
        );
        const converted = members.map((t) => convert(t, depth + 1));
        return union(converted);
      }
      case ts.SyntaxKind.TypeLiteral: {
        const index = node.members.find((m) => ts.isIndexSignatureDeclaration(m));
        if (index) return { map: convert(index.type, depth + 1) };
        return { object: inlineProperties(node.members, depth + 1) };
      }
      case ts.SyntaxKind.TypeReference:
        return reference(node, depth + 1);
      default:
        return "any";
    }
  }

  function union(types) {
    const out = [];
    const seen = new Set();
    let enumValues = [];
    let openString = false;
    for (const t of types) {
      if (t && t.enum) {
        enumValues.push(...t.enum);
        continue;
      }
      if (t === "string") openString = true;
      const k = JSON.stringify(t);
      if (!seen.has(k)) {
        seen.add(k);
        out.push(t);
      }
    }
    if (enumValues.length && !openString) {
      const e = { enum: [...new Set(enumValues)] };
      out.push(e);
    }
    if (out.length === 0) return "any";
    if (out.length === 1) return out[0];
    if (out.includes("any")) return "any";
    return { union: out };
  }

  function inlineProperties(members, depth) {
    const props = {};
    for (const m of members) {
      if (!ts.isPropertySignature(m) || !m.name) continue;
      const name = m.name.text ?? m.name.getText();
      props[name] = { type: convert(m.type, depth), required: !m.questionToken && !acceptsUndefined(m.type) };
    }
    return props;
  }

  function acceptsUndefined(typeNode) {
    return false && typeNode;
  }

  function reference(node, depth) {
    const name = node.typeName.getText();
    const args = node.typeArguments || [];
    if (/^(pulumi\.)?(Input|Output|Promise|Lifted)$/.test(name) || name === "Promise") return convert(args[0], depth);
    if (name === "Array" || name === "ReadonlyArray") return { array: convert(args[0], depth) };
    if (name === "Record") return { map: convert(args[1], depth) };
    if (/(^|\.)(Asset|FileAsset|StringAsset|RemoteAsset)$/.test(name) && /asset/.test(name)) return "asset";
    if (/(^|\.)(Archive|AssetArchive|FileArchive|RemoteArchive)$/.test(name) && /asset/.test(name)) return "archive";
    if (/^pulumi\.(ID|URN)$/.test(name)) return "string";
    if (/^pulumi\.(Resource|CustomResource|ComponentResource|ProviderResource)$/.test(name)) return { resource: "*" };
    return fromSymbol(symbolOf(node.typeName), depth);
  }

  function fromSymbol(sym, depth) {
    if (!sym || !sym.declarations || sym.declarations.length === 0) return "any";
    const decls = sym.declarations;
    const cls = decls.find(ts.isClassDeclaration);
    if (cls) {
      const heritage = (cls.heritageClauses || []).flatMap((h) => h.types.map((t) => t.expression.getText()));
      if (heritage.some((h) => resourceBases.test(h))) {
        const js = cls.getSourceFile().fileName.replace(/\.d\.ts$/, ".js");
        const token = classTokens(js).get(cls.name.text);
        return { resource: token || "*" };
      }
      return "any";
    }
    const iface = decls.find(ts.isInterfaceDeclaration);
    if (iface) {
      if (iface.members.some((m) => ts.isIndexSignatureDeclaration(m)) && !iface.members.some(ts.isPropertySignature)) {
        return { map: convert(iface.members.find(ts.isIndexSignatureDeclaration).type, depth) };
      }
      const key = declKey(iface);
      if (!described.has(key)) {
        described.add(key);
        pending.push([key, iface]);
      }
      return { ref: key };
    }
    const alias = decls.find(ts.isTypeAliasDeclaration);
    if (alias && ts.isImportTypeNode(alias.type)) {
      // The SDKs' lazy-loading re-exports: `export type X = import("./x").X`.
      const target = checker.getTypeFromTypeNode(alias.type);
      const s = target && (target.aliasSymbol || target.symbol);
      return s && s !== sym ? fromSymbol(s, depth + 1) : "any";
    }
    if (alias) {
      const values = literalValues(checker.getDeclaredTypeOfSymbol(sym));
      if (values) return { enum: values };
      return convert(alias.type, depth);
    }
    const en = decls.find(ts.isEnumDeclaration);
    if (en) {
      const values = literalValues(checker.getDeclaredTypeOfSymbol(sym));
      return values ? { enum: values } : "any";
    }
    return "any";
  }

  function interfaceProperties(iface) {
    const props = {};
    // Members of the interface and of those it extends.
    const seen = new Set();
    const walk = (decl) => {
      if (seen.has(decl)) return;
      seen.add(decl);
      for (const m of decl.members) {
        if (!ts.isPropertySignature(m) || !m.name) continue;
        const name = m.name.text ?? m.name.getText();
        if (name in props) continue;
        props[name] = { type: convert(m.type), required: !m.questionToken };
      }
      for (const h of decl.heritageClauses || []) {
        for (const t of h.types) {
          const s = symbolOf(t.expression);
          const d = s && s.declarations && s.declarations.find(ts.isInterfaceDeclaration);
          if (d) walk(d);
        }
      }
    };
    walk(iface);
    return props;
  }

  function findDecl(sf, name, pred) {
    let found = null;
    const visit = (n) => {
      if (found) return;
      if (pred(n) && n.name && n.name.text === name) {
        found = n;
        return;
      }
      if (ts.isSourceFile(n) || ts.isModuleDeclaration(n) || ts.isModuleBlock(n)) ts.forEachChild(n, visit);
    };
    visit(sf);
    return found;
  }

  function typeOfParam(p) {
    if (!p || !p.type) return null;
    return p.type;
  }

  for (const item of plan) {
    const sf = program.getSourceFile(item.dts);
    if (!sf) continue;
    const pkg = packages[item.pkg];
    if (item.kind === "resource") {
      const cls = findDecl(sf, item.name, ts.isClassDeclaration);
      if (!cls) continue;
      const ctor = cls.members.find((m) => ts.isConstructorDeclaration(m));
      const argsNode = ctor && typeOfParam(ctor.parameters[1]);
      let inputs = {};
      if (argsNode && ts.isTypeReferenceNode(argsNode)) {
        const s = symbolOf(argsNode.typeName);
        const d = s && s.declarations && s.declarations.find(ts.isInterfaceDeclaration);
        if (d) inputs = interfaceProperties(d);
      }
      for (const r of jsRequired(item.js)) if (inputs[r]) inputs[r].required = true;
      const outputs = {};
      for (const m of cls.members) {
        if (!ts.isPropertyDeclaration(m) || !m.name) continue;
        if ((m.modifiers || []).some((x) => x.kind === ts.SyntaxKind.StaticKeyword)) continue;
        const name = m.name.text ?? m.name.getText();
        if (name.startsWith("__")) continue;
        outputs[name] = convert(m.type);
      }
      const component = (cls.heritageClauses || []).some((h) => h.types.some((t) => /ComponentResource$/.test(t.expression.getText())));
      pkg.resources[item.token] = { inputs, outputs, ...(component ? { component: true } : {}) };
    } else {
      const fn = findDecl(sf, item.name, ts.isFunctionDeclaration);
      if (!fn) continue;
      let inputs = {};
      const argsNode = typeOfParam(fn.parameters[0]);
      if (argsNode && ts.isTypeReferenceNode(argsNode)) {
        const s = symbolOf(argsNode.typeName);
        const d = s && s.declarations && s.declarations.find(ts.isInterfaceDeclaration);
        if (d) inputs = interfaceProperties(d);
      }
      let outputs = {};
      let returns = null;
      const ret = fn.type;
      const inner = ret && ts.isTypeReferenceNode(ret) && ret.typeArguments ? ret.typeArguments[0] : ret;
      if (inner && ts.isTypeReferenceNode(inner)) {
        const s = symbolOf(inner.typeName);
        const d = s && s.declarations && s.declarations.find(ts.isInterfaceDeclaration);
        if (d) outputs = Object.fromEntries(Object.entries(interfaceProperties(d)).map(([k, v]) => [k, v.type]));
        else returns = convert(inner);
      } else if (inner) returns = convert(inner);
      pkg.functions[item.token] = { inputs, outputs, ...(returns ? { returns } : {}) };
    }
  }

  // Object types, as they are reached.
  while (pending.length) {
    const [key, decl] = pending.shift();
    const pkgName = key.split(":")[0];
    const target = packages[pkgName] || (packages.pulumi ||= { source: "@pulumi/pulumi", resources: {}, functions: {}, types: {} });
    target.types[key] = { properties: interfaceProperties(decl) };
  }

  // Packages from other registries (PyPI), described by their own extractor.
  for (const pin of pins) {
    if (pin.source.kind === "npm") continue;
    const fragment = path.join(cache, "fragments", `${pin.name}.json`);
    packages[pin.name] = JSON.parse(fs.readFileSync(fragment, "utf8"));
  }

  const schema = {
    schemaVersion: 1,
    about: "Provider SDK types, extracted by scripts/lib/sdk-schema.js from the packages pinned in scripts/provider-versions",
    pins: Object.fromEntries(pins.map((p) => [p.name, p.version])),
    packages,
  };
  const out = path.join(cache, "schema.json");
  fs.writeFileSync(out + ".tmp", layout(schema));
  fs.renameSync(out + ".tmp", out);
  const counts = Object.entries(packages).map(
    ([k, p]) => `${k}: ${Object.keys(p.resources).length} resources, ${Object.keys(p.functions).length} functions`,
  );
  console.error(`sdk-schema: wrote ${out} (${counts.join("; ")})`);
}

/**
 * JSON with one entry a line: a package's header, then each resource, function and object type
 * on a line of its own that starts with its quoted key. Any JSON reader reads it whole; the
 * Pulumi stand-in, which evaluates one program per process, finds the few entries it needs by
 * their line instead of parsing megabytes each time.
 */
function layout(schema) {
  const { packages, ...head } = schema;
  const parts = [];
  for (const [name, pkg] of Object.entries(packages)) {
    const { resources, functions, types, ...meta } = pkg;
    const section = (key, entries) =>
      `${JSON.stringify(key)}:{` +
      Object.entries(entries)
        .map(([k, v]) => `\n${JSON.stringify(k)}:${JSON.stringify(v)}`)
        .join(",") +
      "}";
    const metaJson = JSON.stringify(meta).slice(1, -1);
    parts.push(
      `\n${JSON.stringify(name)}:{${metaJson},${section("resources", resources)},${section("functions", functions)},${section("types", types)}}`,
    );
  }
  return `${JSON.stringify(head).slice(0, -1)},"packages":{${parts.join(",")}\n}}\n`;
}

main();
