export { formatMsgForLLM } from "./formatMsgForLLM.js";
export {
  createOpenAILlmCall,
  OPENAI_CHAT_COMPLETIONS_API,
  type OpenAILlmCallOptions,
} from "./openaiLlmCall.js";
