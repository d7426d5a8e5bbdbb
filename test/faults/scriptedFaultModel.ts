import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";

type Wire = { role: string; content: unknown };

/**
 * The fault tests' model. A user message `<tool> <label> [ms] [count]` asks for `count`
 * parallel calls of `<tool>` (ids `<label>-1`, `<label>-2`, …), each taking `ms` (or, for a
 * list like `100,4000`, the i-th call the i-th time, the last one for the rest); once results are in, it
 * answers `final <label>: <result texts>`. Deterministic: the same conversation gets the
 * same answer, which is what makes a resumed run's transcript equal a crash-free one.
 */
export function faultModel(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const [tool = "", label = "x", ms = "0", count = "1"] = String(lastUser?.content ?? "").split(
    " ",
  );
  if (messages.at(-1)?.role === "tool") {
    const lastUserIndex = messages.lastIndexOf(lastUser as Wire);
    const results = messages
      .slice(lastUserIndex)
      .filter((m) => m.role === "tool")
      .map((m) => String(m.content));
    return { kind: "text", text: `final ${label}: ${results.join(" | ")}` };
  }
  const times = ms.split(",").map(Number);
  const calls = Array.from({ length: Number(count) }, (_, i) => ({
    id: `${label}-${i + 1}`,
    name: tool,
    arguments: { label: `${label}-${i + 1}`, ms: times[i] ?? times.at(-1) ?? 0 },
  }));
  return { kind: "toolCalls", calls };
}
