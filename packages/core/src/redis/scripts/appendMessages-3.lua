--[[
  Appends several messages in order in one step (a batch's tool results). Its reply is not
  waited for: the run's next write goes right behind it with the length it expects.

  Input:
    KEYS[1] lease
    KEYS[2] messages
    KEYS[3] running

    ARGV[1] token
    ARGV[2] the transcript's expected length before this append, or ''
    ARGV[3..] pairs of (message JSON, tool call id or '')

  An append whose messages already are the transcript's last ones is a resend of one that
  landed (a client that lost the reply with its connection sends an unanswered command again)
  and writes nothing: a tool result carries its call id and time, so no two appends of a run
  are the same.

  Output:
    the transcript's length · -1 not ours · -2 not the expected length (nothing written)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local count = (#ARGV - 2) / 2
local tail = redis.call('LRANGE', KEYS[2], -count, -1)
if #tail == count then
  local resent = true
  for i = 1, count do
    if tail[i] ~= ARGV[1 + 2 * i] then resent = false break end
  end
  if resent then return redis.call('LLEN', KEYS[2]) end
end
if ARGV[2] ~= '' and redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[2]) then return -2 end
local length = 0
for i = 3, #ARGV, 2 do
  if ARGV[i + 1] ~= '' then redis.call('HDEL', KEYS[3], ARGV[i + 1]) end
  length = redis.call('RPUSH', KEYS[2], ARGV[i])
end
return length
