import { createRequire } from "node:module";
import { dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the child's code lives and how `node` is started for it. */
export interface SandboxCommand {
  /** `process.execPath`. */
  executable: string;
  /** Node flags, then the host script. */
  args: string[];
  /** The folder the child starts in (the host script's). */
  cwd: string;
  /** CommonJS entry points the child loads QuickJS from. */
  corePath: string;
  variantPath: string;
}

/** The folder `node_modules/<name>` that holds `file`. */
function packageRoot(file: string, name: string): string {
  const marker = `${sep}node_modules${sep}${name.split("/").join(sep)}${sep}`;
  const at = file.lastIndexOf(marker);
  if (at < 0) throw new Error(`cannot find the package folder of ${name} in ${file}`);
  return file.slice(0, at + marker.length); // with the trailing separator: that folder only
}

/** Node 22.13+ and 23.5+ call the permission model `--permission`; older ones, experimental. */
function permissionFlag(): string {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  const stable = major >= 24 || (major === 23 && minor >= 5) || (major === 22 && minor >= 13);
  return stable ? "--permission" : "--experimental-permission";
}

let cached: SandboxCommand | undefined;

/**
 * How to start a sandbox child: `node` under the permission model, reading only the host script
 * and the QuickJS packages (quickjs-emscripten-core, the release-sync WebAssembly variant and
 * their FFI types), with no addons, no code generation from strings in Node itself and a small
 * V8 heap. Resolved once per process. Throws when the QuickJS packages cannot be found.
 */
export function sandboxCommand(): SandboxCommand {
  if (cached) return cached;
  const host = fileURLToPath(new URL("./sandboxHost.mjs", import.meta.url));
  const fromCore = createRequire(import.meta.url);
  const fromQuickJS = createRequire(fromCore.resolve("quickjs-emscripten"));
  const corePath = fromQuickJS.resolve("quickjs-emscripten-core");
  const variantPath = fromQuickJS.resolve("@jitl/quickjs-wasmfile-release-sync");
  const ffiPath = createRequire(corePath).resolve("@jitl/quickjs-ffi-types");
  const readable = [
    host,
    packageRoot(corePath, "quickjs-emscripten-core"),
    packageRoot(variantPath, "@jitl/quickjs-wasmfile-release-sync"),
    packageRoot(ffiPath, "@jitl/quickjs-ffi-types"),
  ];
  if (readable.some((path) => path.includes(","))) {
    throw new Error(`the sandbox cannot run from a path with a comma: ${readable.join(" ")}`);
  }
  const args = [
    permissionFlag(),
    ...readable.map((path) => `--allow-fs-read=${path}`),
    "--no-addons",
    "--disallow-code-generation-from-strings",
    "--max-old-space-size=64",
    "--no-warnings",
    host,
  ];
  cached = { executable: process.execPath, args, cwd: dirname(host), corePath, variantPath };
  return cached;
}
