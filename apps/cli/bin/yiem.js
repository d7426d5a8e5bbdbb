#!/usr/bin/env node
// `yiem`: runs the TypeScript sources of the CLI through tsx (no build step needed).
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
