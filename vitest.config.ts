import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

/** Workspace packages resolve to their TypeScript sources in tests (`yiem-source`), to `dist` elsewhere. */
const conditions = ["yiem-source", ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
