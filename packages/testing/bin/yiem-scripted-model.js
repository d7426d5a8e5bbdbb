#!/usr/bin/env node
// `yiem-scripted-model`: runs the compiled command. In a checkout of the Yiem repository that
// has not been built (`npm run build` makes dist), it runs the TypeScript sources with tsx.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/cli/main.js", import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(new URL("../src/cli/main.ts", import.meta.url).href);
}
