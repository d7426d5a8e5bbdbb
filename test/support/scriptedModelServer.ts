/** The scripted model server moved to `@yiem/testing`; re-exported here so the tests that import this file stay as they are. */
export {
  type ChatCompletionRequestBody,
  type ScriptedModelOptions,
  type ScriptedModelServer,
  type ScriptedReply,
  type ScriptedRequest,
  type ScriptedToolCall,
  startScriptedModelServer,
} from "@yiem/testing";
