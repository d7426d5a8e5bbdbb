export {
  checkSandboxCode,
  runInSandbox,
  type SandboxOutcome,
  type SandboxRunOptions,
} from "./runInSandbox.js";
export {
  DEFAULT_SANDBOX_LIMITS,
  type ResolvedSandboxLimits,
  resolveSandboxLimits,
  type SandboxLimits,
} from "./sandboxLimits.js";
export { toSandboxToolResult } from "./sandboxResult.js";
