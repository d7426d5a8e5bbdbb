/** The OTLP trace collector fixture moved to `@yiem/testing`; re-exported here so the tests that import this file stay as they are. */
export { type CollectedSpan, type OtlpCollector, startOtlpCollector } from "@yiem/testing";
