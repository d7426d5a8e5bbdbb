import {
  type LoadToolsResult,
  type Logger,
  type SkippedToolFile,
  type ToolStore,
  YiemError,
} from "@yiem/core";
import { loadBuiltinAndExtraTools } from "./builtinAndExtraTools.js";
import type { BuiltinToolOptions } from "./builtinTools.js";

/** What a coordinator or worker process loads its tools with (from its `ClusterConfig`). */
export interface ProcessToolsOptions extends BuiltinToolOptions {
  /** `YIEM_TOOLS_DIR`: extra tool files, after the built-ins. */
  toolsDir: string | undefined;
  /** `YIEM_TOOLS_STRICT=1`: a file that fails to load stops the process. */
  toolsStrict: boolean;
  log: Logger;
}

/** Thrown by `loadProcessTools` under `YIEM_TOOLS_STRICT=1` when a tool file failed to load. Terminal. */
export class ToolLoadingError extends YiemError {
  constructor(readonly failures: LoadToolsResult["failures"]) {
    const lines = failures.map((failure) => `  ${failure.path}: ${failure.error}`);
    super(
      `YIEM_TOOLS_STRICT=1 and ${failures.length} tool file(s) failed to load:\n${lines.join("\n")}`,
    );
    this.name = "ToolLoadingError";
  }
}

const COMPANIONS = new Set<SkippedToolFile["reason"]>([
  "testFile",
  "typeDeclarations",
  "sourceMap",
]);

/** Expected companions of tool files (tests, `.d.ts`, source maps) log at debug, others at info. */
function logSkipped(log: Logger, skipped: SkippedToolFile): void {
  const expected = COMPANIONS.has(skipped.reason);
  if (expected) log.debug(skipped, "tool file ignored");
  else log.info(skipped, "tool file ignored");
}

/**
 * A coordinator's or worker's start-up tools: the built-ins, then `toolsDir`, with every file
 * left out logged (`tool file ignored`, debug for tests, `.d.ts` and source maps, info otherwise) and every
 * file refused logged at warn (`tool file skipped`, with its path and error). Under
 * `toolsStrict` a refused file throws `ToolLoadingError`, naming each one, so the process
 * stops instead of starting without the tool.
 *
 * @example await loadProcessTools(store, { ...readClusterConfig(), log });
 */
export async function loadProcessTools(
  store: ToolStore,
  options: ProcessToolsOptions,
): Promise<LoadToolsResult> {
  const result = await loadBuiltinAndExtraTools(store, options.toolsDir, options);
  for (const skipped of result.skipped) logSkipped(options.log, skipped);
  for (const failure of result.failures) options.log.warn(failure, "tool file skipped");
  if (options.toolsStrict && result.failures.length > 0) {
    throw new ToolLoadingError(result.failures);
  }
  return result;
}
