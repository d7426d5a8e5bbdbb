/**
 * A model script that does not follow the format. `field` names where, as a path into the
 * JSON (`rules[0].steps[1].toolCalls[0].name`; empty for the whole script), and `source` the
 * file when there is one; the message is `source: field: problem`.
 */
export class ModelScriptError extends Error {
  override name = "ModelScriptError";

  constructor(
    readonly field: string,
    readonly problem: string,
    readonly source?: string,
  ) {
    super([source, field, problem].filter(Boolean).join(": "));
  }
}
