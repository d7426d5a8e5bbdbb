/**
 * The fixtures of this repository's tests. The generic ones (Redis servers and Clusters, the
 * scripted model server, process spawning, local HTTP servers) live in `@yiem/testing` and are
 * re-exported here; the ones that know this repository (clusters of its apps, the CLI, fault
 * ledgers, tool fixtures) live beside this file.
 */
export * from "@yiem/testing";
