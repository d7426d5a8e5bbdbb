/** Process spawning moved to `@yiem/testing`; re-exported here so the tests that import this file stay as they are. */
export { logMessage, repoRoot, spawnApp, spawnCommand, type TestProcess } from "@yiem/testing";
