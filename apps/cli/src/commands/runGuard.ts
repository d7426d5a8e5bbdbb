import { CliError, EXIT } from "../errors.js";
import { interruptSignal } from "../io.js";

/** Stops a `send` that waits too long: no coordinator, `--timeout`, or Ctrl-C. */
export interface RunGuard {
  /** Fires when the send should stop following the run. */
  signal: AbortSignal;
  /** Call on every event of the run: a coordinator is at work, stop waiting for one. */
  sawEvent(): void;
  /** Why the guard fired (or a generic error when the stream ended by itself). */
  failure(): CliError;
  dispose(): void;
}

/** Options of `startRunGuard`. */
export interface RunGuardOptions {
  sessionId: string;
  /** How long to wait for a coordinator's first event. */
  coordinatorWaitS: number;
  /** How long to wait for the answer; no limit when absent. */
  timeoutS?: number;
  /** Whether a coordinator holds the session now. */
  isHeld(): Promise<boolean>;
  /** Why the coordinators refused the request (an unknown agent, say), if they did. */
  refusal?(): Promise<string | undefined>;
}

/** How often a send looks whether its request was refused. */
const REFUSAL_CHECK_MS = 300;

/** Fails with the coordinators' reason when they refuse the request; returns the stop. */
function watchForRefusal(options: RunGuardOptions, fail: (error: CliError) => void) {
  const { refusal } = options;
  if (!refusal) return () => undefined;
  const timer = setInterval(() => {
    void refusal()
      .catch(() => undefined)
      .then((reason) => {
        if (reason) fail(new CliError(reason, EXIT.setup));
      });
  }, REFUSAL_CHECK_MS);
  return () => clearInterval(timer);
}

function noCoordinator(sessionId: string, seconds: number): CliError {
  return new CliError(
    `no coordinator picked up the message within ${seconds} s: is one running? (npm run coordinator) — ` +
      `the message stays queued in session ${sessionId} and is answered once a coordinator starts (yiem watch ${sessionId})`,
    EXIT.setup,
  );
}

function interrupted(sessionId: string): CliError {
  const message = `interrupted; the run goes on (yiem watch ${sessionId}, yiem abort ${sessionId})`;
  return new CliError(message, EXIT.interrupted);
}

/**
 * Fails with "no coordinator" when no event comes within `waitS` seconds and no coordinator
 * holds the session (one that holds it is busy with an earlier, quiet run: keep waiting).
 */
function watchForCoordinator(options: RunGuardOptions, fail: (error: CliError) => void) {
  const { sessionId, coordinatorWaitS } = options;
  let seen = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async () => {
    const held = await options.isHeld().catch(() => false);
    if (seen) return;
    if (held) timer = setTimeout(check, coordinatorWaitS * 1000);
    else fail(noCoordinator(sessionId, coordinatorWaitS));
  };
  timer = setTimeout(check, coordinatorWaitS * 1000);
  return () => {
    seen = true;
    clearTimeout(timer);
  };
}

/** Starts the timers and the Ctrl-C handler of one `send`. */
export function startRunGuard(options: RunGuardOptions): RunGuard {
  const { sessionId, timeoutS } = options;
  const controller = new AbortController();
  const interrupt = interruptSignal();
  let failure: CliError | undefined;
  const fail = (error: CliError) => {
    failure ??= error;
    controller.abort(error);
  };
  interrupt.signal.addEventListener("abort", () => fail(interrupted(sessionId)));
  const stopWaiting = watchForCoordinator(options, fail);
  const stopRefusalWatch = watchForRefusal(options, fail);
  const deadline = timeoutS
    ? setTimeout(() => {
        const message = `no answer within ${timeoutS} s; the run goes on (yiem watch ${sessionId})`;
        fail(new CliError(message, EXIT.runFailed));
      }, timeoutS * 1000)
    : undefined;
  return {
    signal: controller.signal,
    sawEvent: stopWaiting,
    failure: () =>
      failure ?? new CliError("the event stream ended before the run did", EXIT.runFailed),
    dispose() {
      stopWaiting();
      stopRefusalWatch();
      clearTimeout(deadline);
      interrupt.dispose();
    },
  };
}
