import { readFile } from "node:fs/promises";
import { ModelScriptError } from "./modelScriptError.js";
import { parseModelScript } from "./parseModelScript.js";
import type { ModelScript } from "./types.js";

/**
 * Reads and checks the model script at `path` (JSON). Throws a {@link ModelScriptError} whose
 * message starts with `path` and then names the field that is wrong (or says the file cannot
 * be read or is not JSON).
 */
export async function loadModelScript(path: string): Promise<ModelScript> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ModelScriptError("", `cannot read the script: ${(err as Error).message}`, path);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ModelScriptError("", `not JSON: ${(err as Error).message}`, path);
  }
  try {
    return parseModelScript(json);
  } catch (err) {
    if (!(err instanceof ModelScriptError)) throw err;
    throw new ModelScriptError(err.field, err.problem, path);
  }
}
