/** The Prometheus scrape helpers moved to `@yiem/testing`; re-exported here so the tests that import this file stay as they are. */
export { sampleOf, scrape, waitForSample } from "@yiem/testing";
