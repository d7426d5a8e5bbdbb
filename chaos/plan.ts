import type { Random } from "./random.js";

/**
 * What one chaos input asks the scripted model for, written in the input's text so the model
 * (a pure function of the conversation) and the checker read the same plan:
 * `chaos <label> <step>/<step>/…`, each step one model turn of calls `<code><ms>` joined by
 * `.`, e.g. `chaos r12 R40.R80.A30/L20/I10.T50`. The model answers each step with those calls,
 * then `done <label>`. Call ids (and the ledger's labels) are `<label>.<step>.<index>`. A call
 * `C<steps>` calls the child agent (`agent__helper`) with a plan of its own, its steps joined
 * by `_` and their calls by `,` (e.g. `CR40,L20_R30`): the child's input is that plan labelled
 * with the call's label (`chaos r12.0.1 R40.L20/R30`), so it answers `done r12.0.1`.
 */
export interface RunPlan {
  label: string;
  steps: PlannedCall[][];
}

/** One call of a step: a chaos tool and how long it takes, or a call of the child agent. */
export type PlannedCall = PlannedToolCall | PlannedChildCall;

/** A chaos tool's call, and how long it takes. */
export interface PlannedToolCall {
  tool: ChaosToolName;
  ms: number;
}

/** A call of the child agent, with the plan its run follows. */
export interface PlannedChildCall {
  tool: typeof CHILD_CALL_TOOL;
  steps: PlannedToolCall[][];
}

/** The agent the soak's sessions may call (`chaos/agents.yaml`), and the tool its model is offered for it. */
export const CHILD_AGENT = "helper";

/** The tool a call of the child agent names. */
export const CHILD_CALL_TOOL = `agent__${CHILD_AGENT}` as const;

/** The code of a child call in a plan's text. */
const CHILD_CODE = "C";

/** The chaos tools (chaos/tools/*.mjs), each with the most executions the docs allow. */
export const CHAOS_TOOLS = {
  chaosRemote: { code: "R", maxRuns: 1, where: "remote, retries 0" },
  chaosRemoteRetried: { code: "T", maxRuns: 2, where: "remote, retries 1" },
  chaosLocal: { code: "L", maxRuns: 1, where: "in-process, not idempotent" },
  chaosLocalIdempotent: {
    code: "I",
    maxRuns: Number.POSITIVE_INFINITY,
    where: "in-process, idempotent",
  },
  chaosApproval: { code: "A", maxRuns: 1, where: "remote, approval, retries 0" },
} as const;

/** A chaos tool's name. */
export type ChaosToolName = keyof typeof CHAOS_TOOLS;

const TOOL_OF_CODE = new Map<string, ChaosToolName>(
  Object.entries(CHAOS_TOOLS).map(([name, { code }]) => [code, name as ChaosToolName]),
);

/** The call id (and ledger label) of call `index` of step `step` of the run labelled `label`. */
export function callLabel(label: string, step: number, index: number): string {
  return `${label}.${step}.${index}`;
}

/** The text of one planned call. */
function encodeCall(call: PlannedCall): string {
  if (call.tool === CHILD_CALL_TOOL)
    return `${CHILD_CODE}${call.steps.map((step) => step.map(encodeToolCall).join(",")).join("_")}`;
  return encodeToolCall(call);
}

function encodeToolCall(call: PlannedToolCall): string {
  return `${CHAOS_TOOLS[call.tool].code}${call.ms}`;
}

/** The input text of a plan. */
export function encodePlan(plan: RunPlan): string {
  const steps = plan.steps.map((calls) => calls.map(encodeCall).join("."));
  return `chaos ${plan.label} ${steps.join("/")}`;
}

function decodeToolCall(label: string, call: string): PlannedToolCall {
  const tool = TOOL_OF_CODE.get(call.slice(0, 1));
  if (!tool) throw new Error(`chaos plan ${label}: unknown tool code in "${call}"`);
  return { tool, ms: Number(call.slice(1)) };
}

function decodeCall(label: string, call: string): PlannedCall {
  if (!call.startsWith(CHILD_CODE)) return decodeToolCall(label, call);
  const steps = call
    .slice(CHILD_CODE.length)
    .split("_")
    .map((step) => step.split(",").map((c) => decodeToolCall(label, c)));
  return { tool: CHILD_CALL_TOOL, steps };
}

/** The plan an input text carries, or undefined when it is not a chaos input. */
export function decodePlan(text: string): RunPlan | undefined {
  const [word, label, steps] = text.split(" ");
  if (word !== "chaos" || !label || steps === undefined) return undefined;
  return {
    label,
    steps: steps.split("/").map((step) => step.split(".").map((call) => decodeCall(label, call))),
  };
}

/**
 * Options of `randomPlan`: how often a remote call needs approval, and how often a parallel
 * batch calls the child agent (`childChance`, 0 by default: no child runs).
 */
export interface PlanMix {
  approvalChance: number;
  childChance?: number;
}

/** A random step of chaos tool calls: a parallel batch of remote calls, sequential in-process ones, or a mix. */
function randomToolStep(random: Random, mix: PlanMix): PlannedToolCall[] {
  const shape = random.pick(["parallel", "parallel", "sequential", "mixed"] as const);
  const calls: PlannedToolCall[] = [];
  const count = shape === "sequential" ? random.int(1, 2) : random.int(1, 4);
  for (let i = 0; i < count; i++) {
    const ms = random.int(10, 150);
    if (shape === "sequential" || (shape === "mixed" && i === 0)) {
      calls.push({ tool: random.pick(["chaosLocal", "chaosLocalIdempotent"] as const), ms });
    } else if (random.chance(mix.approvalChance)) {
      calls.push({ tool: "chaosApproval", ms });
    } else {
      calls.push({
        tool: random.pick(["chaosRemote", "chaosRemote", "chaosRemoteRetried"] as const),
        ms,
      });
    }
  }
  return calls;
}

/**
 * A random plan labelled `label`: 1–3 steps, each a parallel batch of remote calls (1–4, now
 * and then one needing approval), a sequential batch of in-process calls, or a mix; now and
 * then (`childChance`) a step also calls the child agent, whose own plan is 1–2 such steps;
 * a slow plan (for an abort) has one remote call of 2–4 s in its first step (`slowCall`: in a
 * child run half the time, so the abort is carried down a tree).
 */
export function randomPlan(random: Random, label: string, mix: PlanMix, slow: boolean): RunPlan {
  const steps: PlannedCall[][] = [];
  const stepCount = random.int(1, 3);
  for (let step = 0; step < stepCount; step++) {
    const calls: PlannedCall[] = randomToolStep(random, mix);
    if (mix.childChance && random.chance(mix.childChance)) {
      const childSteps = Array.from({ length: random.int(1, 2) }, () =>
        randomToolStep(random, mix),
      );
      calls.splice(random.int(0, calls.length), 0, { tool: CHILD_CALL_TOOL, steps: childSteps });
    }
    steps.push(calls);
  }
  if (slow) steps[0]?.push(slowCall(random, mix));
  return { label, steps };
}

/**
 * The slow call of a plan to be aborted: one remote call of 2–4 s, in a child run of its own
 * half the time when the mix has child runs (so the abort is carried down a tree).
 */
function slowCall(random: Random, mix: PlanMix): PlannedCall {
  const call: PlannedToolCall = { tool: "chaosRemote", ms: random.int(2000, 4000) };
  if (!mix.childChance || !random.chance(0.5)) return call;
  return { tool: CHILD_CALL_TOOL, steps: [[call]] };
}
