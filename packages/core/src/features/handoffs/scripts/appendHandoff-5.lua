#!lua
--[[
  Appends a batch's tool results that hand the session over to another agent, and in the same
  step makes that agent the session's (its agent key) and publishes the `agentHandoff` event:
  a handoff is stored whole or not at all, so a holder killed around it leaves either the
  batch unanswered (its successor runs it again as the old agent) or the handoff done (its
  successor goes on as the new one).

  Input:
    KEYS[1] lease
    KEYS[2] messages
    KEYS[3] running
    KEYS[4] session agent
    KEYS[5] events stream

    ARGV[1] token
    ARGV[2] the transcript's expected length before this append, or ''
    ARGV[3] the agent handed over to
    ARGV[4] the session agent's time to live, in seconds
    ARGV[5] events channel
    ARGV[6] agentHandoff event JSON (without seq)
    ARGV[7] stream max length
    ARGV[8] stream max bytes
    ARGV[9..] pairs of (message JSON, tool call id or '')

  An append whose messages already are the transcript's last ones is a resend of one that
  landed (see appendMessages-3.lua) and writes nothing: the handoff landed with it.

  Output:
    the transcript's length · -1 not ours · -2 not the expected length (nothing written)
]]
-- @include appendEvent
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local count = (#ARGV - 8) / 2
local tail = redis.call('LRANGE', KEYS[2], -count, -1)
if #tail == count then
  local resent = true
  for i = 1, count do
    if tail[i] ~= ARGV[7 + 2 * i] then resent = false break end
  end
  if resent then return redis.call('LLEN', KEYS[2]) end
end
if ARGV[2] ~= '' and redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[2]) then return -2 end
local length = 0
for i = 9, #ARGV, 2 do
  if ARGV[i + 1] ~= '' then redis.call('HDEL', KEYS[3], ARGV[i + 1]) end
  length = redis.call('RPUSH', KEYS[2], ARGV[i])
end
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[4])
appendEvent(KEYS[5], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
return length
