// The sandbox child process. Plain JavaScript on purpose: it runs under `node` with no loader,
// an empty environment and the permission model (no fs writes, fs reads only of the QuickJS
// packages, no child processes, no workers, no addons). It reads one request as JSON on stdin,
// loads QuickJS (WebAssembly), writes a `ready` line, runs the guest code with memory, stack and
// time limits, writes one reply line and exits. The guest sees nothing of Node: only `args` and
// a `console.log` whose lines are captured. sandboxProtocol.ts describes the request and replies.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const PAGE_BYTES = 64 * 1024;
const INITIAL_PAGES = 256; // the 16 MiB the QuickJS build starts with
const MAX_MESSAGE_CHARS = 2000;

/**
 * Guest-side helpers, created before any guest code runs: they hold the original built-ins in
 * closures, so a guest that replaces `JSON`, `String.prototype.slice` or `Function` changes
 * nothing the host relies on.
 */
const PRELUDE = `(function (hostLog) {
  const apply = Reflect.apply;
  const slice = String.prototype.slice;
  const toText = String;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const ErrorType = Error;
  const functionSource = Function.prototype.toString;
  const show = (value) => {
    if (typeof value === "string") return value;
    try { const json = stringify(value); return json === undefined ? toText(value) : json; }
    catch (_) { return toText(value); }
  };
  const log = (...values) => {
    let line = "";
    for (let i = 0; i < values.length; i++) line = i === 0 ? show(values[i]) : line + " " + show(values[i]);
    hostLog(line);
  };
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  return {
    sourceOf: (value) => (typeof value === "function" ? apply(functionSource, value, []) : ""),
    parse: (text) => parse(text),
    stringify: (value) => stringify(value),
    cut: (text, max) => apply(slice, text, [0, max]),
    describe: (error) => {
      try {
        if (error instanceof ErrorType) return toText(error.name) + ": " + toText(error.message);
        return "a non-Error value: " + show(error);
      } catch (_) { return "an error that cannot be described"; }
    },
  };
})`;

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function writeLine(message, then) {
  process.stdout.write(`${JSON.stringify(message)}\n`, then);
}

/**
 * Loads QuickJS on a WebAssembly memory that cannot grow past `memoryBytes`. This is the real
 * memory cap: `setMemoryLimit` only bounds single allocations in this build (its running total
 * is not kept under Emscripten), so many small allocations would otherwise grow without end.
 */
async function loadQuickJS(request) {
  const core = require(request.corePath);
  const variant = require(request.variantPath);
  const maximum = Math.max(INITIAL_PAGES, Math.ceil(request.memoryBytes / PAGE_BYTES));
  const wasmMemory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum });
  const capped = core.newVariant(variant.default ?? variant, { wasmMemory });
  return core.newQuickJSWASMModuleFromVariant(capped);
}

/** Reads a guest string, cut to `max` characters by the pristine helper when longer. */
function readString(ctx, handle, max) {
  const { vm, fn } = ctx;
  const length = vm.getNumber(vm.getProp(handle, "length"));
  if (length <= max) return vm.getString(handle);
  const cut = vm.callFunction(fn.cut, vm.undefined, handle, vm.newNumber(max));
  return cut.error
    ? `(${length} characters)`
    : `${vm.getString(cut.value)}… (${length} characters)`;
}

/** The reply for a guest failure: a timeout, running out of memory, or a throw. */
function failure(ctx, errorHandle) {
  const { vm, state } = ctx;
  if (state.interrupted) return { kind: "timeout" };
  let message;
  try {
    const described = vm.callFunction(ctx.fn.describe, vm.undefined, errorHandle);
    message = described.error ? undefined : readString(ctx, described.value, MAX_MESSAGE_CHARS);
  } catch {
    message = undefined;
  }
  if (state.interrupted) return { kind: "timeout" };
  if (message === undefined || /out of memory/i.test(message)) return { kind: "memory" };
  return { kind: "threw", message };
}

/** Builds the guest helpers and the captured `console.log`; its lines share `maxLogChars`. */
function installHelpers(ctx) {
  const { vm, request } = ctx;
  let budget = request.maxLogChars;
  const hostLog = vm.newFunction("hostLog", (line) => {
    if (budget <= 0 || vm.typeof(line) !== "string") return;
    const text = readString(ctx, line, budget);
    budget -= text.length;
    ctx.logs.push(text);
  });
  const prelude = vm.unwrapResult(vm.evalCode(PRELUDE, "prelude.js"));
  const helpers = vm.unwrapResult(vm.callFunction(prelude, vm.undefined, hostLog));
  for (const name of ["sourceOf", "parse", "stringify", "cut", "describe"]) {
    ctx.fn[name] = vm.getProp(helpers, name);
  }
}

