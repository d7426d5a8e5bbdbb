--[[
  Included (`-- @include appendMessages`) by appendMessages-3 and sessionWrites-9.

  appendMessages(lease key, messages key, running key, token, expected length or '', argv,
  first, count) appends `count` messages in order, their pairs of (message JSON, tool call id
  or '') read from argv[first], argv[first + 1], …; a tool result also clears its call's
  "running here" mark.

  An append whose messages already are the transcript's last ones is a resend of one that
  landed (a client that lost the reply with its connection sends an unanswered command again)
  and writes nothing: a tool result carries its call id and time, so no two appends of a run
  are the same.

  Returns the transcript's length · -1 not ours · -2 not the expected length (nothing written).
]]
local function appendMessages(leaseKey, messagesKey, runningKey, token, expected, argv, first, count)
  if redis.call('GET', leaseKey) ~= token then return -1 end
  local tail = redis.call('LRANGE', messagesKey, -count, -1)
  if #tail == count then
    local resent = true
    for i = 1, count do
      if tail[i] ~= argv[first + 2 * (i - 1)] then resent = false break end
    end
    if resent then return redis.call('LLEN', messagesKey) end
  end
  if expected ~= '' and redis.call('LLEN', messagesKey) ~= tonumber(expected) then return -2 end
  local length = 0
  for i = first, first + 2 * count - 1, 2 do
    if argv[i + 1] ~= '' then redis.call('HDEL', runningKey, argv[i + 1]) end
    length = redis.call('RPUSH', messagesKey, argv[i])
  end
  return length
end
