import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // `*.test-d.ts` files are type tests: tsc checks them as part of `vitest run`.
    typecheck: {
      enabled: true,
      include: ["test/**/*.test-d.ts"],
      tsconfig: "test/tsconfig.json",
    },
  },
});
