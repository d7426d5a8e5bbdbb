import { defaultServerConditions } from "vite";
import { configDefaults, defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/support/longestFirst.js";

/**
 * Workspace packages resolve to their TypeScript sources in tests (`yiem-source`), to `dist`
 * elsewhere. Vite's bundler-only `module` condition is left out: Node loads the dependencies,
 * and some (@opentelemetry/api) ship a `module` build Node cannot run.
 */
const conditions = ["yiem-source", ...defaultServerConditions.filter((c) => c !== "module")];

/**
 * Test files that need a process of their own: they read or set process-wide state (the
 * process's first piece of work, stubbed environment, the event loop's idleness) or time
 * their own process closely. Every other file shares its fork with the files before it.
 */
const ownProcessFiles = [
  "test/core/processWarm.test.ts",
  "test/core/heartbeatThreadStart.test.ts",
  "test/core/firstRunAlone.test.ts",
  "test/core/httpSideMayStart.test.ts",
  "test/core/unhandledRejections.test.ts",
  "test/cluster/redisErrors.test.ts",
  "test/tools/getWeather.test.ts",
  "test/sandbox/sandbox.test.ts",
];

/** Never test files: the container test (its own command, `npm run test:containers`) and builds. */
const notHere = [...configDefaults.exclude, "test/containers/**", "**/dist/**"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
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
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: [...notHere, ...ownProcessFiles],
          // A fork keeps its modules from one test file to the next (most files import the whole
          // of @yiem/core from its sources: importing it again per file took a fifth of the
          // suite's time). These files change no module state another reads: clusters, Redis
          // prefixes and servers are each file's own.
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: "own-process", include: ownProcessFiles, exclude: notHere, isolate: true },
      },
    ],
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
