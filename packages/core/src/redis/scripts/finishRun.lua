--[[
  Closes a run in one step: stores its response under every input id it answers, forgets
  those inputs (and their budgets), publishes the run's `agentEnd` (numbered) on the bus, closes the run,
  announces the ids on the responses channel, stores the session's usage summary (what its
  whole transcript used, so a list of sessions reads no transcript), and sets the session's
  idle expiry. A watcher
  therefore sees `agentEnd` exactly when the response is stored, even if the coordinator dies
  here. When nothing waits (no input, follow-up, budget or running mark is left), it also
  releases the lease, as releaseLeaseIfIdle-4 would have after the holder found no next run:
  the session is idle, in the same step that closed its run. The run's events still queued
  when it closes (ARGV[13..], state/eventBatches.ts) are stored first, as publishEvents-2
  would have just before this script, whether or not the rest is done; `agentEnd` is numbered
  after them and is published with them, in one message (publishBatch). Ids
  are never parsed here: they arrive as keys and as JSON built by the caller.
  Called with a variable number of keys (the first argument is their count).

  Input:
    KEYS[1] lease
    KEYS[2] run
    KEYS[3] runInputs
    KEYS[4] inputs
    KEYS[5] seq (not written: see appendEvent.lib.lua)
    KEYS[6] events stream
    KEYS[7] messages
    KEYS[8] pendingInputs
    KEYS[9] pendingFollowUps
    KEYS[10] running
    KEYS[11] inputBudgets
    KEYS[12] usage (the session's usage summary)
    KEYS[13..] the response key of each input the run answers

    ARGV[1] token
    ARGV[2] response JSON
    ARGV[3] response ttl s
    ARGV[4] responses channel
    ARGV[5] events channel
    ARGV[6] agentEnd event JSON (without seq)
    ARGV[7] stream max length
    ARGV[8] session ttl s
    ARGV[9] JSON array of the input ids
    ARGV[10] the transcript's expected length, or '' (see appendMessages-3)
    ARGV[11] stream max bytes (see appendEvent.lib.lua)
    ARGV[12] the session's usage summary JSON, or '' (left as it is)
    ARGV[13..] the run's queued events: pairs of kind ('s' stored, 'l' live), event JSON
      (without seq), as publishEvents-2 takes them

  Output:
    1 closed (work waits: the lease is kept) · 2 closed and the lease released (idle)
    · -1 not ours · -2 not the expected length (nothing changed)
]]
-- @include appendEvent
-- The queued events, in order, numbered from `events` (publishEvents-2's loop).
local function storeQueued(events)
  for i = 13, #ARGV, 2 do
    if ARGV[i] == 's' then
      appendNextEvent(events, KEYS[6], ARGV[5], ARGV[i + 1], ARGV[7], ARGV[11])
    else
      publishLive(events, ARGV[5], ARGV[i + 1])
    end
  end
end
local refused = nil
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  refused = -1
elseif ARGV[10] ~= '' and redis.call('LLEN', KEYS[7]) ~= tonumber(ARGV[10]) then
  refused = -2
end
if refused then
  if #ARGV >= 13 then
    local events = openBatch(KEYS[6])
    storeQueued(events)
    publishBatch(events, ARGV[5])
  end
  return refused
end
local events = openBatch(KEYS[6])
storeQueued(events)
for i = 13, #KEYS do redis.call('SET', KEYS[i], ARGV[2], 'EX', ARGV[3]) end
if ARGV[12] ~= '' then redis.call('SET', KEYS[12], ARGV[12], 'EX', ARGV[8]) end
local ids = redis.call('LRANGE', KEYS[3], 0, -1)
for _, id in ipairs(ids) do
  redis.call('HDEL', KEYS[4], id)
  redis.call('HDEL', KEYS[11], id)
end
appendNextEvent(events, KEYS[6], ARGV[5], ARGV[6], ARGV[7], ARGV[11])
publishBatch(events, ARGV[5])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('PUBLISH', ARGV[4], ARGV[9])
for i = 6, 7 do redis.call('EXPIRE', KEYS[i], ARGV[8]) end
if ARGV[12] == '' then redis.call('EXPIRE', KEYS[12], ARGV[8]) end
-- The keys that hold waiting work: most runs leave none of them, and then none needs an expiry.
if redis.call('EXISTS', KEYS[4], KEYS[8], KEYS[9], KEYS[10], KEYS[11]) == 0 then
  redis.call('DEL', KEYS[1])
  return 2
end
for _, i in ipairs({4, 8, 9, 10, 11}) do redis.call('EXPIRE', KEYS[i], ARGV[8]) end
return 1
