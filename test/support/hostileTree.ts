import { type AgentTool, defineTool, type JsonSchema } from "@yiem/core";
import { z } from "zod";

/** A node of a tree: children, each a node (a recursive schema, as the attack needs). */
interface TreeNode {
  children?: TreeNode[];
}

const treeNode: z.ZodType<TreeNode> = z.lazy(() =>
  z.object({ children: z.array(treeNode).optional() }),
);

/** The JSON Schema of `{ root: <node> }`, recursive through `$ref`. */
export const treeJsonSchema: JsonSchema = {
  type: "object",
  properties: { root: { $ref: "#/definitions/node" } },
  required: ["root"],
  definitions: {
    node: {
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#/definitions/node" } } },
    },
  },
};

/** How many nodes a tree has. */
function countNodes(node: TreeNode | undefined): number {
  if (!node) return 0;
  let count = 0;
  const pending: TreeNode[] = [node];
  for (let next = pending.pop(); next; next = pending.pop()) {
    count++;
    pending.push(...(next.children ?? []));
  }
  return count;
}

/** A `defineTool` tool `name` whose zod schema is recursive (`z.lazy`); answers `<name> ran: <n> nodes`. */
export function treeZodTool(name: string): AgentTool {
  return defineTool({
    name,
    description: "Counts the nodes of a tree (zod schema)",
    parameters: z.object({ root: treeNode }),
    execute: ({ root }) => `${name} ran: ${countNodes(root)} nodes`,
  });
}

/**
 * A plain JSON Schema tool `name` (recursive through `$ref`); answers `<name> ran: <n> nodes`.
 * With `ownPrepare`, it has its own `prepareArguments`, so a worker-only one is prepared and
 * validated on its worker rather than on the coordinator.
 */
export function treeJsonTool(name: string, ownPrepare = false): AgentTool {
  return {
    name,
    label: name,
    description: "Counts the nodes of a tree (JSON Schema)",
    inputSchema: treeJsonSchema,
    ...(ownPrepare ? { prepareArguments: (args: Record<string, unknown>) => args } : {}),
    execute: (_id, args) => ({
      content: [{ type: "text", text: `${name} ran: ${countNodes(args.root as TreeNode)} nodes` }],
      details: {},
    }),
  };
}

/**
 * Tool arguments `{"root": …}` holding a chain of `levels` nodes, each the only child of the
 * one above (JSON text nesting about twice `levels` deep): 1,000 overflows zod's recursive
 * parse, 2,500 the argument reading itself (issue 34, findings 1 and 16).
 */
export function deepTreeArguments(levels: number): string {
  return `{"root":${'{"children":['.repeat(levels)}{}${"]}".repeat(levels)}}`;
}
