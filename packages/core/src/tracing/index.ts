export * from "./spans.js";
export * from "./startTracing.js";
