/**
 * The chaos soak's checker on made-up inputs: it must catch each kind of violation, so an
 * empty report means the soak found none, not that the checker looked at nothing.
 */
import type { AgentMessage, AssistantMessage } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { approves } from "../../chaos/approver.js";
import { checkSoak } from "../../chaos/check/checkSoak.js";
import { parseLedger } from "../../chaos/check/ledger.js";
import type { RequestJobRecord, SoakSnapshot } from "../../chaos/check/snapshot.js";

const PREFIX = "t";
const SESSION = "chaos-1";
const INPUT = "chaos r1 R10.R10";

const answer: AssistantMessage = {
  role: "assistant",
  content: [{ type: "text", text: "done r1" }],
  stopReason: "stop",
  timestamp: 2,
} as AssistantMessage;

function calls(...ids: string[]): AgentMessage {
  return {
    role: "assistant",
    content: ids.map((id) => ({
      type: "toolCall",
      id,
      name: "chaosRemote",
      arguments: { label: id, ms: 10 },
    })),
    stopReason: "toolUse",
    timestamp: 1,
  } as AgentMessage;
}

function result(id: string): AgentMessage {
  return {
    role: "toolResult",
    toolCallId: id,
    toolName: "chaosRemote",
    content: [{ type: "text", text: `${id} ok` }],
    isError: false,
    timestamp: 1,
  } as AgentMessage;
}

const user = {
  role: "user",
  content: [{ type: "text", text: INPUT }],
  timestamp: 0,
} as AgentMessage;
const wellFormed = [user, calls("r1.0.0", "r1.0.1"), result("r1.0.0"), result("r1.0.1"), answer];

function job(overrides: Partial<RequestJobRecord> = {}): RequestJobRecord {
  return {
    id: "job-1",
    state: "completed",
    sessionId: SESSION,
    input: INPUT,
    followUp: false,
    result: { sessionId: SESSION, runId: "job-1", response: answer },
    storedResponse: answer,
    ...overrides,
  };
}

function snapshot(overrides: Partial<SoakSnapshot> = {}): SoakSnapshot {
  return {
    takenAt: Date.now(),
    prefix: PREFIX,
    requests: [job()],
    queueCounts: { coordinator: { completed: 1 } },
    openJobs: [],
    transcripts: new Map([[SESSION, wellFormed]]),
    children: new Map(),
    keys: [{ key: `${PREFIX}:s:{${SESSION}}:messages`, type: "list", ttlMs: 1000 }],
    leases: [],
    ...overrides,
  };
}

/** A tree: session chaos-2's plan calls the child agent, whose session runs one remote call. */
const ROOT = "chaos-2";
const CHILD = "helper-1";
const ROOT_INPUT = "chaos r2 CR10";
const CHILD_INPUT = "chaos r2.0.0 R10";

function text(role: "user" | "assistant", value: string): AgentMessage {
  if (role === "user")
    return { role, content: [{ type: "text", text: value }], timestamp: 0 } as AgentMessage;
  return { ...answer, content: [{ type: "text", text: value }] } as AgentMessage;
}

function childCall(id: string, input: string): AgentMessage {
  return {
    role: "assistant",
    content: [{ type: "toolCall", id, name: "agent__helper", arguments: { input } }],
    stopReason: "toolUse",
    timestamp: 1,
  } as AgentMessage;
}

function childResult(id: string, value: string): AgentMessage {
  return {
    ...result(id),
    toolName: "agent__helper",
    content: [{ type: "text", text: value }],
  } as AgentMessage;
}

const childAnswer = text("assistant", "done r2.0.0") as AssistantMessage;
const rootAnswer = text("assistant", "done r2") as AssistantMessage;

function treeTranscripts(parentResult = "done r2.0.0"): Map<string, AgentMessage[]> {
  return new Map([
    [SESSION, wellFormed],
    [
      ROOT,
      [
        text("user", ROOT_INPUT),
        childCall("r2.0.0", CHILD_INPUT),
        childResult("r2.0.0", parentResult),
        rootAnswer,
      ],
    ],
    [CHILD, [text("user", CHILD_INPUT), calls("r2.0.0.0.0"), result("r2.0.0.0.0"), childAnswer]],
  ]);
}

function treeJobs(...extra: RequestJobRecord[]): RequestJobRecord[] {
  return [
    job(),
    job({
      id: "job-2",
      sessionId: ROOT,
      input: ROOT_INPUT,
      result: { sessionId: ROOT, runId: "job-2", response: rootAnswer },
      storedResponse: rootAnswer,
    }),
    job({
      id: `agent-${CHILD}`,
      sessionId: CHILD,
      input: CHILD_INPUT,
      parent: { sessionId: ROOT, callKey: "r2.0.0" },
      result: { sessionId: CHILD, runId: `agent-${CHILD}`, response: childAnswer },
      storedResponse: childAnswer,
    }),
    ...extra,
  ];
}

