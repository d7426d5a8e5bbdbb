--[[
  Included (`-- @include appendMessages`) by appendMessages-3, sessionWrites-8 and finishRun
  (a run's final answer).

  appendMessages(lease key, messages key, running key, token, expected length or '', known
  length or '', argv, first, count) appends `count` messages in order, their pairs of (message
  JSON, tool call id or '') read from argv[first], argv[first + 1], …; a tool result also
  clears its call's "running here" mark.

  An append whose messages already are the transcript's last ones is a resend of one that
  landed (a client that lost the reply with its connection sends an unanswered command again)
  and writes nothing: a tool result carries its call id and time, so no two appends of a run
  are the same.

  `known` is the transcript's length as the caller knows it (the expected length, when one is
  given, is it): the messages are then pushed at once, and the length RPUSH returns proves it
  (a resend, or a transcript not as the caller knew it, would be longer). Otherwise what was
  pushed is taken back (LTRIM: nothing runs between two commands of a script, so the
  transcript is as it was) and the append goes the long way: a read of the transcript's tail
  for a resend, then the expected length's guard, then the push. So the common append costs
  its fence and its push, and any other sees exactly what it saw before.

  Returns the transcript's length · -1 not ours · -2 not the expected length (nothing written).
]]
-- Pushes `items` at the end of `key` (per 1,000, within Lua's stack); returns the length.
local function pushAll(key, items)
  local length = 0
  for from = 1, #items, 1000 do
    length = redis.call('RPUSH', key, unpack(items, from, math.min(from + 999, #items)))
  end
  return length
end

local function appendMessages(leaseKey, messagesKey, runningKey, token, expected, known, argv, first, count)
  if redis.call('GET', leaseKey) ~= token then return -1 end
  -- One HDEL for the batch's marks and one RPUSH for its messages: nothing runs between the
  -- commands of a script, so this is what a mark cleared and a message pushed in turn make.
  local messages, marks = {}, {}
  for i = first, first + 2 * count - 1, 2 do
    messages[#messages + 1] = argv[i]
    if argv[i + 1] ~= '' then marks[#marks + 1] = argv[i + 1] end
  end
  local clearMarks = function()
    for from = 1, #marks, 1000 do
      redis.call('HDEL', runningKey, unpack(marks, from, math.min(from + 999, #marks)))
    end
  end
  if count == 0 then return redis.call('LLEN', messagesKey) end
  local before = tonumber(expected ~= '' and expected or known)
  if before then
    local length = pushAll(messagesKey, messages)
    if length == before + count then
      clearMarks()
      return length
    end
    redis.call('LTRIM', messagesKey, 0, -(count + 1))
  end
  local tail = redis.call('LRANGE', messagesKey, -count, -1)
  if #tail == count then
    local resent = true
    for i = 1, count do
      if tail[i] ~= messages[i] then resent = false break end
    end
    if resent then return redis.call('LLEN', messagesKey) end
  end
  if expected ~= '' and redis.call('LLEN', messagesKey) ~= tonumber(expected) then return -2 end
  clearMarks()
  return pushAll(messagesKey, messages)
end
