/** The local HTTP server fixture moved to `@yiem/testing`; re-exported here so the tests that import this file stay as they are. */
export { type LocalHttpHandler, type LocalHttpServer, startLocalHttpServer } from "@yiem/testing";
