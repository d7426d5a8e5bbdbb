import { fileURLToPath } from "node:url";

/** The repo's root folder (the processes' entries are relative to it). */
export const repoRoot = fileURLToPath(new URL("../", import.meta.url));

/** This folder: the soak's code, tool files (./tools) and figures. */
export const chaosDir = fileURLToPath(new URL("./", import.meta.url));

/** The figures `npm run chaos` writes and `scripts/reliabilityReport.ts` reads. */
export const chaosFiguresPath = fileURLToPath(new URL("./figures.json", import.meta.url));
