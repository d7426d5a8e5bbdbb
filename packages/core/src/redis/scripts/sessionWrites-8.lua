#!lua
--[[
  Runs a batch of one session's writes, in order, in one step: its events, as publishEvents-1
  does (published at the end, in one message), its transcript appends, as appendMessages-3
  does, and its drains of waiting inputs, as drainInputs-6 does. The writes of a batch are the
  ones a coordinator sent one after another on its connection (state/eventBatches.ts): a
  batch's `toolExecEnd` events, the append of its results, the next events of the run and the
  next turn's drain. Each append and drain is fenced by its own token and guard; one refused
  changes nothing of the others, so every write sees exactly what it would have seen as a
  script call of its own. A drain right behind an append of the same token that landed reads
  neither the lease nor the transcript's length again: that append proved both.

  Input:
    KEYS[1] events stream
    KEYS[2] lease
    KEYS[3] messages
    KEYS[4] running
    KEYS[5] runInputs
    KEYS[6] inputs
    KEYS[7] pendingInputs
    KEYS[8] run

    ARGV[1] events channel
    ARGV[2] stream max length
    ARGV[3] stream max bytes
    ARGV[4] the stream's newest entry as the caller guesses it, `<seq>:<total>`, or '' (read
      it when the batch holds events; see appendEvent.lib.lua)
    ARGV[5..] writes, each one of:
      's', event JSON (without seq)          a stored event
      'l', event JSON (without seq)          a live-only event
      'a', token, expected length or '', known length or '', n, then n pairs of (message JSON,
        tool call id or ''): an append (appendMessages.lib.lua)
      'd', token, expected length or '', the open run's order or ''

  Output:
    { the number of the last stored event (the latest number when the batch stored none but
      published a live one; 0 when it holds no event: the stream is not read then), the
      stream's byte total after the batch (0 when it holds no event), then each append's and drain's reply in order: an append's the transcript's length ·
      -1 not ours · -2 not the expected length; a drain's as drainInputs-6 returns it }
]]
-- @include appendEvent
-- @include appendMessages
-- @include drainInputs
-- The size of the write at ARGV[i]: an event is two arguments, an append five and its pairs,
-- a drain four.
local function writeSize(i)
  if ARGV[i] == 'a' then return 5 + 2 * tonumber(ARGV[i + 4]) end
  if ARGV[i] == 'd' then return 4 end
  return 2
end
local stored, live = 0, 0
local i = 5
while i <= #ARGV do
  if ARGV[i] == 's' then stored = stored + 1 end
  if ARGV[i] == 'l' then live = live + 1 end
  i = i + writeSize(i)
end
-- Appends alone (a batch's results) number nothing: no read of the stream's newest entry.
local events = { seq = 0, total = 0 }
if stored + live > 0 then events = openBatch(KEYS[1], ARGV[4]) end
local replies = {}
-- What the last append proved: its token holds the lease, and the transcript's length.
local known = nil
i = 5
while i <= #ARGV do
  local kind = ARGV[i]
  if kind == 's' then
    appendNextEvent(events, KEYS[1], ARGV[1], ARGV[i + 1], ARGV[2], ARGV[3])
  elseif kind == 'l' then
    publishLive(events, ARGV[1], ARGV[i + 1], KEYS[1])
  elseif kind == 'a' then
    local length = appendMessages(KEYS[2], KEYS[3], KEYS[4], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV, i + 5, tonumber(ARGV[i + 4]))
    known = length >= 0 and { token = ARGV[i + 1], length = length } or nil
    replies[#replies + 1] = length
  else
    local drained = drainInputs(KEYS[2], KEYS[5], KEYS[6], KEYS[7], KEYS[3], KEYS[8], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], known)
    if known and drained[1] == 1 then known.length = known.length + (#drained - 1) / 2 end
    replies[#replies + 1] = drained
  end
  i = i + writeSize(i)
end
publishBatch(events, ARGV[1])
table.insert(replies, 1, events.total)
table.insert(replies, 1, events.seq)
return replies
