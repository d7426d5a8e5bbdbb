#!lua
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
  when it closes (ARGV[14..], state/eventBatches.ts) are stored first, as publishEvents-1
  would have just before this script, whether or not the rest is done; `agentEnd` is numbered
  after them and is published with them, in one message (publishBatch). The run's final
  answer may come with the close (ARGV[14]): it is appended first, as appendMessages-3 would
  (fenced, guarded by ARGV[10]), and the events queued as only-if-closed ('S', 'L': its
  `messageEnd`, `turnEnd`) are stored only when the run closes. Ids
  arrive as keys and as JSON built by the caller (decoded once, to forget the inputs).
  Called with a variable number of keys (the first argument is their count).

  Input:
    KEYS[1] lease
    KEYS[2] run
    KEYS[3] runInputs
    KEYS[4] inputs
    KEYS[5] events stream
    KEYS[6] messages
    KEYS[7] pendingInputs
    KEYS[8] pendingFollowUps
    KEYS[9] running
    KEYS[10] inputBudgets
    KEYS[11] usage (the session's usage summary)
    KEYS[12..] the response key of each input the run answers

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
    ARGV[13] the stream's newest entry as the caller guesses it, `<seq>:<total>`, or '' (read
      it; see appendEvent.lib.lua)
    ARGV[14] the final answer's message JSON, appended first, or '' (none)
    ARGV[15] the transcript's length before that answer as the caller knows it, or ''
    ARGV[16..] the run's queued events: pairs of kind ('s' stored, 'l' live; 'S', 'L' only
      when the run closes), event JSON (without seq), as publishEvents-1 takes them

  Output:
    1 closed (work waits: the lease is kept) · 2 closed and the lease released (idle)
    · -1 not ours · -2 not the expected length (nothing changed)
]]
-- @include appendEvent
-- @include appendMessages
-- The queued events, in order, numbered from `events` (publishEvents-1's loop); the
-- only-if-closed ones when `closing`.
local function storeQueued(events, closing)
  for i = 16, #ARGV, 2 do
    local kind = ARGV[i]
    if kind == 's' or (closing and kind == 'S') then
      appendNextEvent(events, KEYS[5], ARGV[5], ARGV[i + 1], ARGV[7], ARGV[11])
    elseif kind == 'l' or (closing and kind == 'L') then
      publishLive(events, ARGV[5], ARGV[i + 1], KEYS[5])
    end
  end
end
local refused = nil
if ARGV[14] ~= '' then
  local length = appendMessages(KEYS[1], KEYS[6], KEYS[9], ARGV[1], ARGV[10], ARGV[15], { ARGV[14], '' }, 1, 1)
  if length < 0 then refused = length end
elseif redis.call('GET', KEYS[1]) ~= ARGV[1] then
  refused = -1
elseif ARGV[10] ~= '' and redis.call('LLEN', KEYS[6]) ~= tonumber(ARGV[10]) then
  refused = -2
end
if refused then
  if #ARGV >= 16 then
    local events = openBatch(KEYS[5], ARGV[13])
    storeQueued(events, false)
    publishBatch(events, ARGV[5])
  end
  return refused
end
local events = openBatch(KEYS[5], ARGV[13])
storeQueued(events, true)
for i = 12, #KEYS do redis.call('SET', KEYS[i], ARGV[2], 'EX', ARGV[3]) end
if ARGV[12] ~= '' then redis.call('SET', KEYS[11], ARGV[12], 'EX', ARGV[8]) end
-- The inputs the run answers are the caller's (ARGV[9], the ids of KEYS[12..]): the holder
-- tracked them from startRun and every drain, as runInputs holds them, and their answers are
-- stored above. One HDEL per hash (per 1,000 ids, within Lua's stack).
local ids = cjson.decode(ARGV[9])
for from = 1, #ids, 1000 do
  local last = math.min(from + 999, #ids)
  redis.call('HDEL', KEYS[4], unpack(ids, from, last))
  redis.call('HDEL', KEYS[10], unpack(ids, from, last))
end
appendNextEvent(events, KEYS[5], ARGV[5], ARGV[6], ARGV[7], ARGV[11])
publishBatch(events, ARGV[5])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('PUBLISH', ARGV[4], ARGV[9])
for i = 5, 6 do redis.call('EXPIRE', KEYS[i], ARGV[8]) end
if ARGV[12] == '' then redis.call('EXPIRE', KEYS[11], ARGV[8]) end
-- The keys that hold waiting work: most runs leave none of them, and then none needs an expiry.
if redis.call('EXISTS', KEYS[4], KEYS[7], KEYS[8], KEYS[9], KEYS[10]) == 0 then
  redis.call('DEL', KEYS[1])
  return 2
end
for _, i in ipairs({4, 7, 8, 9, 10}) do redis.call('EXPIRE', KEYS[i], ARGV[8]) end
return 1
