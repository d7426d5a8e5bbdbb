#!lua
--[[
  Appends several messages in order in one step (a batch's tool results), as
  appendMessages.lib.lua says. Its reply is not waited for: the run's next write goes right
  behind it with the length it expects. Without replica acknowledgements the coordinator sends
  its appends inside sessionWrites-8 instead, together with the session's events.

  Input:
    KEYS[1] lease
    KEYS[2] messages
    KEYS[3] running

    ARGV[1] token
    ARGV[2] the transcript's expected length before this append, or ''
    ARGV[3] the transcript's length before this append as the caller knows it, or ''
    ARGV[4..] pairs of (message JSON, tool call id or '')

  Output:
    the transcript's length · -1 not ours · -2 not the expected length (nothing written)
]]
-- @include appendMessages
return appendMessages(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV, 4, (#ARGV - 3) / 2)