function treeChildren(status: "done" | "running" = "done") {
  return new Map([
    [ROOT, [{ callKey: "r2.0.0", agent: "helper", sessionId: CHILD, status, startedAt: 1 }]],
  ]);
}

const treeLedger = parseLedger(
  "r1.0.0 chaosRemote 10 worker-1\nr1.0.1 chaosRemote 11 worker-2\nr2.0.0.0.0 chaosRemote 10 worker-1\n",
);

function treeViolations(overrides: Partial<SoakSnapshot> = {}): string[] {
  return violationsOf(
    {
      transcripts: treeTranscripts(),
      requests: treeJobs(),
      children: treeChildren(),
      queueCounts: { coordinator: { completed: 3 } },
      ...overrides,
    },
    treeLedger,
  );
}

const ledgerOnce = parseLedger("r1.0.0 chaosRemote 10 worker-1\nr1.0.1 chaosRemote 11 worker-2\n");

function violationsOf(overrides: Partial<SoakSnapshot>, ledger = ledgerOnce, seed = 1): string[] {
  return checkSoak({
    snapshot: snapshot(overrides),
    ledger,
    sent: [],
    seed,
    cluster: false,
    liveCoordinatorPids: [42],
  }).violations.map((v) => `[${v.check}] ${v.detail}`);
}

