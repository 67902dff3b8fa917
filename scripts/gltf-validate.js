#!/usr/bin/env node
// gltf-validate.js: runs the Khronos glTF validator (npm gltf-validator) over
// every file named on the command line, in one process, and prints one JSON
// document: {"files": [{"path", "errors", "warnings", "infos", "messages"}]},
// messages being the validator's issues of severity error (0) and warning (1)
// as "CODE pointer: message". Exit status 0 when it ran (errors or not), 2
// when the validator is not installed, 1 on a file it could not read.
//
// The validator is looked up in $GLTF_VALIDATOR_DIR/node_modules, then
// .cache/gltf-validator/node_modules beside this script's repository (where
// .ci/run installs it), then node's own path.
'use strict';
const fs = require('fs');
const path = require('path');

function load() {
  const dirs = [];
  if (process.env.GLTF_VALIDATOR_DIR) dirs.push(path.join(process.env.GLTF_VALIDATOR_DIR, 'node_modules'));
  dirs.push(path.join(__dirname, '..', '.cache', 'gltf-validator', 'node_modules'));
  for (const d of dirs) {
    try { return require(path.join(d, 'gltf-validator')); } catch (e) { /* next */ }
  }
  try { return require('gltf-validator'); } catch (e) { return null; }
}

async function main() {
  const v = load();
  if (!v) {
    process.stderr.write('gltf-validate: gltf-validator is not installed (npm install --prefix .cache/gltf-validator gltf-validator)\n');
    process.exit(2);
  }
  const out = { validator: v.version(), files: [] };
  for (const p of process.argv.slice(2)) {
    let data;
    try { data = fs.readFileSync(p); } catch (e) {
      process.stderr.write(`gltf-validate: ${p}: ${e.message}\n`);
      process.exit(1);
    }
    const f = { path: p, errors: 0, warnings: 0, infos: 0, messages: [] };
    try {
      const r = await v.validateBytes(new Uint8Array(data), { uri: path.basename(p), maxIssues: 0 });
      f.errors = r.issues.numErrors;
      f.warnings = r.issues.numWarnings;
      f.infos = r.issues.numInfos;
      for (const m of r.issues.messages) {
        if (m.severity <= 1) f.messages.push(`${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer || ''}: ${m.message}`);
      }
    } catch (e) {
      f.errors = 1;
      f.messages.push(`error VALIDATOR ${String(e)}`);
    }
    out.files.push(f);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
main();
