/** The pino log line helpers moved to `@yiem/testing`; re-exported here so the tests that import this file stay as they are. */
export { LOG_LEVELS, type LogEntry, logEntries } from "@yiem/testing";
