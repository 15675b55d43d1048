// Reads scripts/provider-versions: one pin a line, `package version source`, `#` comments.
"use strict";
const fs = require("fs");

function readPins(file) {
  const pins = [];
  fs.readFileSync(file, "utf8")
    .split("\n")
    .forEach((raw, i) => {
      const line = raw.replace(/#.*/, "").trim();
      if (!line) return;
      const [name, version, source, ...rest] = line.split(/\s+/);
      const m = /^(npm|pypi):(.+)$/.exec(source || "");
      if (!version || !m || rest.length) {
        throw new Error(`${file}:${i + 1}: expected \`package version npm:<package>\` or \`… pypi:<package>\`, got ${JSON.stringify(raw)}`);
      }
      pins.push({ name, version, source: { kind: m[1], name: m[2] }, line: i + 1 });
    });
  return pins;
}

module.exports = { readPins };