/** Settles a returned promise by running the pending jobs; other values pass through. */
function settle(ctx, handle) {
  const { vm, runtime } = ctx;
  if (vm.getPromiseState(handle).notAPromise) return { value: handle };
  runtime.executePendingJobs();
  const state = vm.getPromiseState(handle);
  if (state.type === "pending") return { pending: true };
  if (state.type === "rejected") return { error: state.error };
  return { value: state.value };
}

/** Turns the guest's return value into JSON text, inside the guest and under its limits. */
function serialize(ctx, handle) {
  const { vm, request } = ctx;
  const json = vm.callFunction(ctx.fn.stringify, vm.undefined, handle);
  if (json.error) {
    const problem = failure(ctx, json.error);
    return problem.kind === "threw" ? { kind: "notJson", message: problem.message } : problem;
  }
  if (vm.typeof(json.value) !== "string") return { kind: "notJson", message: vm.typeof(handle) };
  const length = vm.getNumber(vm.getProp(json.value, "length"));
  if (length > request.maxResultChars) return { kind: "tooLarge", size: length };
  return { kind: "ok", json: vm.getString(json.value), logs: ctx.logs };
}

/**
 * Compiles the body as `(function (args) { … })`. Evaluating a function expression runs none of
 * its body; a body that closes the function early (`}); …; (function () {`) could run its own
 * top-level code here, inside the sandbox all the same, and is then rejected because the value
 * is not the function whose source is the whole wrapper.
 */
function compile(ctx) {
  const { vm, request, fn } = ctx;
  const source = `(function (args) {\n${request.code}\n})`;
  const evaluated = vm.evalCode(source, "writtenTool.js");
  if (evaluated.error) return { problem: failure(ctx, evaluated.error) };
  const sourceOf = vm.callFunction(fn.sourceOf, vm.undefined, evaluated.value);
  if (sourceOf.error) return { problem: failure(ctx, sourceOf.error) };
  if (readString(ctx, sourceOf.value, source.length) !== source.slice(1, -1)) {
    const message = "SyntaxError: the code must be the body of one function: it closes it early";
    return { problem: { kind: "threw", message } };
  }
  return { fn: evaluated.value };
}

/** Compiles the body, then (in `run` mode) calls it with the parsed arguments. */
function runGuest(ctx) {
  const { vm, request, fn } = ctx;
  const compiled = compile(ctx);
  if (compiled.problem) return compiled.problem;
  if (request.mode === "compile") return { kind: "ok", json: "null", logs: [] };
  const args = vm.callFunction(fn.parse, vm.undefined, vm.newString(request.argsJson));
  if (args.error) return failure(ctx, args.error);
  const called = vm.callFunction(compiled.fn, vm.undefined, args.value);
  if (called.error) return failure(ctx, called.error);
  const settled = settle(ctx, called.value);
  if (settled.pending) return { kind: "notJson", message: "a promise that never settled" };
  if (settled.error) return failure(ctx, settled.error);
  return serialize(ctx, settled.value);
}

function crashed(ctx, error) {
  if (ctx?.state.interrupted) return { kind: "timeout" };
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { kind: "crashed", message: message.slice(0, MAX_MESSAGE_CHARS) };
}

async function main() {
  const request = JSON.parse(await readStdin());
  const QuickJS = await loadQuickJS(request);
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(request.memoryBytes);
  runtime.setMaxStackSize(request.stackBytes);
  const vm = runtime.newContext();
  const ctx = { vm, runtime, request, state: { interrupted: false }, logs: [], fn: {} };
  installHelpers(ctx);
  writeLine({ kind: "ready" });
  const deadline = Date.now() + request.timeoutMs;
  runtime.setInterruptHandler(() => {
    if (Date.now() < deadline) return false;
    ctx.state.interrupted = true;
    return true;
  });
  let outcome;
  try {
    outcome = runGuest(ctx);
  } catch (error) {
    outcome = crashed(ctx, error);
  }
  // No dispose: the process ends here, and a runtime that ran out of memory may not free cleanly.
  writeLine(outcome, () => process.exit(0));
}

main().catch((error) => writeLine(crashed(undefined, error), () => process.exit(0)));
