import { defaultServerConditions } from "vite";
import { configDefaults, defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/support/longestFirst.js";

/**
 * Workspace packages resolve to their TypeScript sources in tests (`yiem-source`), to `dist`
 * elsewhere. Vite's bundler-only `module` condition is left out: Node loads the dependencies,
 * and some (@opentelemetry/api) ship a `module` build Node cannot run.
 */
const conditions = ["yiem-source", ...defaultServerConditions.filter((c) => c !== "module")];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["test/**/*.test.ts"],
    // The container test builds images with podman: its own command, `npm run test:containers`.
    exclude: [...configDefaults.exclude, "test/containers/**"],
    // Test clusters start the compiled apps: build them first (skipped under `npm test`).
    globalSetup: ["test/support/buildOnce.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The files of test/fileDurations.json first, the longest first: a long file started last
    // would run on alone at the end (`npm run test:durations` refreshes the list).
    sequence: { sequencer: LongestFirstSequencer },
    // Most scenarios wait on real processes, Redis and HTTP rather than on this CPU: one file
    // more than the machine's two cores keeps them busy without starving the processes.
    maxWorkers: 3,
    // `*.test-d.ts` files are type tests: `npm test` type-checks them before running
    // (`pretest`: `tsc -b`, which includes test/), so an `@ts-expect-error` that stops
    // failing fails the run; `vitest --typecheck` runs them alone.
    typecheck: {
      enabled: false,
      include: ["test/**/*.test-d.ts"],
      tsconfig: "test/tsconfig.json",
    },
  },
});
