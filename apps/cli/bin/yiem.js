#!/usr/bin/env node
// `yiem`: runs the compiled CLI (`npm run build` makes apps/cli/dist).
await import("../dist/main.js");
