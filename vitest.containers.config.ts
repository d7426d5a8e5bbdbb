import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * `npm run test:containers`: the container test alone (test/containers), outside `npm test`
 * and CI. It builds images and starts containers with podman, so its steps take minutes.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/containers/**/*.test.ts"],
    exclude: configDefaults.exclude,
    testTimeout: 10 * 60_000,
    hookTimeout: 45 * 60_000,
    maxWorkers: 1,
  },
});
