/** The Redis server fixture moved to `@yiem/testing`; re-exported here so the tests that import this file stay as they are. */
export {
  freePort,
  loopbackServerArgs,
  startTestRedis,
  type TestRedis,
  uniquePrefix,
} from "@yiem/testing";
