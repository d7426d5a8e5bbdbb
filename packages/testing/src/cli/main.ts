/** The `yiem-scripted-model` command (see `runScriptedModelCommand`). */
import { runScriptedModelCommand } from "./scriptedModelCommand.js";

process.exitCode = await runScriptedModelCommand(process.argv.slice(2));