describe("chaos checker", () => {
  it("finds nothing in a well-formed soak", () => {
    expect(violationsOf({})).toEqual([]);
  });

  it("catches a duplicated tool result and results out of call order", () => {
    const duplicated = [
      user,
      calls("r1.0.0", "r1.0.1"),
      result("r1.0.0"),
      result("r1.0.1"),
      result("r1.0.1"),
      answer,
    ];
    expect(violationsOf({ transcripts: new Map([[SESSION, duplicated]]) })).toContain(
      "[transcripts] call r1.0.1 has 2 results",
    );
    const reordered = [user, calls("r1.0.0", "r1.0.1"), result("r1.0.1"), result("r1.0.0"), answer];
    expect(violationsOf({ transcripts: new Map([[SESSION, reordered]]) })).toContain(
      "[transcripts] message 1 calls r1.0.0,r1.0.1 but is followed by r1.0.1,r1.0.0",
    );
  });

  it("catches a result without its call", () => {
    const orphan = [
      user,
      calls("r1.0.0", "r1.0.1"),
      result("r1.0.0"),
      result("r1.0.1"),
      result("r1.9.9"),
      answer,
    ];
    expect(violationsOf({ transcripts: new Map([[SESSION, orphan]]) })).toContain(
      "[transcripts] result for r1.9.9 without its call",
    );
  });

  it("catches a remote call executed twice, and a denied approval that ran", () => {
    const twice = parseLedger(
      "r1.0.0 chaosRemote 10 worker-1\nr1.0.0 chaosRemote 12 worker-3\nr1.0.1 chaosRemote 11 worker-2\n",
    );
    expect(violationsOf({}, twice)).toContain(
      "[side effects] chaosRemote (remote, retries 0) ran 2 times; at most 1 allowed (session chaos-1)",
    );
    const seed = Array.from({ length: 100 }, (_, i) => i).find((s) => !approves(s, "r1.0.0")) ?? 0;
    const approval = [
      user,
      {
        ...calls("r1.0.0"),
        content: [
          {
            type: "toolCall",
            id: "r1.0.0",
            name: "chaosApproval",
            arguments: { label: "r1.0.0", ms: 10 },
          },
        ],
      } as AgentMessage,
      result("r1.0.0"),
      answer,
    ];
    expect(
      violationsOf(
        { transcripts: new Map([[SESSION, approval]]) },
        parseLedger("r1.0.0 chaosApproval 10 worker-1\n"),
        seed,
      ),
    ).toContain(
      "[side effects] chaosApproval (remote, approval, retries 0, denied) ran 1 times; at most 0 allowed (session chaos-1)",
    );
  });

  it("catches an input recorded twice, a request left waiting, and an answer that differs from the stored one", () => {
    expect(violationsOf({ transcripts: new Map([[SESSION, [user, ...wellFormed]]]) })).toContain(
      "[requests] its input is recorded 2 times in session chaos-1",
    );
    expect(violationsOf({ queueCounts: { coordinator: { waiting: 1 } } })).toContain(
      "[requests] 1 job(s) left waiting after the load drained",
    );
    const stuck = {
      queueCounts: { "tools-default": { active: 1 } },
      openJobs: [
        {
          ...{ queue: "tools-default", id: "42", state: "active", name: "chaosRemote" },
          ...{ sessionId: SESSION, toolCallId: "r1.0.0", attemptsStarted: 2, startedAgoMs: 31000 },
          lock: { token: "t@life-1:5", ttlMs: 900 },
        },
      ],
    };
    expect(violationsOf(stuck)).toContain(
      "[requests] 1 job(s) left active after the load drained: job 42 (chaosRemote, session chaos-1, call r1.0.0, 2 attempt(s), started 31000 ms before, locked by t@life-1:5 for 900 ms more)",
    );
    const other = {
      ...answer,
      content: [{ type: "text", text: "another answer" }],
    } as AssistantMessage;
    expect(violationsOf({ requests: [job({ storedResponse: other })] })).toContain(
      "[requests] its job's answer differs from the stored response (answered twice)",
    );
  });

  it("finds nothing in a tree whose child answered its parent's call once", () => {
    expect(treeViolations()).toEqual([]);
  });

  it("catches a child run answered twice, left running, or whose answer is not its call's result", () => {
    const second = job({
      id: "agent-again",
      sessionId: CHILD,
      input: CHILD_INPUT,
      parent: { sessionId: ROOT, callKey: "r2.0.0" },
      result: { sessionId: CHILD, runId: "agent-again", response: childAnswer },
      storedResponse: childAnswer,
    });
    expect(treeViolations({ requests: treeJobs(second) })).toContain(
      "[tree] child helper-1 has 2 request jobs",
    );
    expect(treeViolations({ children: treeChildren("running") })).toEqual([
      "[tree] child helper-1 still running after the drain",
    ]);
    expect(treeViolations({ transcripts: treeTranscripts("done elsewhere") })).toEqual([
      '[tree] the result "done elsewhere" is not the child\'s answer "done r2.0.0"',
    ]);
  });

  it("catches a child request that no call of its parent made", () => {
    const stray = job({
      id: "agent-stray",
      sessionId: "helper-2",
      input: "chaos r2.9.9 R10",
      parent: { sessionId: ROOT, callKey: "r2.9.9" },
      result: { sessionId: "helper-2", runId: "agent-stray", response: childAnswer },
      storedResponse: childAnswer,
    });
    const transcripts = treeTranscripts();
    transcripts.set("helper-2", [text("user", "chaos r2.9.9 R10"), childAnswer]);
    expect(treeViolations({ requests: treeJobs(stray), transcripts })).toEqual([
      "[tree] a child request no call of its parent made",
    ]);
  });

  it("catches a lease of a dead holder, a key past its retention, an open run and an unknown key", () => {
    const found = violationsOf({
      leases: [{ sessionId: SESSION, token: "vm-7:abc", ttlMs: 2000 }],
      keys: [
        { key: `${PREFIX}:toolDone:j1`, type: "string", ttlMs: -1 },
        {
          key: `${PREFIX}:s:{${SESSION}}:response:job-1`,
          type: "string",
          ttlMs: 40 * 24 * 3600 * 1000,
        },
        { key: `${PREFIX}:s:{${SESSION}}:run`, type: "string", ttlMs: -1 },
        { key: `${PREFIX}:mystery`, type: "string", ttlMs: -1 },
      ],
    });
    expect(found).toEqual([
      "[leases] still leased by vm-7:abc, whose holder is dead, past its lease",
      "[keys] finished marker without a TTL",
      "[keys] stored response kept 3456000000 ms, past its retention of 86400000 ms",
      "[keys] open run left after every run ended",
      "[keys] unknown key (string, ttl -1 ms)",
    ]);
  });

  it("lets young orphans of the approval index through (a sweep drops them), not old ones", () => {
    const index = (agesMs: number[]) => ({
      key: `${PREFIX}:approvalsPending`,
      type: "zset",
      ttlMs: -1,
      members: agesMs.map((_, i) => `${SESSION}\nc${i}`),
      memberAgesMs: agesMs,
    });
    expect(violationsOf({ keys: [index([5_000, 20_000])] })).toEqual([]);
    expect(violationsOf({ keys: [index([5_000, 300_000])] })).toEqual([
      `[keys] approval index left after every run ended (${SESSION}\nc0, ${SESSION}\nc1)`,
    ]);
  });

  it("lets the same young orphans through in their tree's index, and no other entry there", () => {
    const tree = (members: string[]) => ({
      key: `${PREFIX}:s:{${SESSION}}:treeApprovals`,
      type: "zset",
      ttlMs: 3_600_000,
      members,
    });
    const pending = {
      key: `${PREFIX}:approvalsPending`,
      type: "zset",
      ttlMs: -1,
      members: [`${SESSION}\nc0`],
      memberAgesMs: [5_000],
    };
    expect(violationsOf({ keys: [pending, tree([`${SESSION}\nc0`])] })).toEqual([]);
    expect(violationsOf({ keys: [pending, tree([`${SESSION}\nc9`])] })).toEqual([
      `[keys] tree approval index left after every run ended (${SESSION}\nc9)`,
    ]);
  });
});
