#!/usr/bin/env node
// `yiem-scripted-model`: runs the compiled command (in the Yiem repository, `npm run build` makes dist).
import { existsSync } from "node:fs";

const main = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(main)) {
  console.error(`yiem-scripted-model: ${main.pathname} is missing: run \`npm run build\` first`);
  process.exit(1);
}
await import(main.href);
